"""A thin asyncio client for sessionstore.v1.SessionService."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator, Sequence
from typing import Any, TypeVar

import grpc
from google.protobuf.message import Message

from sessionstore.v1 import session_service_pb2 as pb
from sessionstore.v1.session_service_pb2_grpc import SessionServiceStub

_Request = TypeVar("_Request", bound=Message)
_DEFAULT: Any = object()


class SessionStoreClient:
    """Calls the server over gRPC (grpc.aio) with a default deadline per call.

    Each method takes a request message or its fields as keyword arguments and
    returns the response message; failures raise `grpc.aio.AioRpcError`.

        async with SessionStoreClient("127.0.0.1:50051") as client:
            created = await client.create_session(app_name="support", user_id="u_42")
    """

    def __init__(
        self,
        target: str,
        *,
        timeout: float | None = 30.0,
        credentials: grpc.ChannelCredentials | None = None,
        options: Sequence[tuple[str, Any]] = (),
        metadata: Sequence[tuple[str, str]] = (),
    ) -> None:
        self.target = target
        self.timeout = timeout
        self._credentials = credentials
        self._options = list(options)
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
                channel = grpc.aio.insecure_channel(self.target, options=self._options)
            else:
                channel = grpc.aio.secure_channel(self.target, self._credentials, options=self._options)
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
        return await self._unary("AppendEvent", _request(pb.AppendEventRequest, request, fields), timeout)

    async def list_events(
        self, request: pb.ListEventsRequest | None = None, *, timeout: float | None = _DEFAULT, **fields: Any
    ) -> pb.ListEventsResponse:
        return await self._unary("ListEvents", _request(pb.ListEventsRequest, request, fields), timeout)

    async def get_user_state(
        self, request: pb.GetUserStateRequest | None = None, *, timeout: float | None = _DEFAULT, **fields: Any
    ) -> pb.GetUserStateResponse:
        return await self._unary("GetUserState", _request(pb.GetUserStateRequest, request, fields), timeout)

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
        call = getattr(self.stub, method)
        return await call(request, timeout=self.timeout if timeout is _DEFAULT else timeout, metadata=self._metadata)


def _request(cls: type[_Request], request: _Request | None, fields: dict[str, Any]) -> _Request:
    if request is not None and fields:
        raise TypeError("pass either a request message or its fields, not both")
    return request if request is not None else cls(**fields)
