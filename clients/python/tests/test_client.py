"""The plain client against the real server."""

from __future__ import annotations

import socket
import time

import grpc
import pytest

from sessionstore.v1 import event_pb2, session_service_pb2
from sessionstore_client import SessionStoreClient


async def test_unary_calls_and_a_tail(server: str, app_name: str):
    async with SessionStoreClient(server, timeout=10) as client:
        created = (await client.create_session(app_name=app_name, user_id="u1")).session
        appended = await client.append_event(
            session_service_pb2.AppendEventRequest(
                app_name=app_name,
                user_id="u1",
                session_id=created.id,
                event=event_pb2.Event(author="user", content=event_pb2.Content(parts=[event_pb2.Part(text="hi")])),
                expected_revision=created.revision,
            )
        )
        assert appended.stored and appended.revision == 1 and appended.event.seq == 1

        tail = client.stream_events(app_name=app_name, user_id="u1", session_id=created.id)
        first = await anext(tail)
        second = await anext(tail)
        await tail.aclose()
        assert first.event.event.id == appended.event.id and second.WhichOneof("kind") == "caught_up"

        with pytest.raises(TypeError):
            await client.get_session(session_service_pb2.GetSessionRequest(), app_name=app_name)


async def test_calls_carry_the_default_deadline():
    # A listener that never speaks HTTP/2: only the deadline ends the call.
    with socket.create_server(("127.0.0.1", 0)) as silent:
        target = f"127.0.0.1:{silent.getsockname()[1]}"
        async with SessionStoreClient(target, timeout=0.2) as client:
            started = time.monotonic()
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await client.get_user_state(app_name="a", user_id="u1")
            assert raised.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
            assert time.monotonic() - started < 5
