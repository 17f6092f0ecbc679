"""The plain client against the real server."""

from __future__ import annotations

import socket
import time
import uuid

import grpc
import pytest

from sessionstore.v1 import event_pb2, session_service_pb2
from sessionstore_client import SessionStoreClient
from sessionstore_client._target import resolve_target


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


async def test_every_target_form_reaches_the_server(server: str, app_name: str):
    for target in (server, f"http://{server}", f"http://{server}/"):
        async with SessionStoreClient(target, timeout=10) as client:
            assert (await client.get_user_state(app_name=app_name, user_id="u1")).state == {}


def test_target_forms_choose_plaintext_or_tls():
    assert resolve_target("127.0.0.1:50051", None) == ("127.0.0.1:50051", None)
    assert resolve_target("localhost:50051", None) == ("localhost:50051", None)
    assert resolve_target("http://[::1]:7", None) == ("[::1]:7", None)
    assert resolve_target("http://example.com", None) == ("example.com:80", None)
    assert resolve_target("unix:///tmp/s.sock", None) == ("unix:///tmp/s.sock", None)
    for target, want in (("https://example.com", "example.com:443"), ("example.com:50051", "example.com:50051")):
        grpc_target, credentials = resolve_target(target, None)
        assert grpc_target == want and isinstance(credentials, grpc.ChannelCredentials)
    mine = grpc.ssl_channel_credentials()
    assert resolve_target("http://127.0.0.1:1", mine) == ("127.0.0.1:1", mine)
    for bad in ("", "http://", "http://h:1/path", "https://h?x=1"):
        with pytest.raises(ValueError):
            resolve_target(bad, None)


async def test_receives_answers_up_to_the_servers_message_limit(server: str, app_name: str):
    # Two events of 3 MB: one GetSession answer of 6 MB, over gRPC's default 4 MiB.
    async with SessionStoreClient(server) as client:
        session = (await client.create_session(app_name=app_name, user_id="u1")).session
        for _ in range(2):
            await client.append_event(
                app_name=app_name,
                user_id="u1",
                session_id=session.id,
                event=event_pb2.Event(
                    author="user", content=event_pb2.Content(parts=[event_pb2.Part(text="x" * 3_000_000)])
                ),
            )
        got = await client.get_session(app_name=app_name, user_id="u1", session_id=session.id)
        assert got.ByteSize() > 4 << 20 and len(got.session.events) == 2


async def test_append_gives_an_event_without_id_one_and_keeps_a_given_id(server: str, app_name: str):
    async with SessionStoreClient(server) as client:
        session = (await client.create_session(app_name=app_name, user_id="u1")).session
        key = {"app_name": app_name, "user_id": "u1", "session_id": session.id}
        request = session_service_pb2.AppendEventRequest(**key, event=event_pb2.Event(author="user"))
        generated = await client.append_event(request)
        assert uuid.UUID(generated.event.id) and request.event.id == ""  # the caller's message is left alone
        given = await client.append_event(**key, event=event_pb2.Event(id="mine", author="user"))
        assert given.event.id == "mine"


async def test_erase_user_data(server: str, app_name: str):
    async with SessionStoreClient(server) as client:
        for sid in ("a", "b"):
            await client.create_session(app_name=app_name, user_id="u1", session_id=sid, state={"user:k": 1})
            await client.append_event(
                app_name=app_name, user_id="u1", session_id=sid, event=event_pb2.Event(author="user")
            )
        kept = (await client.create_session(app_name=app_name, user_id="u2")).session
        erased = await client.erase_user_data(app_name=app_name, user_id="u1")
        assert (erased.sessions_deleted, erased.events_deleted) == (2, 2)
        assert (await client.list_sessions(app_name=app_name, user_id="u1")).sessions == []
        assert (await client.get_user_state(app_name=app_name, user_id="u1")).state == {}
        assert [s.id for s in (await client.list_sessions(app_name=app_name)).sessions] == [kept.id]
