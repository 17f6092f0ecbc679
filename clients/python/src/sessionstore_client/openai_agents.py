"""GrpcSession: an OpenAI Agents SDK `Session` backed by a Sessionstore server.

from sessionstore_client.openai_agents import GrpcSession

session = GrpcSession("conversation_123", "127.0.0.1:50051", app_name="support", user_id="u_42")
# instead of SQLiteSession("conversation_123", "conversations.db")
result = await Runner.run(agent, "Hello", session=session)

The log stays append-only: `add_items` appends one event holding the batch,
`pop_item` appends an event naming the item it removed, `clear_session`
appends an event that empties the history. Reads fold the log back into the
list of items SQLiteSession would return. Every event carries its operation
under the `openai_agents` key of the event's `extra`; other events of the
same session (an ADK agent's, say) are not items and are left alone.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc
from agents.memory.session import SessionABC
from agents.memory.session_settings import SessionSettings, coerce_session_settings, resolve_session_limit

from sessionstore.v1 import event_pb2
from sessionstore.v1 import session_service_pb2 as pb
from sessionstore_client import _convert
from sessionstore_client.client import SessionStoreClient

AUTHOR = "openai_agents"
_KEY = "openai_agents"
_PAGE_SIZE = 1000
_POP_ATTEMPTS = 100


class GrpcSession(SessionABC):
    """Conversation history of one OpenAI Agents SDK session, kept in Sessionstore.

    `session_id` is the store's session id within (`app_name`, `user_id`);
    the store session is created on the first write. Behaves like
    SQLiteSession: `get_items(limit)` gives the latest `limit` items oldest
    first (`session_settings.limit` when None; all when both are None),
    `pop_item` removes and returns the latest item (None when there is none),
    `clear_session` empties the history.
    """

    session_settings: SessionSettings | None = None

    def __init__(
        self,
        session_id: str,
        target: str | None = None,
        *,
        app_name: str,
        user_id: str,
        client: SessionStoreClient | None = None,
        session_settings: SessionSettings | dict[str, Any] | None = None,
        **client_options: Any,
    ) -> None:
        if (target is None) == (client is None):
            raise ValueError("pass exactly one of target or client")
        self.session_id = session_id
        self.app_name = app_name
        self.user_id = user_id
        self.client = client or SessionStoreClient(target, **client_options)  # type: ignore[arg-type]
        self.session_settings = (
            coerce_session_settings(session_settings) if session_settings is not None else SessionSettings()
        )

    async def close(self) -> None:
        await self.client.close()

    async def get_items(self, limit: int | None = None) -> list[Any]:
        limit = resolve_session_limit(limit, self.session_settings)
        if limit is not None and limit == 0:
            return []
        # SQLite reads a negative LIMIT as no limit at all.
        wanted = None if limit is None or limit < 0 else limit
        newest_first = [item async for _, _, item in self._items_newest_first(wanted)]
        return newest_first[::-1]

    async def add_items(self, items: list[Any]) -> None:
        if not items:
            return
        try:
            await self._append({"add": list(items)})
        except grpc.aio.AioRpcError as e:
            # The first write makes the store session, as SQLiteSession's does.
            if e.code() != grpc.StatusCode.NOT_FOUND:
                raise
            await self._create_session()
            await self._append({"add": list(items)})

    async def pop_item(self) -> Any | None:
        for _ in range(_POP_ATTEMPTS):
            revision = await self._revision()
            if revision is None:
                return None
            latest = [found async for found in self._items_newest_first(1)]
            if not latest:
                return None
            event_id, index, item = latest[0]
            try:
                await self._append({"pop": {"event_id": event_id, "index": index}}, expected_revision=revision)
            except grpc.aio.AioRpcError as e:
                # Another writer got in between: read again and pop what is latest now.
                if e.code() == grpc.StatusCode.ABORTED:
                    continue
                raise
            return item
        raise RuntimeError(f"pop_item: session {self.session_id} kept changing under {_POP_ATTEMPTS} attempts")

    async def clear_session(self) -> None:
        if await self._revision() is None:
            return
        await self._append({"clear": True})

    # --- the log ---------------------------------------------------------------

    async def _items_newest_first(self, limit: int | None) -> AsyncIterator[tuple[str, int, Any]]:
        """(event id, index in its batch, item) of live items, newest first.

        Reading backwards, a pop is seen before the item it removed and a
        clear ends the history, so a window needs only the log's tail.
        """
        popped: set[tuple[str, int]] = set()
        found = 0
        page_token = ""
        while True:
            try:
                response = await self.client.list_events(
                    app_name=self.app_name,
                    user_id=self.user_id,
                    session_id=self.session_id,
                    page_size=_PAGE_SIZE,
                    page_token=page_token,
                    order=pb.ListEventsRequest.ORDER_DESCENDING,
                )
            except grpc.aio.AioRpcError as e:
                if e.code() == grpc.StatusCode.NOT_FOUND:
                    return
                raise
            for event in response.events:
                op = _operation(event)
                if op is None:
                    continue
                if op.get("clear"):
                    return
                pop = op.get("pop")
                if isinstance(pop, dict):
                    popped.add((str(pop.get("event_id")), int(pop.get("index", -1))))
                added = op.get("add")
                if isinstance(added, list):
                    for index in range(len(added) - 1, -1, -1):
                        if (event.id, index) in popped:
                            continue
                        yield event.id, index, added[index]
                        found += 1
                        if limit is not None and found >= limit:
                            return
            page_token = response.next_page_token
            if not page_token:
                return

    async def _revision(self) -> int | None:
        try:
            response = await self.client.get_session(
                app_name=self.app_name, user_id=self.user_id, session_id=self.session_id, num_recent_events=0
            )
        except grpc.aio.AioRpcError as e:
            if e.code() == grpc.StatusCode.NOT_FOUND:
                return None
            raise
        return response.session.revision

    async def _append(self, op: dict[str, Any], expected_revision: int | None = None) -> None:
        event = event_pb2.Event(author=AUTHOR)
        event.extra.CopyFrom(_convert.to_struct({_KEY: op}, "extra"))
        request = pb.AppendEventRequest(
            app_name=self.app_name, user_id=self.user_id, session_id=self.session_id, event=event
        )
        if expected_revision is not None:
            request.expected_revision = expected_revision
        await self.client.append_event(request)

    async def _create_session(self) -> None:
        try:
            await self.client.create_session(app_name=self.app_name, user_id=self.user_id, session_id=self.session_id)
        except grpc.aio.AioRpcError as e:
            if e.code() != grpc.StatusCode.ALREADY_EXISTS:
                raise


def _operation(event: event_pb2.Event) -> dict[str, Any] | None:
    if not event.HasField("extra") or _KEY not in event.extra.fields:
        return None
    op = _convert.from_struct(event.extra).get(_KEY)
    return op if isinstance(op, dict) else None
