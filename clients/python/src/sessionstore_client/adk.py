"""GrpcSessionService: ADK's BaseSessionService backed by a Sessionstore server.

from sessionstore_client.adk import GrpcSessionService

session_service = GrpcSessionService("127.0.0.1:50051")  # was DatabaseSessionService(db_url)
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import grpc
from google.adk.errors import StaleSessionError
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events.event import Event
from google.adk.platform import uuid as platform_uuid
from google.adk.sessions.base_session_service import BaseSessionService, GetSessionConfig, ListSessionsResponse
from google.adk.sessions.session import Session
from pydantic_core import to_jsonable_python
from typing_extensions import override

from sessionstore.v1 import event_pb2, session_pb2
from sessionstore.v1 import session_service_pb2 as pb
from sessionstore_client import _convert
from sessionstore_client.client import SessionStoreClient

logger = logging.getLogger(__name__)

_STALE_MESSAGE = (
    "The session has been modified in storage since it was loaded. "
    "Please reload the session before appending more events."
)
_LIST_PAGE_SIZE = 1000


class PagedListSessionsResponse(ListSessionsResponse):
    """One page of list_sessions; pass `next_page_token` back for the next ("" on the last page)."""

    next_page_token: str = ""


class GrpcSessionService(BaseSessionService):
    """Stores ADK sessions in Sessionstore; behaves like DatabaseSessionService.

    Sessions carry the server's storage revision in ADK's private
    `_storage_update_marker` (as a string, like DatabaseSessionService's
    marker), and appends send it as `expected_revision`, so a stale copy of a
    session raises StaleSessionError instead of overwriting newer events.
    """

    def __init__(self, target: str | None = None, *, client: SessionStoreClient | None = None, **client_options: Any):
        if (target is None) == (client is None):
            raise ValueError("pass exactly one of target or client")
        self.client = client or SessionStoreClient(target, **client_options)  # type: ignore[arg-type]
        self._append_locks: dict[tuple[asyncio.AbstractEventLoop, str, str, str], tuple[asyncio.Lock, int]] = {}

    async def close(self) -> None:
        await self.client.close()

    async def __aenter__(self) -> GrpcSessionService:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @override
    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        request = pb.CreateSessionRequest(
            app_name=app_name,
            user_id=user_id,
            state=_convert.to_struct(_json_safe(state or {})),
            # As ADK's in-memory and SQLite services: a blank id gets a new one
            # from ADK's id provider (platform.uuid, which tests can fix).
            session_id=_adk_session_id(session_id) or platform_uuid.new_uuid(),
        )
        with _mapped_errors():
            response = await self.client.create_session(request)
        return _to_session(response.session)

    @override
    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        session_id = _adk_session_id(session_id)
        if not session_id:
            return None  # ADK finds no session under a blank id.
        request = pb.GetSessionRequest(app_name=app_name, user_id=user_id, session_id=session_id)
        if config and config.num_recent_events is not None:
            request.num_recent_events = config.num_recent_events
        if config and config.after_timestamp is not None:
            request.after_timestamp.CopyFrom(_convert.to_timestamp(config.after_timestamp))
        with _mapped_errors():
            try:
                response = await self.client.get_session(request)
            except grpc.aio.AioRpcError as e:
                if e.code() == grpc.StatusCode.NOT_FOUND:
                    return None
                raise
        return _to_session(response.session)

    @override
    async def list_sessions(
        self,
        *,
        app_name: str,
        user_id: str | None = None,
        page_size: int | None = None,
        page_token: str | None = None,
    ) -> ListSessionsResponse:
        """Every session (ADK's contract), or one page when `page_size` is given.

        google-adk 2.13 has no paging parameters; these are the store's own
        (the names ADK's paging requests, #4621 and #4871, ask for). A page's
        answer is a PagedListSessionsResponse: `next_page_token` is "" on the
        last page.
        """
        if page_size is not None or page_token:
            with _mapped_errors():
                response = await self.client.list_sessions(
                    app_name=app_name, user_id=user_id or "", page_size=page_size or 0, page_token=page_token or ""
                )
            return PagedListSessionsResponse(
                sessions=[_to_session(s) for s in response.sessions], next_page_token=response.next_page_token
            )
        sessions: list[Session] = []
        token = ""
        while True:
            with _mapped_errors():
                response = await self.client.list_sessions(
                    app_name=app_name, user_id=user_id or "", page_size=_LIST_PAGE_SIZE, page_token=token
                )
            sessions.extend(_to_session(s) for s in response.sessions)
            token = response.next_page_token
            if not token:
                return ListSessionsResponse(sessions=sessions)

    @override
    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        session_id = _adk_session_id(session_id)
        if not session_id:
            return  # Nothing is stored under a blank id; ADK's delete is a no-op.
        with _mapped_errors():
            await self.client.delete_session(app_name=app_name, user_id=user_id, session_id=session_id)

    @override
    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        with _mapped_errors():
            response = await self.client.get_user_state(app_name=app_name, user_id=user_id)
        return _convert.from_struct(response.state)

    @override
    async def append_event(self, session: Session, event: Event) -> Event:
        if event.partial:
            return event
        async with self._one_append_at_a_time(session):
            return await self._append(session, event)

    async def _append(self, session: Session, event: Event) -> Event:
        request = pb.AppendEventRequest(
            app_name=session.app_name,
            user_id=session.user_id,
            session_id=session.id,
            event=_convert.event_to_pb(event.model_dump(mode="json", exclude_none=True), drop_temp=True),
            expected_revision=await self._expected_revision(session),
        )
        with _mapped_errors(session):
            response, tries = await self.client._append_event_tries(request)
        if response.duplicate and tries > 1 and response.event.seq == request.expected_revision + 1:
            # The client retried after an UNAVAILABLE, and an earlier try of
            # this call had in fact committed: the stored event sits exactly
            # where this append asked for it, under its id. That is this
            # append's success, not a re-delivery.
            return await self._appended(session, event, response)
        if response.duplicate:
            # A re-append of an event stored earlier (idempotent on
            # event.id): nothing new was stored, so the session stays as is.
            stored = event_pb2.Event()
            stored.CopyFrom(response.event)
            stored.ClearField("seq")
            if stored != request.event:
                raise AlreadyExistsError(
                    f"Event {event.id} already exists in session {session.id} with different content."
                )
            return event
        return await self._appended(session, event, response)

    async def _appended(self, session: Session, event: Event, response: pb.AppendEventResponse) -> Event:
        # The revision right after this event: when other writers have
        # appended since (possible after a retried append), the next append
        # from this copy is then refused as stale, as it should be.
        session._storage_update_marker = str(response.event.seq)
        # The base class applies temp: keys to the in-memory session (later
        # steps of this invocation read them), trims them from the event and
        # commits the rest, exactly as ADK's own services do.
        await super().append_event(session, event)
        if response.revision == response.event.seq:
            session.last_update_time = _convert.from_timestamp(response.last_update_time)
        return event

    @asynccontextmanager
    async def _one_append_at_a_time(self, session: Session) -> AsyncIterator[None]:
        # As in DatabaseSessionService: concurrent appends through one session
        # object must queue, not trip over each other's revision.
        key = (asyncio.get_running_loop(), session.app_name, session.user_id, session.id)
        lock, users = self._append_locks.get(key, (asyncio.Lock(), 0))
        self._append_locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._append_locks[key]
            if users == 1:
                del self._append_locks[key]
            else:
                self._append_locks[key] = (lock, users - 1)

    async def _expected_revision(self, session: Session) -> int:
        if session._storage_update_marker is not None and session._storage_update_marker.isdigit():
            return int(session._storage_update_marker)
        # A session this service did not load (built by hand, or by another
        # service): DatabaseSessionService's rule for marker-less sessions is
        # that storage must not have moved past the copy's last event.
        with _mapped_errors(session):
            response = await self.client.get_session(
                app_name=session.app_name, user_id=session.user_id, session_id=session.id, num_recent_events=1
            )
        stored = response.session
        last_stored = stored.events[-1].id if stored.events else None
        last_known = session.events[-1].id if session.events else None
        if _convert.from_timestamp(stored.last_update_time) > session.last_update_time and last_stored != last_known:
            raise StaleSessionError(_STALE_MESSAGE)
        return stored.revision


def _adk_session_id(session_id: str | None) -> str | None:
    """A session id as ADK's in-memory and SQLite services take it: str.strip()ped.

    That strips surrounding whitespace as Python defines it, which includes
    the control characters \t \n \v \f \r and \x1c-\x1f. The server itself
    refuses padded ids; the stripping is ADK's behaviour, kept here.
    """
    return session_id.strip() if session_id else session_id


def _to_session(message: session_pb2.Session) -> Session:
    session = Session(
        id=message.id,
        app_name=message.app_name,
        user_id=message.user_id,
        state=_convert.from_struct(message.state),
        events=[Event.model_validate(_convert.event_from_pb(e)) for e in message.events],
        last_update_time=_convert.from_timestamp(message.last_update_time),
    )
    session._storage_update_marker = str(message.revision)
    return session


def _json_safe(state: dict[str, Any]) -> dict[str, Any]:
    # What DatabaseSessionService does before writing state to a JSON column.
    try:
        return to_jsonable_python(state)  # type: ignore[no-any-return]
    except Exception:
        logger.warning("Session state has values that are not JSON-serializable; storing their repr", exc_info=True)
        return to_jsonable_python(state, serialize_unknown=True)  # type: ignore[no-any-return]


@contextmanager
def _mapped_errors(session: Session | None = None) -> Iterator[None]:
    """Raises ADK's errors for the gRPC codes ADK has a meaning for."""
    try:
        yield
    except grpc.aio.AioRpcError as e:
        code = e.code()
        if code == grpc.StatusCode.ALREADY_EXISTS:
            raise AlreadyExistsError(e.details() or "The resource already exists.") from e
        if code == grpc.StatusCode.NOT_FOUND and session is not None:
            raise SessionNotFoundError(f"Session {session.id} not found.") from e
        if code == grpc.StatusCode.ABORTED:
            # The server's message says "modified in storage" and names both revisions.
            raise StaleSessionError(e.details() or _STALE_MESSAGE) from e
        if code == grpc.StatusCode.INVALID_ARGUMENT:
            raise ValueError(e.details()) from e
        raise


# The memory half: `from sessionstore_client.adk import GrpcMemoryService`.
from sessionstore_client.adk_memory import GrpcMemoryService  # noqa: E402

__all__ = ["GrpcMemoryService", "GrpcSessionService"]
