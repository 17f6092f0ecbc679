"""The server's RewindSession next to ADK's own Runner.rewind_async, on the
same history: ADK reads our event as a rewind and builds the same context from
it, and our rewind keeps what ADK's loses (adk-python #4933: state set when
the session was created). ForkSession makes the two identical copies."""

from __future__ import annotations

from typing import Any

from google.adk.agents import LlmAgent
from google.adk.runners import Runner
from google.adk.tools import ToolContext
from google.genai import types
from test_runner_e2e import ScriptedModel, model_says

from sessionstore_client.adk import GrpcSessionService

USER = "u1"


def upgrade(plan: str, tool_context: ToolContext) -> dict[str, Any]:
    """Changes the user's plan."""
    tool_context.state["plan"] = plan
    tool_context.state["upgraded_by"] = "tool"
    tool_context.state["user:seen_upgrade"] = True
    return {"status": "ok"}


def texts(model: ScriptedModel, call: int) -> list[str]:
    return [
        p.text or (p.function_call and p.function_call.name) or (p.function_response and p.function_response.name) or ""
        for c in model.requests[call].contents
        for p in c.parts or []
    ]


async def say(runner: Runner, session_id: str, text: str) -> str:
    message = types.Content(role="user", parts=[types.Part(text=text)])
    invocation = ""
    async for event in runner.run_async(user_id=USER, session_id=session_id, new_message=message):
        invocation = event.invocation_id
    return invocation


async def test_our_rewind_agrees_with_adks_and_keeps_create_time_state(service: GrpcSessionService, app_name: str):
    script = [
        model_says(types.Part(text="Hello.")),
        model_says(types.Part(function_call=types.FunctionCall(id="fc-1", name="upgrade", args={"plan": "pro"}))),
        model_says(types.Part(text="Upgraded.")),
        model_says(types.Part(text="Anything else?")),
    ]
    writer = ScriptedModel(script=script)
    agent = LlmAgent(name="assistant", model=writer, tools=[upgrade], output_key="last_reply")
    runner = Runner(app_name=app_name, agent=agent, session_service=service)
    created = await service.create_session(
        app_name=app_name, user_id=USER, state={"plan": "basic", "locale": "de-CH", "user:tier": "gold"}
    )
    await say(runner, created.id, "Hi")
    upgrade_invocation = await say(runner, created.id, "Upgrade me to pro")
    await say(runner, created.id, "Thanks")

    # Two identical copies of the whole history.
    copies = []
    for name in ("by-adk", "by-server"):
        forked = await service.client.fork_session(
            app_name=app_name, user_id=USER, session_id=created.id, new_session_id=f"{created.id}-{name}"
        )
        assert forked.session.forked_from.session_id == created.id and forked.session.forked_from.seq == 8
        copies.append(forked.session.id)
    by_adk, by_server = copies

    await runner.rewind_async(user_id=USER, session_id=by_adk, rewind_before_invocation_id=upgrade_invocation)
    ours = await service.client.rewind_session(
        app_name=app_name, user_id=USER, session_id=by_server, rewind_before_invocation_id=upgrade_invocation
    )
    assert ours.revision == 9

    adk_session = await service.get_session(app_name=app_name, user_id=USER, session_id=by_adk)
    our_session = await service.get_session(app_name=app_name, user_id=USER, session_id=by_server)
    assert adk_session is not None and our_session is not None
    adk_event, our_event = adk_session.events[-1], our_session.events[-1]

    # The same shape of event...
    assert (our_event.author, our_event.actions.rewind_before_invocation_id) == ("user", upgrade_invocation)
    assert (adk_event.author, adk_event.actions.rewind_before_invocation_id) == ("user", upgrade_invocation)
    assert our_event.invocation_id.startswith("e-") and our_event.invocation_id != adk_event.invocation_id
    # ...and the same undo, except that ADK loses every key set when the
    # session was created (#4933), changed later or not; ours keeps them.
    assert adk_event.actions.state_delta == {"plan": None, "locale": None, "upgraded_by": None, "last_reply": "Hello."}
    assert our_event.actions.state_delta == {"plan": "basic", "upgraded_by": None, "last_reply": "Hello."}
    assert our_session.state == {
        "plan": "basic",
        "locale": "de-CH",
        "upgraded_by": None,
        "last_reply": "Hello.",
        "user:tier": "gold",
        "user:seen_upgrade": True,
    }
    assert adk_session.state == {**our_session.state, "plan": None, "locale": None}

    # ADK builds the next model call from either history in the same way: the
    # undone invocations are gone from the context.
    reader = ScriptedModel(script=[model_says(types.Part(text="a")), model_says(types.Part(text="b"))])
    next_runner = Runner(
        app_name=app_name, agent=LlmAgent(name="assistant", model=reader, tools=[upgrade]), session_service=service
    )
    await say(next_runner, by_adk, "Where were we?")
    await say(next_runner, by_server, "Where were we?")
    assert texts(reader, 0) == texts(reader, 1) == ["Hi", "Hello.", "Where were we?"]
