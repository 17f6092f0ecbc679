"""SessionStoreStore (LangGraph BaseStore) on the real server, blocking and
asyncio, and crossing with ADK's memory: what LangGraph puts, ADK's
search_memory finds for the same user, and what ADK remembers, the LangGraph
store's search finds."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest
from google.adk.events.event import Event
from google.genai import types
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from sessionstore_client.adk import GrpcMemoryService, GrpcSessionService
from sessionstore_client.langgraph import SessionStoreStore


def wait_until(check: Any, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if result := check():
            return result
        time.sleep(0.01)
    raise AssertionError("condition not met in time")


def test_put_get_search_delete_and_namespaces(server: str, app_name: str) -> None:
    store = SessionStoreStore(server, app_name=app_name, user_id="u1")
    other = SessionStoreStore(server, app_name=app_name, user_id="u2")
    try:
        store.put(("memories", "prefs"), "food", {"text": "likes spicy ramen", "score": 3, "kind": "pref"})
        store.put(("memories", "prefs"), "drink", {"text": "drinks green tea", "score": 7, "kind": "pref"})
        store.put(("memories", "facts"), "home", {"text": "lives in Porto", "score": 5, "kind": "fact", "n": {"a": 1}})
        store.put(("memoriesx",), "decoy", {"text": "ramen decoy", "kind": "pref"})
        store.put(("docs",), "secret", {"text": "not indexed ramen"}, index=False)

        item = store.get(("memories", "facts"), "home")
        assert item is not None
        assert (item.namespace, item.key) == (("memories", "facts"), "home")
        assert item.value == {"text": "lives in Porto", "score": 5, "kind": "fact", "n": {"a": 1}}
        assert isinstance(item.value["score"], int)
        assert store.get(("memories", "facts"), "nope") is None
        # Another user of the same app sees nothing.
        assert other.get(("memories", "facts"), "home") is None
        assert other.search(("memories",)) == []

        # Replacing keeps one item per (namespace, key).
        store.put(("memories", "prefs"), "food", {"text": "likes spicy ramen and udon", "score": 4, "kind": "pref"})
        prefs = store.search(("memories", "prefs"))
        assert sorted(i.key for i in prefs) == ["drink", "food"]
        assert next(i for i in prefs if i.key == "food").value["score"] == 4

        # Prefixes are by label: ("memories",) is not ("memoriesx",).
        assert sorted(i.key for i in store.search(("memories",))) == ["drink", "food", "home"]
        assert sorted(i.key for i in store.search(("memories",), filter={"kind": "pref"})) == ["drink", "food"]
        assert [i.key for i in store.search(("memories",), filter={"score": {"$gt": 4}})] in (
            ["drink", "home"],
            ["home", "drink"],
        )
        assert [i.key for i in store.search(("memories",), filter={"n": {"a": 1}})] == ["home"]
        assert len(store.search(("memories",), limit=2)) == 2
        assert len(store.search(("memories",), limit=2, offset=2)) == 1

        # Text search: ranked words, within the prefix; index=False stays out.
        found = store.search((), query="ramen")
        assert {i.key for i in found} == {"food", "decoy"}
        assert all(i.score is not None for i in found)
        assert [i.key for i in store.search(("memories",), query="ramen")] == ["food"]

        assert store.list_namespaces() == [("docs",), ("memories", "facts"), ("memories", "prefs"), ("memoriesx",)]
        assert store.list_namespaces(prefix=("memories",)) == [("memories", "facts"), ("memories", "prefs")]
        assert store.list_namespaces(suffix=("prefs",)) == [("memories", "prefs")]
        assert store.list_namespaces(max_depth=1) == [("docs",), ("memories",), ("memoriesx",)]
        assert store.list_namespaces(limit=1, offset=1) == [("memories", "facts")]

        store.delete(("memories", "facts"), "home")
        assert store.get(("memories", "facts"), "home") is None
    finally:
        store.close()
        other.close()


async def test_async_api_and_ttl(server: str, app_name: str) -> None:
    store = SessionStoreStore(server, app_name=app_name, user_id="u1", ttl={"default_ttl": 60, "refresh_on_read": True})
    try:
        await store.aput(("notes",), "n1", {"text": "call the bank"})
        item = await store.aget(("notes",), "n1")
        assert item is not None and item.value == {"text": "call the bank"}
        assert [i.key for i in await store.asearch(("notes",), query="bank")] == ["n1"]
        assert await store.alist_namespaces() == [("notes",)]
        # An item with a tiny TTL reads as gone once it expires (no read refreshes it meanwhile).
        await store.aput(("notes",), "short", {"text": "soon gone"}, ttl=0.001)
        wait_until(lambda: store.get(("notes",), "short", refresh_ttl=False) is None)
        await store.adelete(("notes",), "n1")
        assert await store.aget(("notes",), "n1") is None
    finally:
        store.close()
        await store.aclose()


async def test_what_langgraph_puts_adk_finds_and_back(server: str, app_name: str) -> None:
    store = SessionStoreStore(server, app_name=app_name, user_id="u_42")
    async with GrpcMemoryService(server) as memory, GrpcSessionService(server) as sessions:
        try:
            # LangGraph -> ADK.
            await store.aput(
                ("memories", "u_42"), "allergy", {"text": "allergic to peanuts", "source": "chat"}, index=["text"]
            )
            found = await memory.search_memory(app_name=app_name, user_id="u_42", query="peanuts")
            assert [p.text for m in found.memories for p in m.content.parts] == ["allergic to peanuts"]
            assert (
                await memory.search_memory(app_name=app_name, user_id="someone-else", query="peanuts")
            ).memories == []

            # ADK -> LangGraph: a session's events become memories, which the store's search finds.
            session = await sessions.create_session(app_name=app_name, user_id="u_42")
            said = types.Content(role="user", parts=[types.Part(text="My flight to Lisbon leaves Friday")])
            await sessions.append_event(session, Event(author="user", invocation_id="i1", content=said))
            await memory.add_session_to_memory(session)
            hits = await store.asearch((), query="Lisbon flight")
            assert len(hits) == 1
            assert hits[0].value["text"] == "My flight to Lisbon leaves Friday"
            assert hits[0].value["author"] == "user"
            assert hits[0].namespace == ()
        finally:
            await store.aclose()


def test_items_are_redacted_like_everything_else(server: str, app_name: str) -> None:
    store = SessionStoreStore(server, app_name=app_name, user_id="u1")
    try:
        store.put(("contacts",), "c1", {"text": "write to ana@example.com", "n": 1})
        item = store.get(("contacts",), "c1")
        assert item is not None and item.value == {"text": "write to [EMAIL]", "n": 1}
        assert store.search(("contacts",), query="example") == []
    finally:
        store.close()


class State(TypedDict):
    fact: str
    recalled: list[str]


def test_a_graph_compiled_with_the_store_remembers_across_threads(server: str, app_name: str) -> None:
    store = SessionStoreStore(server, app_name=app_name, user_id="u1")

    def remember(state: State, runtime: Runtime[Any]) -> dict[str, Any]:
        assert runtime.store is not None
        if state.get("fact"):
            runtime.store.put(("memories",), str(uuid.uuid4()), {"text": state["fact"]})
        return {"recalled": sorted(i.value["text"] for i in runtime.store.search(("memories",)))}

    builder = StateGraph(State)
    builder.add_node("remember", remember)
    builder.add_edge(START, "remember")
    graph = builder.compile(checkpointer=InMemorySaver(), store=store)
    try:
        graph.invoke({"fact": "prefers aisle seats", "recalled": []}, {"configurable": {"thread_id": "a"}})
        out = graph.invoke({"fact": "", "recalled": []}, {"configurable": {"thread_id": "b"}})
        assert out["recalled"] == ["prefers aisle seats"]
    finally:
        store.close()


@pytest.mark.parametrize("bad", [(), ("langgraph",), ("a.b",), ("",)])
def test_refuses_namespaces_langgraph_refuses(server: str, app_name: str, bad: tuple[str, ...]) -> None:
    store = SessionStoreStore(server, app_name=app_name, user_id="u1")
    try:
        with pytest.raises(ValueError):
            store.put(bad, "k", {"x": 1})
    finally:
        store.close()
