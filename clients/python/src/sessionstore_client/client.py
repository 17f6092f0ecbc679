"""A thin asyncio client for sessionstore.v1.SessionService."""

from __future__ import annotations

import asyncio
import logging
import uuid
import weakref
from collections.abc import AsyncIterator, Sequence
from typing import Any, TypeVar

import grpc
from google.protobuf.message import Message

from sessionstore.v1 import history_pb2
from sessionstore.v1 import session_service_pb2 as pb
from sessionstore.v1.session_service_pb2_grpc import SessionServiceStub
from sessionstore_client._target import resolve_target
from sessionstore_client.retry import RETRIED_METHODS, RetryPolicy

_Request = TypeVar("_Request", bound=Message)
_DEFAULT: Any = object()

DEFAULT_TIMEOUT = 30.0
"""Seconds a unary call may take, retries included, unless the call says otherwise."""
DEFAULT_MAX_MESSAGE_BYTES = 16 << 20
"""The server's default limit (gRPC's own 4 MiB would refuse large sessions)."""

logger = logging.getLogger(__name__)


class SessionStoreClient:
    """Calls the server over gRPC (grpc.aio) with a default deadline per call.

    Each method takes a request message or its fields as keyword arguments and
    returns the response message; failures raise `grpc.aio.AioRpcError`.

        async with SessionStoreClient("127.0.0.1:50051") as client:
            created = await client.create_session(app_name="support", user_id="u_42")

    target is the URL the server logs (`http://host:port` plaintext,
    `https://host:port` TLS) or a gRPC target (`host:port`: plaintext to
    loopback, TLS with the system roots elsewhere); `credentials` overrides.
    Calls in RETRIED_METHODS that fail with UNAVAILABLE are tried again as
    `retry` says, within the call's deadline; append_event gives an event
    without an id a fresh UUID before the first try, so a repeat is the same
    append (the server answers it with the stored event and `duplicate` set).
    """

    def __init__(
        self,
        target: str,
        *,
        timeout: float | None = DEFAULT_TIMEOUT,
        credentials: grpc.ChannelCredentials | None = None,
        options: Sequence[tuple[str, Any]] = (),
        metadata: Sequence[tuple[str, str]] = (),
        retry: RetryPolicy | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        self.target = target
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self._grpc_target, self._credentials = resolve_target(target, credentials)
        # The channel reconnects no slower than calls retry; the caller's own
        # options win.
        defaults: dict[str, Any] = {
            "grpc.max_receive_message_length": max_message_bytes,
            "grpc.max_send_message_length": max_message_bytes,
            "grpc.initial_reconnect_backoff_ms": int(self.retry.initial_backoff * 1000),
            "grpc.max_reconnect_backoff_ms": int(self.retry.max_backoff * 1000),
        }
        self._options = list({**defaults, **dict(options)}.items())
        self._metadata = tuple(metadata)
        # A grpc.aio channel belongs to the event loop it was made on, and one
        # service object outlives loops in practice (Runner.run() runs each
        # call on a fresh loop in a thread; pytest makes a loop per test).
        self._stubs: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, tuple[grpc.aio.Channel, SessionServiceStub]
        ] = weakref.WeakKeyDictionary()

    @property
    def stub(self) -> SessionServiceStub:
        """The generated stub for the running event loop's channel."""
        loop = asyncio.get_running_loop()
        if loop not in self._stubs:
            if self._credentials is None:
                channel = grpc.aio.insecure_channel(self._grpc_target, options=self._options)
            else:
                channel = grpc.aio.secure_channel(self._grpc_target, self._credentials, options=self._options)
            self._stubs[loop] = (channel, SessionServiceStub(channel))
        return self._stubs[loop][1]

    async def close(self) -> None:
        """Closes the running loop's channel (channels of ended loops are already dead)."""
        entry = self._stubs.pop(asyncio.get_running_loop(), None)
        if entry is not None:
            await entry[0].close()

    async def __aenter__(self) -> SessionStoreClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def create_session(
        self, request: pb.CreateSessionRequest | None = None, *, timeout: float | None = _DEFAULT, **fields: Any
    ) -> pb.CreateSessionResponse:
        return await self._unary("CreateSession", _request(pb.CreateSessionRequest, request, fields), timeout)

    async def get_session(
        self, request: pb.GetSessionRequest | None = None, *, timeout: float | None = _DEFAULT, **fields: Any
    ) -> pb.GetSessionResponse:
        return await self._unary("GetSession", _request(pb.GetSessionRequest, request, fields), timeout)

    async def list_sessions(
        self, request: pb.ListSessionsRequest | None = None, *, timeout: float | None = _DEFAULT, **fields: Any
    ) -> pb.ListSessionsResponse:
        return await self._unary("ListSessions", _request(pb.ListSessionsRequest, request, fields), timeout)

    async def delete_session(
        self, request: pb.DeleteSessionRequest | None = None, *, timeout: float | None = _DEFAULT, **fields: Any
    ) -> pb.DeleteSessionResponse:
        return await self._unary("DeleteSession", _request(pb.DeleteSessionRequest, request, fields), timeout)

    async def append_event(
        self, request: pb.AppendEventRequest | None = None, *, timeout: float | None = _DEFAULT, **fields: Any
    ) -> pb.AppendEventResponse:
        response, _ = await self._append_event_tries(_request(pb.AppendEventRequest, request, fields), timeout)
        return response

    async def _append_event_tries(
        self, request: pb.AppendEventRequest, timeout: float | None = _DEFAULT
    ) -> tuple[pb.AppendEventResponse, int]:
        """append_event, and how many tries it took.

        After more than one try, `duplicate` may mean that an earlier try of
        this very call committed before its answer was lost.
        """
        if request.HasField("event") and not request.event.id:
            # Fixed before the first try, so that every try is the same append.
            with_id = pb.AppendEventRequest()
            with_id.CopyFrom(request)
            with_id.event.id = str(uuid.uuid4())
            request = with_id
        return await self._tries("AppendEvent", request, timeout)

    async def list_events(
        self, request: pb.ListEventsRequest | None = None, *, timeout: float | None = _DEFAULT, **fields: Any
    ) -> pb.ListEventsResponse:
        return await self._unary("ListEvents", _request(pb.ListEventsRequest, request, fields), timeout)

    async def get_user_state(
        self, request: pb.GetUserStateRequest | None = None, *, timeout: float | None = _DEFAULT, **fields: Any
    ) -> pb.GetUserStateResponse:
        return await self._unary("GetUserState", _request(pb.GetUserStateRequest, request, fields), timeout)

    async def erase_user_data(
        self, request: pb.EraseUserDataRequest | None = None, *, timeout: float | None = _DEFAULT, **fields: Any
    ) -> pb.EraseUserDataResponse:
        """Deletes a user's sessions, their events and the user's state in one app.

        Retried on UNAVAILABLE like the other deletes: the counts are what the
        last try deleted, so after a retry they may be lower than the total.
        """
        return await self._unary("EraseUserData", _request(pb.EraseUserDataRequest, request, fields), timeout)

    async def fork_session(
        self, request: history_pb2.ForkSessionRequest | None = None, *, timeout: float | None = _DEFAULT, **fields: Any
    ) -> history_pb2.ForkSessionResponse:
        """Copies a session's events 1..up_to_seq into a new session. Not retried: a repeat would fork again."""
        return await self._unary("ForkSession", _request(history_pb2.ForkSessionRequest, request, fields), timeout)

    async def rewind_session(
        self,
        request: history_pb2.RewindSessionRequest | None = None,
        *,
        timeout: float | None = _DEFAULT,
        **fields: Any,
    ) -> history_pb2.RewindSessionResponse:
        """Appends ADK's rewind event for an invocation. Not retried: a repeat would rewind again."""
        return await self._unary("RewindSession", _request(history_pb2.RewindSessionRequest, request, fields), timeout)

    async def stream_events(
        self, request: pb.StreamEventsRequest | None = None, *, timeout: float | None = None, **fields: Any
    ) -> AsyncIterator[pb.StreamEventsResponse]:
        """Tails events. No deadline by default: a tail is meant to stay open."""
        call = self.stub.StreamEvents(
            _request(pb.StreamEventsRequest, request, fields), timeout=timeout, metadata=self._metadata
        )
        try:
            async for response in call:
                yield response
        finally:
            call.cancel()

    async def _unary(self, method: str, request: Message, timeout: float | None) -> Any:
        response, _ = await self._tries(method, request, timeout)
        return response

    async def _tries(self, method: str, request: Message, timeout: float | None) -> tuple[Any, int]:
        call = getattr(self.stub, method)
        if timeout is _DEFAULT:
            timeout = self.timeout
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        max_attempts = self.retry.max_attempts if method in RETRIED_METHODS else 1
        attempt = 1
        while True:
            left = None if deadline is None else max(deadline - loop.time(), 0.0)
            try:
                return await call(request, timeout=left, metadata=self._metadata), attempt
            except grpc.aio.AioRpcError as e:
                if attempt >= max_attempts or e.code() not in self.retry.retryable_codes:
                    raise
                wait = self.retry.backoff(attempt)
                if deadline is not None and loop.time() + wait >= deadline:
                    raise
                logger.info(
                    "sessionstore: %s failed with %s (try %d of %d); retrying in %.3f s",
                    method,
                    e.code().name,
                    attempt,
                    max_attempts,
                    wait,
                    extra={"sessionstore_method": method, "sessionstore_attempt": attempt},
                )
                await asyncio.sleep(wait)
                attempt += 1


def _request(cls: type[_Request], request: _Request | None, fields: dict[str, Any]) -> _Request:
    if request is not None and fields:
        raise TypeError("pass either a request message or its fields, not both")
    return request if request is not None else cls(**fields)
