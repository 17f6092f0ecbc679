"""MemoryClient's retries against the real server: every call is retried, and entries of a lost answer are stored once."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator

import grpc
import pytest
from fault_proxy import FaultProxy

from sessionstore.v1 import event_pb2
from sessionstore.v1 import memory_service_pb2 as pb
from sessionstore_client.memory_client import MemoryClient
from sessionstore_client.retry import RetryPolicy

PATIENT = RetryPolicy(max_attempts=10_000, initial_backoff=0.02, max_backoff=0.25)


class _Retries(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.methods: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        method = getattr(record, "sessionstore_method", None)
        if method is not None:
            self.methods.append(method)


@pytest.fixture
def retries() -> Iterator[_Retries]:
    handler = _Retries()
    log = logging.getLogger("sessionstore_client.memory_client")
    level = log.level
    log.setLevel(logging.INFO)
    log.addHandler(handler)
    try:
        yield handler
    finally:
        log.removeHandler(handler)
        log.setLevel(level)


def _entry(text: str) -> pb.Memory:
    return pb.Memory(author="user", content=event_pb2.Content(parts=[event_pb2.Part(text=text)]))


async def test_add_memories_whose_answer_was_lost_stores_each_entry_once(
    server: str, app_name: str, retries: _Retries
):
    async with MemoryClient(server) as direct, FaultProxy(server) as proxy:
        async with MemoryClient(proxy.target, retry=PATIENT) as client:
            await client.list_memories(app_name=app_name, user_id="u1")  # connected through the proxy
            proxy.hold_answers()
            request = pb.AddMemoriesRequest(app_name=app_name, user_id="u1", memories=[_entry("I live in Lyon.")])
            added = asyncio.create_task(client.add_memories(request))
            while not (await direct.list_memories(app_name=app_name, user_id="u1")).memories:
                await asyncio.sleep(0.02)
            proxy.cut()  # the answer is lost; the client sees UNAVAILABLE and retries
            response = await added

        assert retries.methods and set(retries.methods) == {"AddMemories"}
        assert request.memories[0].id == "", "the caller's message is left as it was"
        stored = (await direct.list_memories(app_name=app_name, user_id="u1")).memories
        assert [m.id for m in stored] == [response.memories[0].id]


async def test_add_memories_keeps_the_ids_given(server: str, app_name: str):
    async with MemoryClient(server) as client:
        response = await client.add_memories(
            app_name=app_name, user_id="u1", memories=[pb.Memory(id="mine", content=_entry("x").content), _entry("y")]
        )
    assert response.memories[0].id == "mine"
    assert len(response.memories[1].id) == 36


async def test_every_memory_call_is_retried(retries: _Retries):
    policy = RetryPolicy(max_attempts=2, initial_backoff=0.001, max_backoff=0.002)
    key = {"app_name": "a", "user_id": "u1"}
    # Nothing listens on port 1.
    async with MemoryClient("127.0.0.1:1", retry=policy, timeout=30) as client:
        calls = [
            client.add_session_to_memory(**key, session_id="s"),
            client.add_events_to_memory(**key),
            client.add_memories(**key, memories=[pb.Memory()]),
            client.search_memory(**key, query="q"),
            client.list_memories(**key),
            client.get_memory(**key, memory_id="m"),
            client.delete_memory(**key, memory_id="m"),
            client.delete_session_memories(**key, session_id="s"),
        ]
        for call in calls:
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await call
            assert raised.value.code() == grpc.StatusCode.UNAVAILABLE
    assert retries.methods == [
        "AddSessionToMemory",
        "AddEventsToMemory",
        "AddMemories",
        "SearchMemory",
        "ListMemories",
        "GetMemory",
        "DeleteMemory",
        "DeleteSessionMemories",
    ]


async def test_takes_the_url_the_server_logs_as_its_target(server: str, app_name: str):
    # The same target forms as SessionStoreClient: the http:// URL is plaintext.
    async with MemoryClient(f"http://{server}") as client:
        await client.add_memories(app_name=app_name, user_id="u1", memories=[_entry("via the url")])
        stored = (await client.list_memories(app_name=app_name, user_id="u1")).memories
    assert len(stored) == 1


def test_a_remote_host_port_target_uses_tls():
    client = MemoryClient("sessionstore.internal:443")
    assert client._credentials is not None
