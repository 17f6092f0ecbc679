"""GrpcMemoryService: ADK's BaseMemoryService backed by a Sessionstore server.

from sessionstore_client.adk import GrpcMemoryService

memory_service = GrpcMemoryService("127.0.0.1:50051")  # was InMemoryMemoryService() or SqliteMemoryService(...)
runner = Runner(agent=agent, app_name="support", session_service=..., memory_service=memory_service)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any

import grpc
from google.adk.memory import _utils
from google.adk.memory.base_memory_service import BaseMemoryService, SearchMemoryResponse
from google.adk.memory.memory_entry import MemoryEntry
from google.genai import types
from pydantic_core import to_jsonable_python
from typing_extensions import override

from sessionstore.v1 import memory_service_pb2 as pb
from sessionstore_client import _convert
from sessionstore_client.memory_client import MemoryClient

if TYPE_CHECKING:
    from google.adk.events.event import Event
    from google.adk.sessions.session import Session

# The server's cap on entries or events per request.
_BATCH = 1000


class GrpcMemoryService(BaseMemoryService):
    """Keeps ADK memories in Sessionstore's MemoryService, searched with PostgreSQL full-text search.

    Behaves like ADK's SqliteMemoryService: an event with text becomes one
    memory (its content, author and time), adding a session again adds only
    new events, events without an id are known by author, time and content,
    and a search returns the best `max_results` entries with their session
    and event ids in `custom_metadata`. Entries are scoped by (app, user):
    a search never returns another user's memories.
    """

    def __init__(
        self,
        target: str | None = None,
        *,
        client: MemoryClient | None = None,
        max_results: int = 10,
        **client_options: Any,
    ):
        if (target is None) == (client is None):
            raise ValueError("pass exactly one of target or client")
        if not 0 < max_results <= 100:
            raise ValueError("max_results must be from 1 to 100")
        self.client = client or MemoryClient(target, **client_options)  # type: ignore[arg-type]
        self.max_results = max_results

    async def close(self) -> None:
        await self.client.close()

    async def __aenter__(self) -> GrpcMemoryService:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @override
    async def add_session_to_memory(self, session: Session) -> None:
        # A session stored in Sessionstore is read by the server from where
        # the last call stopped; one kept by another session service is sent.
        try:
            with _mapped_errors():
                await self.client.add_session_to_memory(
                    app_name=session.app_name, user_id=session.user_id, session_id=session.id
                )
            return
        except _NotFound:
            pass
        await self.add_events_to_memory(
            app_name=session.app_name, user_id=session.user_id, events=session.events, session_id=session.id
        )

    @override
    async def add_events_to_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        events: Sequence[Event],
        session_id: str | None = None,
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        converted = [
            _convert.event_to_pb(event.model_dump(mode="json", exclude_none=True))
            for event in events
            if event.content and event.content.parts and not event.partial
        ]
        metadata = _convert.to_struct(to_jsonable_python(dict(custom_metadata or {})))
        for start in range(0, len(converted), _BATCH):
            with _mapped_errors():
                await self.client.add_events_to_memory(
                    app_name=app_name,
                    user_id=user_id,
                    session_id=session_id or "",
                    events=converted[start : start + _BATCH],
                    custom_metadata=metadata,
                )

    @override
    async def add_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        memories: Sequence[MemoryEntry],
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        entries = [_entry_to_pb(m) for m in memories]
        metadata = _convert.to_struct(to_jsonable_python(dict(custom_metadata or {})))
        for start in range(0, len(entries), _BATCH):
            with _mapped_errors():
                await self.client.add_memories(
                    app_name=app_name,
                    user_id=user_id,
                    memories=entries[start : start + _BATCH],
                    custom_metadata=metadata,
                )

    @override
    async def search_memory(self, *, app_name: str, user_id: str, query: str) -> SearchMemoryResponse:
        if not query or not query.strip():
            return SearchMemoryResponse()
        with _mapped_errors():
            response = await self.client.search_memory(
                app_name=app_name, user_id=user_id, query=query, page_size=self.max_results
            )
        return SearchMemoryResponse(memories=[_entry_from_pb(r.memory) for r in response.results])

    @override
    async def delete_memory(self, *, app_name: str, user_id: str, memory_id: str | None = None) -> None:
        if not memory_id:
            return
        with _mapped_errors():
            await self.client.delete_memory(app_name=app_name, user_id=user_id, memory_id=memory_id)

    async def delete_session_memories(self, *, app_name: str, user_id: str, session_id: str) -> int:
        """Deletes every memory made from one session; answers how many."""
        with _mapped_errors():
            response = await self.client.delete_session_memories(
                app_name=app_name, user_id=user_id, session_id=session_id
            )
        return response.memories_deleted


def _entry_to_pb(entry: MemoryEntry) -> pb.Memory:
    message = pb.Memory(
        id=entry.id or "",
        author=entry.author or "",
        content=_convert.content_to_pb(entry.content.model_dump(mode="json", exclude_none=True)),
        custom_metadata=_convert.to_struct(to_jsonable_python(entry.custom_metadata)),
    )
    if entry.timestamp:
        try:
            when = datetime.fromisoformat(entry.timestamp)
        except ValueError:
            raise ValueError(f"MemoryEntry.timestamp {entry.timestamp!r} is not ISO 8601") from None
        # A naive time is local time, as ADK's format_timestamp writes it.
        message.timestamp.CopyFrom(_convert.to_timestamp(when.timestamp()))
    return message


def _entry_from_pb(message: pb.Memory) -> MemoryEntry:
    metadata: dict[str, Any] = dict(_convert.from_struct(message.custom_metadata))
    # Provenance, under the keys ADK's SqliteMemoryService uses.
    if message.session_id:
        metadata.setdefault("session_id", message.session_id)
    if message.event_id:
        metadata.setdefault("event_id", message.event_id)
    return MemoryEntry(
        id=message.id,
        content=types.Content.model_validate(_convert.content_from_pb(message.content)),
        author=message.author or None,
        timestamp=_utils.format_timestamp(_convert.from_timestamp(message.timestamp)),
        custom_metadata=metadata,
    )


class _NotFound(Exception):
    pass


@contextmanager
def _mapped_errors() -> Iterator[None]:
    try:
        yield
    except grpc.aio.AioRpcError as e:
        if e.code() == grpc.StatusCode.NOT_FOUND:
            raise _NotFound(e.details()) from e
        if e.code() == grpc.StatusCode.INVALID_ARGUMENT:
            raise ValueError(e.details()) from e
        raise
