"""A real ADK Runner over GrpcSessionService, with a scripted model instead of an LLM."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

from cli_runners import Clis, assert_all_read_the_same, read_everywhere
from google.adk.agents import LlmAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.tools import ToolContext
from google.genai import types

from sessionstore_client.adk import GrpcSessionService


class ScriptedModel(BaseLlm):
    """Answers with canned responses, in order: deterministic and offline."""

    model: str = "scripted"
    script: list[LlmResponse]
    requests: list[LlmRequest] = []

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.requests.append(llm_request)
        yield self.script[len(self.requests) - 1]


def remember_color(color: str, tool_context: ToolContext) -> dict[str, Any]:
    """Remembers the user's favorite color."""
    tool_context.state["user:favorite_color"] = color
    tool_context.state["temp:scratch"] = f"saw {color}"
    return {"status": "saved"}


def model_says(*parts: types.Part) -> LlmResponse:
    return LlmResponse(content=types.Content(role="model", parts=list(parts)))


async def test_two_turns_of_a_runner(service: GrpcSessionService, clis: Clis, app_name: str):
    model = ScriptedModel(
        script=[
            model_says(
                types.Part(function_call=types.FunctionCall(id="fc-1", name="remember_color", args={"color": "teal"}))
            ),
            model_says(types.Part(text="Saved: teal.")),
            model_says(types.Part(text="Your favorite color is teal.")),
        ]
    )
    temp_seen: list[object] = []

    def watch_temp(callback_context: CallbackContext, llm_request: LlmRequest) -> None:
        temp_seen.append(callback_context.state.get("temp:scratch"))

    agent = LlmAgent(
        name="assistant",
        model=model,
        instruction="Help the user.",
        tools=[remember_color],
        output_key="last_reply",
        before_model_callback=watch_temp,
    )
    runner = Runner(app_name=app_name, agent=agent, session_service=service)
    session = await service.create_session(app_name=app_name, user_id="u1")

    async def turn(text: str) -> list[str]:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        return [e.author async for e in runner.run_async(user_id="u1", session_id=session.id, new_message=message)]

    assert await turn("My favorite color is teal.") == ["assistant", "assistant", "assistant"]
    assert await turn("What is my favorite color?") == ["assistant"]
    await runner.close()

    # temp: was there for the model call after the tool in the same invocation,
    # and gone in the next invocation, which reloads the session from storage.
    assert temp_seen == [None, "saw teal", None]

    stored = await service.get_session(app_name=app_name, user_id="u1", session_id=session.id)
    assert stored is not None
    assert stored.state == {"user:favorite_color": "teal", "last_reply": "Your favorite color is teal."}
    assert await service.get_user_state(app_name=app_name, user_id="u1") == {"favorite_color": "teal"}
    assert all(not k.startswith("temp:") for e in stored.events for k in e.actions.state_delta)

    summary = [
        (
            e.author,
            e.content.parts[0].text or e.content.parts[0].function_call or e.content.parts[0].function_response,
        )
        for e in stored.events
    ]
    call, response = summary[1][1], summary[2][1]
    assert isinstance(call, types.FunctionCall) and (call.id, call.name, call.args) == (
        "fc-1",
        "remember_color",
        {"color": "teal"},
    )
    assert isinstance(response, types.FunctionResponse) and response.response == {"status": "saved"}
    assert [(author, item if isinstance(item, str) else None) for author, item in summary] == [
        ("user", "My favorite color is teal."),
        ("assistant", None),
        ("assistant", None),
        ("assistant", "Saved: teal."),
        ("user", "What is my favorite color?"),
        ("assistant", "Your favorite color is teal."),
    ]
    assert [e.timestamp for e in stored.events] == sorted(e.timestamp for e in stored.events)
    assert stored.events[2].actions.state_delta == {"user:favorite_color": "teal"}

    # The second turn's model saw the whole first turn, read back from the server.
    history = [
        c.parts[0].text or c.parts[0].function_call or c.parts[0].function_response for c in model.requests[2].contents
    ]
    assert len(history) == 5 and history[-1] == "What is my favorite color?"

    # The Python, TypeScript and Go CLIs read the very session the Python
    # client reads, down to the last field.
    reads = await read_everywhere(service.client, clis, app_name, "u1", session.id)
    read = assert_all_read_the_same(reads).session
    assert read.revision == 6 and [e.id for e in read.events] == [e.id for e in stored.events]

    # Another session of the same user starts with the user: state.
    other = await service.create_session(app_name=app_name, user_id="u1")
    assert other.state == {"user:favorite_color": "teal"}


async def test_the_sync_runner_api_works_from_its_own_event_loop(service: GrpcSessionService, app_name: str):
    # Runner.run() drives run_async on a new event loop in a worker thread, so
    # the service must not tie itself to the loop it was first used on.
    agent = LlmAgent(name="assistant", model=ScriptedModel(script=[model_says(types.Part(text="hello"))]))
    runner = Runner(app_name=app_name, agent=agent, session_service=service)
    session = await service.create_session(app_name=app_name, user_id="u1")
    message = types.Content(role="user", parts=[types.Part(text="hi")])

    events = await asyncio.to_thread(lambda: list(runner.run(user_id="u1", session_id=session.id, new_message=message)))

    assert [e.content.parts[0].text for e in events] == ["hello"]
    stored = await service.get_session(app_name=app_name, user_id="u1", session_id=session.id)
    assert stored is not None and [e.content.parts[0].text for e in stored.events] == ["hi", "hello"]
