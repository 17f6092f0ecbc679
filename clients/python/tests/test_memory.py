"""GrpcMemoryService against the real server: ADK's memory semantics, and a Runner that remembers across sessions."""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator, AsyncIterator

import pytest
from google.adk.agents import LlmAgent
from google.adk.events.event import Event
from google.adk.memory import _utils
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.tools import load_memory, preload_memory
from google.genai import types

from sessionstore_client.adk import GrpcMemoryService, GrpcSessionService


@pytest.fixture
async def memory(server: str) -> AsyncIterator[GrpcMemoryService]:
    async with GrpcMemoryService(server) as svc:
        yield svc


def user_says(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def texts(response) -> list[str]:
    return [p.text for m in response.memories for p in (m.content.parts or []) if p.text]


async def test_a_stored_session_becomes_memories_once(
    service: GrpcSessionService, memory: GrpcMemoryService, app_name: str
):
    session = await service.create_session(app_name=app_name, user_id="u1")
    await service.append_event(session, Event(author="user", invocation_id="i1", content=user_says("I live in Porto")))
    await service.append_event(session, Event(author="agent", invocation_id="i1", content=None))
    reply = types.Content(role="model", parts=[types.Part(text="Porto is lovely")])
    await service.append_event(session, Event(author="agent", invocation_id="i1", content=reply))
    await memory.add_session_to_memory(session)
    await memory.add_session_to_memory(session)  # again: nothing new
    found = await memory.search_memory(app_name=app_name, user_id="u1", query="Where do I live? Porto?")
    assert sorted(texts(found)) == ["I live in Porto", "Porto is lovely"]
    entry = next(m for m in found.memories if m.author == "user")
    assert entry.content.role == "user"
    stored = session.events[0]
    assert entry.timestamp == _utils.format_timestamp(stored.timestamp)
    assert entry.custom_metadata == {"session_id": session.id, "event_id": stored.id}
    assert entry.id

    await service.append_event(session, Event(author="user", invocation_id="i2", content=user_says("Porto has trams")))
    await memory.add_session_to_memory(session)
    assert len((await memory.search_memory(app_name=app_name, user_id="u1", query="porto")).memories) == 3


async def test_a_session_kept_elsewhere_is_sent_with_its_events(memory: GrpcMemoryService, app_name: str):
    elsewhere = InMemorySessionService()
    session = await elsewhere.create_session(app_name=app_name, user_id="u1")
    event = Event(author="user", invocation_id="i1", content=user_says("my bike is green"))
    await elsewhere.append_event(session, event)
    await memory.add_session_to_memory(session)
    await memory.add_session_to_memory(session)
    found = await memory.search_memory(app_name=app_name, user_id="u1", query="bike")
    assert texts(found) == ["my bike is green"]
    assert found.memories[0].custom_metadata["session_id"] == session.id


async def test_events_explicit_entries_and_deletion(memory: GrpcMemoryService, app_name: str):
    events = [
        Event(id="e1", author="user", invocation_id="i", content=user_says("the spare key is under the mat")),
        Event(author="user", invocation_id="i", timestamp=1_700_000_000.25, content=user_says("keys go in the bowl")),
    ]
    await memory.add_events_to_memory(app_name=app_name, user_id="u1", events=events, session_id="s-x")
    await memory.add_events_to_memory(app_name=app_name, user_id="u1", events=events, session_id="s-x")
    await memory.add_memory(
        app_name=app_name,
        user_id="u1",
        memories=[
            MemoryEntry(
                content=types.Content(parts=[types.Part(text="the car key is in the drawer")]),
                author="user",
                timestamp="2026-05-01T10:00:00",
                custom_metadata={"kind": "fact"},
            )
        ],
        custom_metadata={"source": "test"},
    )
    found = await memory.search_memory(app_name=app_name, user_id="u1", query="key keys")
    assert len(found.memories) == 3
    explicit = next(m for m in found.memories if m.custom_metadata.get("kind") == "fact")
    assert explicit.timestamp == "2026-05-01T10:00:00"
    assert explicit.custom_metadata == {"kind": "fact", "source": "test"}
    assert explicit.author == "user"

    await memory.delete_memory(app_name=app_name, user_id="u1", memory_id=explicit.id)
    await memory.delete_memory(app_name=app_name, user_id="u1", memory_id=None)
    assert len((await memory.search_memory(app_name=app_name, user_id="u1", query="key keys")).memories) == 2
    assert await memory.delete_session_memories(app_name=app_name, user_id="u1", session_id="s-x") == 2
    assert (await memory.search_memory(app_name=app_name, user_id="u1", query="key keys")).memories == []
    assert (await memory.search_memory(app_name=app_name, user_id="u1", query="   ")).memories == []
    with pytest.raises(ValueError):
        await memory.add_memory(
            app_name=app_name, user_id="u1", memories=[MemoryEntry(content=types.Content(parts=[]))]
        )


async def test_users_never_see_each_others_memories(memory: GrpcMemoryService, app_name: str):
    fact = MemoryEntry(content=types.Content(parts=[types.Part(text="alice's PIN hint is the cat")]))
    await memory.add_memory(app_name=app_name, user_id="alice", memories=[fact])
    assert (await memory.search_memory(app_name=app_name, user_id="bob", query="PIN hint cat")).memories == []
    assert len((await memory.search_memory(app_name=app_name, user_id="alice", query="PIN hint cat")).memories) == 1


class ScriptedModel(BaseLlm):
    """Answers from a script, and records every request it was sent."""

    model: str = "scripted"
    script: list[LlmResponse] = []
    requests: list[LlmRequest] = []

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.requests.append(llm_request)
        yield self.script[min(len(self.requests), len(self.script)) - 1]


def says(text: str) -> LlmResponse:
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


def calls_load_memory(query: str) -> LlmResponse:
    call = types.FunctionCall(id=f"fc-{uuid.uuid4().hex[:6]}", name="load_memory", args={"query": query})
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]))


def request_text(request: LlmRequest) -> str:
    out = []
    for content in request.contents:
        for part in content.parts or []:
            if part.text:
                out.append(part.text)
            if part.function_response:
                out.append(str(part.function_response.response))
    return "\n".join(out)


async def run_turn(runner: Runner, user_id: str, session_id: str, text: str) -> None:
    async for _ in runner.run_async(user_id=user_id, session_id=session_id, new_message=user_says(text)):
        pass


@pytest.mark.parametrize("tool", ["preload_memory", "load_memory"])
async def test_a_runner_recalls_a_fact_in_a_later_session_of_the_same_user_only(
    server: str, service: GrpcSessionService, memory: GrpcMemoryService, app_name: str, tool: str
):
    question = "Which city did I say my sister lives in?"
    if tool == "preload_memory":
        script = [says("Noted."), says("answer")]
        tools = [preload_memory]
    else:
        script = [says("Noted."), calls_load_memory("sister lives city"), says("answer")]
        tools = [load_memory]
    model = ScriptedModel(script=script, requests=[])
    agent = LlmAgent(name="assistant", model=model, instruction="Be helpful.", tools=tools)
    runner = Runner(agent=agent, app_name=app_name, session_service=service, memory_service=memory)

    first = await service.create_session(app_name=app_name, user_id="alice")
    await run_turn(runner, "alice", first.id, "My sister lives in Valparaiso, by the sea.")
    stored = await service.get_session(app_name=app_name, user_id="alice", session_id=first.id)
    assert stored is not None
    await memory.add_session_to_memory(stored)

    second = await service.create_session(app_name=app_name, user_id="alice")
    model.requests.clear()
    model.script = script[1:]
    await run_turn(runner, "alice", second.id, question)
    assert "Valparaiso" in request_text(model.requests[-1])

    # Another user of the same app asks the same: nothing of alice's comes back.
    other = await service.create_session(app_name=app_name, user_id="bob")
    model.requests.clear()
    await run_turn(runner, "bob", other.id, question)
    assert model.requests, "the model was not called"
    assert all("Valparaiso" not in request_text(r) for r in model.requests)
