"""A thin asyncio client for sessionstore.v1.SessionService."""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator
from typing import Any

from sessionstore.v1 import history_pb2
from sessionstore.v1 import session_service_pb2 as pb
from sessionstore.v1.session_service_pb2_grpc import SessionServiceStub
from sessionstore_client._grpc_client import DEFAULT, DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_TIMEOUT, GrpcClient, request_of

__all__ = ["DEFAULT_MAX_MESSAGE_BYTES", "DEFAULT_TIMEOUT", "SessionStoreClient"]

_DEFAULT = DEFAULT
_request = request_of


class SessionStoreClient(GrpcClient[SessionServiceStub]):
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

    _stub_class = SessionServiceStub
    _logger = logging.getLogger(__name__)

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
