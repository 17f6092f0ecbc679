"""A LangGraph `BaseStore` on Sessionstore's MemoryService.

    from sessionstore_client.langgraph import SessionStoreStore

    store = SessionStoreStore("127.0.0.1:50051", app_name="support", user_id="u_42")
    graph = builder.compile(checkpointer=..., store=store)

Each item is one memory entry of the user, so what a LangGraph agent puts is
what an ADK agent's `search_memory` finds for the same app and user, and what
ADK stored comes back from `search`:

- the namespace is the entry's `namespace` (labels joined by "."), the key
  picks a stable entry id, and the value is kept exactly (as JSON text) and
  as a JSON object for filters, in the entry's custom metadata;
- the entry's text, which full-text search reads and ADK shows its model, is
  the indexed fields of the value (all of it by default; `index=False`: none);
- `ttl` (minutes) becomes the entry's expiry; reads refresh it unless told not to.

Entries that did not come from a LangGraph store (ADK's sessions and memories)
read as items with the namespace they have (usually `()`), their entry id as
key and `{"text", "author", "metadata"}` as value.

Text search is the memory service's (ranked words); there is no embedding
index, so `search(query=...)` ranks by words, not by meaning.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
import weakref
from collections.abc import Generator, Iterable, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

import grpc
from google.protobuf import json_format, struct_pb2, timestamp_pb2
from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
)

from sessionstore.v1 import event_pb2
from sessionstore.v1 import memory_service_pb2 as pb
from sessionstore.v1.memory_service_pb2_grpc import MemoryServiceStub

__all__ = ["SessionStoreStore"]

# The custom-metadata key under which an entry keeps what LangGraph put.
_MARK = "langgraph"
_AUTHOR = "langgraph"
# Pages of ListMemories; the most SearchMemory returns at once.
_LIST_PAGE = 500
_MAX_SEARCH = 100

_Steps = Generator[tuple[str, Any], Any, Any]


class SessionStoreStore(BaseStore):
    """A LangGraph store (blocking and asyncio) over MemoryService, scoped to one app and user.

    Args:
        target: the server's gRPC address, `host:port`.
        app_name, user_id: whose memory this is.
        ttl: LangGraph's `TTLConfig` (`default_ttl` in minutes, `refresh_on_read`).
        index: LangGraph's index setting reduced to what text search needs:
            `{"fields": ["$"]}` (default: the whole value) or a list of field paths.
        timeout, credentials, token, options: as for `SessionStoreSaver`.
    """

    supports_ttl = True

    def __init__(
        self,
        target: str,
        *,
        app_name: str,
        user_id: str,
        ttl: TTLConfig | None = None,
        index: dict[str, Any] | None = None,
        timeout: float | None = 30.0,
        credentials: grpc.ChannelCredentials | None = None,
        token: str | None = None,
        options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        self.target = target
        self.app_name = app_name
        self.user_id = user_id
        self.ttl_config = ttl
        self.index_fields: list[str] = list((index or {}).get("fields") or ["$"])
        self.timeout = timeout
        self._credentials = credentials
        self._options = list(options)
        self._metadata: tuple[tuple[str, str], ...] = (("authorization", f"Bearer {token}"),) if token else ()
        self._lock = threading.Lock()
        self._sync: tuple[grpc.Channel, MemoryServiceStub] | None = None
        self._aio: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[grpc.aio.Channel, MemoryServiceStub]] = (
            weakref.WeakKeyDictionary()
        )

    # -- channels ---------------------------------------------------------

    def _stub(self) -> MemoryServiceStub:
        with self._lock:
            if self._sync is None:
                channel = (
                    grpc.insecure_channel(self.target, options=self._options)
                    if self._credentials is None
                    else grpc.secure_channel(self.target, self._credentials, options=self._options)
                )
                self._sync = (channel, MemoryServiceStub(channel))
            return self._sync[1]

    def _astub(self) -> MemoryServiceStub:
        loop = asyncio.get_running_loop()
        if loop not in self._aio:
            channel = (
                grpc.aio.insecure_channel(self.target, options=self._options)
                if self._credentials is None
                else grpc.aio.secure_channel(self.target, self._credentials, options=self._options)
            )
            self._aio[loop] = (channel, MemoryServiceStub(channel))
        return self._aio[loop][1]

    def close(self) -> None:
        with self._lock:
            if self._sync is not None:
                self._sync[0].close()
                self._sync = None

    async def aclose(self) -> None:
        entry = self._aio.pop(asyncio.get_running_loop(), None)
        if entry is not None:
            await entry[0].close()

    # -- BaseStore --------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        results: list[Result] = []
        for op in ops:
            steps = self._steps(op)
            try:
                step = next(steps)
                while True:
                    method, request = step
                    try:
                        response = getattr(self._stub(), method)(request, timeout=self.timeout, metadata=self._metadata)
                    except grpc.RpcError as e:
                        step = steps.throw(e)
                        continue
                    step = steps.send(response)
            except StopIteration as done:
                results.append(done.value)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        results: list[Result] = []
        for op in ops:
            steps = self._steps(op)
            try:
                step = next(steps)
                while True:
                    method, request = step
                    try:
                        call = getattr(self._astub(), method)
                        response = await call(request, timeout=self.timeout, metadata=self._metadata)
                    except grpc.RpcError as e:
                        step = steps.throw(e)
                        continue
                    step = steps.send(response)
            except StopIteration as done:
                results.append(done.value)
        return results

    # -- each operation, as the calls it makes ----------------------------
    # Written once as generators of (method, request) that receive each
    # answer, so the blocking and the asyncio API run the same steps.

    def _steps(self, op: Op) -> _Steps:
        if isinstance(op, GetOp):
            return self._get(op)
        if isinstance(op, PutOp):
            return self._put(op)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise ValueError(f"unknown store operation {type(op).__name__}")

    def _scope(self) -> dict[str, str]:
        return {"app_name": self.app_name, "user_id": self.user_id}

    def _get(self, op: GetOp) -> _Steps:
        try:
            response = yield (
                "GetMemory",
                pb.GetMemoryRequest(**self._scope(), memory_id=_entry_id(op.namespace, op.key)),
            )
        except grpc.RpcError as e:
            if e.code() == grpc.StatusCode.NOT_FOUND:
                return None
            raise
        memory = response.memory
        if self._refresh(op.refresh_ttl) and (refreshed := self._refreshed(memory)) is not None:
            memory = (yield "AddMemories", refreshed).memories[0]
        return _item(memory)

    def _put(self, op: PutOp) -> _Steps:
        entry_id = _entry_id(op.namespace, op.key)
        if op.value is None:
            yield "DeleteMemory", pb.DeleteMemoryRequest(**self._scope(), memory_id=entry_id)
            return None
        fields = self.index_fields if op.index is None else ([] if op.index is False else list(op.index))
        text = _index_text(op.value, fields)
        mark: dict[str, Any] = {
            "namespace": list(op.namespace),
            "key": op.key,
            "value_json": json.dumps(op.value, ensure_ascii=False),
        }
        if op.ttl is not None:
            mark["ttl_minutes"] = op.ttl
        metadata = struct_pb2.Struct()
        metadata.update({_MARK: mark, "value": json.loads(json.dumps(op.value, default=str))})
        memory = pb.Memory(
            id=entry_id,
            namespace=_ns_text(op.namespace),
            author=_AUTHOR,
            content=event_pb2.Content(role="user", parts=[event_pb2.Part(text=text)]),
            custom_metadata=metadata,
        )
        if op.ttl is not None:
            memory.expire_time.CopyFrom(_expiry(op.ttl))
        yield "AddMemories", pb.AddMemoriesRequest(**self._scope(), memories=[memory])
        return None

    def _filter(self, prefix: tuple[str, ...], eq: dict[str, Any]) -> pb.MemoryFilter:
        f = pb.MemoryFilter(namespace_prefix=_ns_text(prefix))
        if eq:
            f.metadata.update({"value": eq})
        return f

    def _search(self, op: SearchOp) -> _Steps:
        eq, rest = _split_filter(op.filter or {})
        wanted = op.offset + op.limit
        matches: list[tuple[Any, float | None]] = []
        if op.query:
            request = pb.SearchMemoryRequest(
                **self._scope(),
                query=op.query,
                page_size=min(_MAX_SEARCH, max(1, wanted)),
                filter=self._filter(op.namespace_prefix, eq),
            )
            response = yield "SearchMemory", request
            matches = [(r.memory, r.score) for r in response.results]
        else:
            request = pb.ListMemoriesRequest(
                **self._scope(), page_size=_LIST_PAGE, filter=self._filter(op.namespace_prefix, eq)
            )
            while len(matches) < wanted:
                response = yield "ListMemories", request
                matches.extend((m, None) for m in response.memories if _in_prefix(m, op.namespace_prefix))
                if not response.next_page_token:
                    break
                request.page_token = response.next_page_token
        picked = [(m, s) for m, s in matches if _in_prefix(m, op.namespace_prefix) and _matches(_value(m), rest)]
        picked = picked[op.offset : op.offset + op.limit]
        results: list[SearchItem] = []
        for memory, score in picked:
            if self._refresh(op.refresh_ttl) and (refreshed := self._refreshed(memory)) is not None:
                memory = (yield "AddMemories", refreshed).memories[0]
            item = _item(memory)
            results.append(
                SearchItem(
                    namespace=item.namespace,
                    key=item.key,
                    value=item.value,
                    created_at=item.created_at,
                    updated_at=item.updated_at,
                    score=score,
                )
            )
        return results

    def _list_namespaces(self, op: ListNamespacesOp) -> _Steps:
        # The memory service lists entries, not namespaces: the distinct
        # namespaces of the user's entries, narrowed on the server by a fixed
        # leading prefix when the conditions start with one.
        fixed: tuple[str, ...] = ()
        for condition in op.match_conditions or ():
            if condition.match_type == "prefix":
                for label in condition.path:
                    if label == "*":
                        break
                    fixed += (label,)
                break
        request = pb.ListMemoriesRequest(**self._scope(), page_size=_LIST_PAGE, filter=self._filter(fixed, {}))
        seen: set[tuple[str, ...]] = set()
        while True:
            response = yield "ListMemories", request
            for m in response.memories:
                ns = _namespace(m)
                if _matches_conditions(ns, op.match_conditions or ()):
                    seen.add(ns[: op.max_depth] if op.max_depth is not None else ns)
            if not response.next_page_token:
                break
            request.page_token = response.next_page_token
        return sorted(seen)[op.offset : op.offset + op.limit]

    def _refresh(self, asked: bool | None) -> bool:
        if asked is not None:
            return asked
        return bool((self.ttl_config or {}).get("refresh_on_read", True))

    def _refreshed(self, memory: pb.Memory) -> pb.AddMemoriesRequest | None:
        """The entry again with its expiry moved on, when LangGraph gave it a TTL."""
        mark = _mark(memory)
        if not mark or mark.get("ttl_minutes") is None:
            return None
        again = pb.Memory()
        again.CopyFrom(memory)
        again.ClearField("create_time")
        again.ClearField("has_embedding")
        again.expire_time.CopyFrom(_expiry(float(mark["ttl_minutes"])))
        return pb.AddMemoriesRequest(**self._scope(), memories=[again])


def _ns_text(namespace: tuple[str, ...]) -> str:
    # LangGraph's own text form of a namespace: labels cannot hold ".".
    return ".".join(namespace)


def _entry_id(namespace: tuple[str, ...], key: str) -> str:
    """A stable entry id for (namespace, key): entry ids are unique per user and at most 128 characters."""
    digest = hashlib.sha256(json.dumps([list(namespace), key], ensure_ascii=False).encode()).hexdigest()
    return f"lg-{digest[:40]}"


def _mark(memory: pb.Memory) -> dict[str, Any] | None:
    if _MARK not in memory.custom_metadata.fields:
        return None
    mark = json_format.MessageToDict(memory.custom_metadata.fields[_MARK].struct_value)
    return mark if isinstance(mark.get("value_json"), str) else None


def _namespace(memory: pb.Memory) -> tuple[str, ...]:
    mark = _mark(memory)
    if mark is not None:
        return tuple(mark["namespace"])
    return tuple(memory.namespace.split(".")) if memory.namespace else ()


def _in_prefix(memory: pb.Memory, prefix: tuple[str, ...]) -> bool:
    return _namespace(memory)[: len(prefix)] == tuple(prefix)


def _text(memory: pb.Memory) -> str:
    return "\n".join(p.text for p in memory.content.parts if p.WhichOneof("data") == "text")


def _value(memory: pb.Memory) -> dict[str, Any]:
    mark = _mark(memory)
    if mark is not None:
        return json.loads(mark["value_json"])
    return {
        "text": _text(memory),
        "author": memory.author,
        "metadata": json_format.MessageToDict(memory.custom_metadata),
    }


def _time(ts: timestamp_pb2.Timestamp) -> datetime:
    return ts.ToDatetime(tzinfo=timezone.utc)


def _item(memory: pb.Memory) -> Item:
    mark = _mark(memory)
    key = mark["key"] if mark is not None else memory.id
    created = _time(memory.timestamp) if memory.HasField("timestamp") else _time(memory.create_time)
    return Item(
        value=_value(memory),
        key=key,
        namespace=_namespace(memory),
        created_at=created,
        updated_at=_time(memory.create_time),
    )


def _expiry(minutes: float) -> timestamp_pb2.Timestamp:
    ts = timestamp_pb2.Timestamp()
    ts.FromDatetime(datetime.now(timezone.utc) + timedelta(minutes=minutes))
    return ts


def _index_text(value: dict[str, Any], fields: list[str]) -> str:
    """The text full-text search reads: the indexed fields' strings (other values as JSON)."""
    parts: list[str] = []
    for field in fields:
        for found in _at_path(value, field):
            parts.extend(_strings(found))
    return "\n".join(p for p in parts if p)


def _at_path(value: Any, path: str) -> list[Any]:
    if path in ("$", ""):
        return [value]
    current: list[Any] = [value]
    for step in path.split("."):
        nxt: list[Any] = []
        for v in current:
            if step.endswith("[*]") and isinstance(v, dict) and isinstance(v.get(step[:-3]), list):
                nxt.extend(v[step[:-3]])
            elif isinstance(v, dict) and step in v:
                nxt.append(v[step])
        current = nxt
    return current


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [json.dumps(value)] if value is not None else []


_OPERATORS = {"$eq", "$ne", "$gt", "$gte", "$lt", "$lte"}


def _split_filter(f: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Equalities the server can check (JSON containment) and comparisons checked here."""
    eq: dict[str, Any] = {}
    rest: dict[str, Any] = {}
    for k, v in f.items():
        if isinstance(v, dict) and v and set(v) <= _OPERATORS:
            rest[k] = v
        else:
            eq[k] = v
            rest[k] = v  # checked here too: containment accepts 1 for 1.0 and more
    return json.loads(json.dumps(eq, default=str)), rest


def _matches(value: dict[str, Any], f: dict[str, Any]) -> bool:
    for k, cond in f.items():
        actual = value.get(k)
        if isinstance(cond, dict) and cond and set(cond) <= _OPERATORS:
            for op, expected in cond.items():
                try:
                    ok = {
                        "$eq": actual == expected,
                        "$ne": actual != expected,
                        "$gt": actual is not None and actual > expected,
                        "$gte": actual is not None and actual >= expected,
                        "$lt": actual is not None and actual < expected,
                        "$lte": actual is not None and actual <= expected,
                    }[op]
                except TypeError:
                    ok = False
                if not ok:
                    return False
        elif isinstance(cond, dict) and isinstance(actual, dict):
            if not _matches(actual, cond):
                return False
        elif actual != cond:
            return False
    return True


def _matches_conditions(ns: tuple[str, ...], conditions: Sequence[MatchCondition]) -> bool:
    for c in conditions:
        path = tuple(c.path)
        if len(ns) < len(path):
            return False
        part = ns[: len(path)] if c.match_type == "prefix" else ns[len(ns) - len(path) :]
        if any(p != "*" and p != n for p, n in zip(path, part, strict=True)):
            return False
    return True
