"""Retries against the real server: a restart on the same port, and an answer lost after the commit."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterator

import grpc
import pytest
from fault_proxy import FaultProxy
from google.adk.events.event import Event
from google.genai import types
from server_process import ServerProcess

from sessionstore.v1 import event_pb2
from sessionstore_client import SessionStoreClient
from sessionstore_client.adk import GrpcSessionService
from sessionstore_client.retry import RetryPolicy

# Quick and patient: the server may take a while to come back on a busy machine;
# the call's deadline still bounds the whole thing.
PATIENT = RetryPolicy(max_attempts=10_000, initial_backoff=0.02, max_backoff=0.25)


class _Retries(logging.Handler):
    """Counts the client's retry log records, and wakes whoever waits for one."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.methods: list[str] = []
        self.seen = asyncio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        method = getattr(record, "sessionstore_method", None)
        if method is not None:
            self.methods.append(method)
            self.seen.set()


@pytest.fixture
def retries() -> Iterator[_Retries]:
    handler = _Retries()
    log = logging.getLogger("sessionstore_client.client")
    level = log.level
    log.setLevel(logging.INFO)
    log.addHandler(handler)
    try:
        yield handler
    finally:
        log.removeHandler(handler)
        log.setLevel(level)


async def _until(check: Callable[[], Awaitable[bool]]) -> None:
    while not await check():
        await asyncio.sleep(0.02)


async def test_an_append_is_retried_across_a_server_restart_and_stored_once(
    database_url: str, app_name: str, retries: _Retries
):
    first = await asyncio.to_thread(ServerProcess, database_url)
    try:
        async with SessionStoreClient(first.target) as direct:
            session = (await direct.create_session(app_name=app_name, user_id="u1")).session
    finally:
        first.stop()

    async with SessionStoreClient(first.url, timeout=120, retry=PATIENT) as client:
        append = asyncio.create_task(
            client.append_event(
                app_name=app_name,
                user_id="u1",
                session_id=session.id,
                event=event_pb2.Event(author="user", content=event_pb2.Content(parts=[event_pb2.Part(text="hi")])),
                expected_revision=0,
            )
        )
        await retries.seen.wait()  # the first try failed: nothing listens on the port
        second = await asyncio.to_thread(ServerProcess, database_url, port=first.port)
        try:
            response = await append
            assert response.stored and not response.duplicate
            assert response.event.id, "the client gives the event an id before the first try"
            got = await client.get_session(app_name=app_name, user_id="u1", session_id=session.id)
            assert [e.id for e in got.session.events] == [response.event.id]
            assert got.session.revision == 1
            assert "AppendEvent" in retries.methods
        finally:
            second.stop()


async def test_an_append_whose_answer_was_lost_is_stored_once(server: str, app_name: str, retries: _Retries):
    async with SessionStoreClient(server) as direct, FaultProxy(server) as proxy:
        session = (await direct.create_session(app_name=app_name, user_id="u1")).session
        async with SessionStoreClient(proxy.target, retry=PATIENT) as client:
            await client.get_user_state(app_name=app_name, user_id="u1")  # connected through the proxy
            proxy.hold_answers()
            append = asyncio.create_task(
                client.append_event(
                    app_name=app_name,
                    user_id="u1",
                    session_id=session.id,
                    event=event_pb2.Event(author="user", actions=event_pb2.EventActions()),
                    expected_revision=0,
                )
            )

            async def committed() -> bool:
                got = await direct.get_session(app_name=app_name, user_id="u1", session_id=session.id)
                return got.session.revision == 1

            await _until(committed)
            assert not append.done()
            proxy.cut()  # the answer is lost; the client sees UNAVAILABLE and retries
            response = await append

        assert response.duplicate and response.event.seq == 1
        assert retries.methods and set(retries.methods) == {"AppendEvent"}
        got = await direct.get_session(app_name=app_name, user_id="u1", session_id=session.id)
        assert [e.id for e in got.session.events] == [response.event.id]


async def test_the_adk_service_takes_a_retried_append_that_had_committed_as_its_own(
    server: str, app_name: str, retries: _Retries
):
    async with SessionStoreClient(server) as direct, FaultProxy(server) as proxy:
        service = GrpcSessionService(client=SessionStoreClient(proxy.target, retry=PATIENT))
        session = await service.create_session(app_name=app_name, user_id="u1")
        proxy.hold_answers()
        event = Event(author="user", content=types.Content(role="user", parts=[types.Part(text="hi")]))
        append = asyncio.create_task(service.append_event(session, event))

        async def committed() -> bool:
            got = await direct.get_session(app_name=app_name, user_id="u1", session_id=session.id)
            return got.session.revision == 1

        await _until(committed)
        proxy.cut()
        await append
        assert retries.methods and set(retries.methods) == {"AppendEvent"}
        assert [e.id for e in session.events] == [event.id]
        # The copy is current: the next append is not refused as stale.
        await service.append_event(session, Event(author="agent"))
        stored = await service.get_session(app_name=app_name, user_id="u1", session_id=session.id)
        assert stored is not None and [e.id for e in stored.events] == [event.id, session.events[1].id]
        await service.close()


async def test_create_session_is_not_retried(app_name: str, retries: _Retries):
    # Nothing listens on this port once the server is gone.
    async with SessionStoreClient("127.0.0.1:1", retry=PATIENT, timeout=5) as client:
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await client.create_session(app_name=app_name, user_id="u1")
    assert raised.value.code() == grpc.StatusCode.UNAVAILABLE
    assert retries.methods == []


async def test_retries_stop_after_max_attempts(app_name: str, retries: _Retries):
    policy = RetryPolicy(max_attempts=3, initial_backoff=0.01, max_backoff=0.02)
    async with SessionStoreClient("127.0.0.1:1", retry=policy, timeout=30) as client:
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await client.get_user_state(app_name=app_name, user_id="u1")
    assert raised.value.code() == grpc.StatusCode.UNAVAILABLE
    assert retries.methods == ["GetUserState", "GetUserState"]


async def test_retries_stop_at_the_calls_deadline(app_name: str, retries: _Retries):
    async with SessionStoreClient("127.0.0.1:1", retry=PATIENT, timeout=0.3) as client:
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await client.get_user_state(app_name=app_name, user_id="u1")
    assert raised.value.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
    assert retries.methods and set(retries.methods) == {"GetUserState"}
