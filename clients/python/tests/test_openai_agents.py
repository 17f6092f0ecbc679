"""GrpcSession against the OpenAI Agents SDK's own SQLiteSession, side by side.

The SDK package ships no session test suite, so every case runs the same
operations on a SQLiteSession and on a GrpcSession over the real server and
requires the same answers; then a real Runner (with the SDK's ScriptedModel)
runs the same turns over each.
"""

from __future__ import annotations

import asyncio
import random
import uuid
from typing import Any

import pytest
from agents import Agent, Runner, SQLiteSession, function_tool, set_tracing_disabled
from agents.memory.session import Session
from agents.memory.session_settings import SessionSettings
from agents.testing import ScriptedModel, assistant_message, function_call
from cli_runners import Clis, assert_all_read_the_same, read_everywhere

from sessionstore_client import SessionStoreClient
from sessionstore_client.openai_agents import AUTHOR, GrpcSession

USER = "u1"

# Offline: no trace export to OpenAI.
set_tracing_disabled(True)


@pytest.fixture
async def client(server: str):
    async with SessionStoreClient(server) as c:
        yield c


def pair(client: SessionStoreClient, app_name: str, **settings: Any) -> tuple[SQLiteSession, GrpcSession]:
    session_id = f"conv-{uuid.uuid4()}"
    return (
        SQLiteSession(session_id, **settings),
        GrpcSession(session_id, client=client, app_name=app_name, user_id=USER, **settings),
    )


def message(i: int, role: str = "user") -> dict[str, Any]:
    return {"role": role, "content": f"message {i}"}


RICH_ITEMS: list[dict[str, Any]] = [
    {
        "role": "user",
        "content": [{"type": "input_text", "text": "Grüße 🚀"}, {"type": "input_image", "detail": "auto"}],
    },
    {
        "id": "fc_1",
        "type": "function_call",
        "call_id": "call_1",
        "name": "lookup",
        "arguments": '{"n": [1, 2]}',
        "status": "completed",
    },
    {"type": "function_call_output", "call_id": "call_1", "output": "ok"},
    {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "Done.", "annotations": [], "logprobs": []}],
    },
    {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": None},
]


async def both(sessions: tuple[Session, Session], op: str, *args: Any) -> Any:
    reference, ours = sessions
    want = await getattr(reference, op)(*args)
    got = await getattr(ours, op)(*args)
    assert got == want, f"{op}{args}: SQLiteSession gave {want!r}, GrpcSession gave {got!r}"
    return got


async def test_the_sdk_session_protocol_is_met(client: SessionStoreClient, app_name: str):
    _, ours = pair(client, app_name)
    assert isinstance(ours, Session)


async def test_every_operation_agrees_with_sqlite_session(client: SessionStoreClient, app_name: str):
    sessions = pair(client, app_name)
    assert await both(sessions, "get_items") == []
    assert await both(sessions, "pop_item") is None
    await both(sessions, "clear_session")
    await both(sessions, "add_items", [])
    await both(sessions, "add_items", RICH_ITEMS)
    await both(sessions, "add_items", [message(1), message(2, "assistant")])
    for limit in (None, 0, 1, 2, 3, 6, 7, 100, -1):
        await both(sessions, "get_items", limit)
    assert await both(sessions, "pop_item") == message(2, "assistant")
    await both(sessions, "get_items", 2)
    await both(sessions, "add_items", [message(3)])
    await both(sessions, "get_items")
    for _ in range(8):
        await both(sessions, "pop_item")
    await both(sessions, "get_items")
    await both(sessions, "add_items", [message(4), message(5)])
    await both(sessions, "clear_session")
    assert await both(sessions, "get_items") == []
    await both(sessions, "add_items", [message(6)])
    assert await both(sessions, "get_items") == [message(6)]


async def test_random_operations_agree_with_sqlite_session(client: SessionStoreClient, app_name: str):
    rng = random.Random(20261201)
    sessions = pair(client, app_name)
    n = 0
    for _ in range(120):
        roll = rng.random()
        if roll < 0.4:
            batch = [message(n + i, rng.choice(["user", "assistant"])) for i in range(rng.randint(0, 4))]
            n += len(batch)
            await both(sessions, "add_items", batch)
        elif roll < 0.7:
            await both(sessions, "pop_item")
        elif roll < 0.75:
            await both(sessions, "clear_session")
        else:
            await both(sessions, "get_items", rng.choice([None, 0, 1, 2, 5, 50, -1]))
    await both(sessions, "get_items")


async def test_session_settings_limit_is_the_default_window(client: SessionStoreClient, app_name: str):
    sessions = pair(client, app_name, session_settings=SessionSettings(limit=2))
    await both(sessions, "add_items", [message(i) for i in range(5)])
    assert await both(sessions, "get_items") == [message(3), message(4)]
    assert len(await both(sessions, "get_items", 4)) == 4


async def test_the_log_stays_append_only(client: SessionStoreClient, app_name: str):
    _, ours = pair(client, app_name)
    await ours.add_items([message(1), message(2)])
    assert await ours.pop_item() == message(2)
    await ours.clear_session()
    await ours.add_items([message(3)])
    stored = (await client.get_session(app_name=app_name, user_id=USER, session_id=ours.session_id)).session
    assert [e.author for e in stored.events] == [AUTHOR] * 4
    ops = [sorted(e.extra.fields["openai_agents"].struct_value.fields) for e in stored.events]
    assert ops == [["add"], ["pop"], ["clear"], ["add"]]
    assert stored.revision == 4
    assert await ours.get_items() == [message(3)]


async def test_other_events_of_the_session_are_not_items(client: SessionStoreClient, app_name: str):
    _, ours = pair(client, app_name)
    await ours.add_items([message(1)])
    await client.append_event(
        app_name=app_name, user_id=USER, session_id=ours.session_id, event={"author": "someone_else"}
    )
    assert await ours.get_items() == [message(1)]
    assert await ours.pop_item() == message(1)
    assert await ours.pop_item() is None


async def test_concurrent_pops_each_take_a_different_item(client: SessionStoreClient, app_name: str):
    _, ours = pair(client, app_name)
    await ours.add_items([message(i) for i in range(6)])
    others = [GrpcSession(ours.session_id, client=client, app_name=app_name, user_id=USER) for _ in range(6)]
    popped = await asyncio.gather(*(s.pop_item() for s in others))
    assert sorted(p["content"] for p in popped) == sorted(message(i)["content"] for i in range(6))
    assert await ours.get_items() == []


async def test_a_long_history_reads_its_window_from_the_tail(client: SessionStoreClient, app_name: str):
    _, ours = pair(client, app_name)
    for i in range(30):
        await ours.add_items([message(i)])
    assert await ours.get_items(3) == [message(27), message(28), message(29)]
    assert len(await ours.get_items()) == 30


@function_tool
def lookup_order(order_id: str) -> str:
    """Looks up an order."""
    return f"order {order_id}: shipped"


def scripted_turns() -> ScriptedModel:
    return ScriptedModel(
        [
            [function_call("lookup_order", {"order_id": "8842"}, call_id="call_1", item_id="fc_1")],
            [assistant_message("Your order 8842 has shipped.", item_id="msg_1")],
            [assistant_message("You asked about order 8842.", item_id="msg_2")],
        ]
    )


async def run_turns(session: Session) -> tuple[list[str], ScriptedModel]:
    model = scripted_turns()
    agent = Agent(name="support", instructions="Help the user.", model=model, tools=[lookup_order])
    first = await Runner.run(agent, "Where is my order 8842?", session=session)
    second = await Runner.run(agent, "What did I ask about?", session=session)
    return [str(first.final_output), str(second.final_output)], model


async def test_a_real_runner_stores_the_same_history_as_with_sqlite_session(
    client: SessionStoreClient, clis: Clis, app_name: str
):
    reference, ours = pair(client, app_name)
    want_outputs, want_model = await run_turns(reference)
    got_outputs, got_model = await run_turns(ours)
    assert got_outputs == want_outputs == ["Your order 8842 has shipped.", "You asked about order 8842."]
    history = await ours.get_items()
    assert history == await reference.get_items()
    assert [i.get("type", "message") for i in history] == [
        "message",
        "function_call",
        "function_call_output",
        "message",
        "message",
        "message",
    ]
    # The second turn's model call saw the first turn, read back from the server.
    assert len(got_model.calls) == 3
    assert got_model.calls[2].input == want_model.calls[2].input
    # Python, TypeScript and Go read the session these writes made the same.
    read = assert_all_read_the_same(await read_everywhere(client, clis, app_name, USER, ours.session_id)).session
    assert read.events and all(e.author == AUTHOR for e in read.events)
