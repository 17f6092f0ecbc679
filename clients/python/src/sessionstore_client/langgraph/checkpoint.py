"""A LangGraph checkpointer on Sessionstore's CheckpointService.

    from sessionstore_client.langgraph import SessionStoreSaver

    checkpointer = SessionStoreSaver("127.0.0.1:50051", app_name="support", user_id="u_42")
    graph = builder.compile(checkpointer=checkpointer)

Threads are scoped by app and user like sessions: the saver's `user_id`, or
`config["configurable"]["user_id"]` when a call's config carries one. Every
value goes through the saver's serializer (`serde`) on this side and is stored
as the bytes it produced, so checkpoints, metadata and writes come back exactly
as LangGraph wrote them. Channel values are stored once per channel version:
a checkpoint sends only the channels that changed (LangGraph's `new_versions`).

Needs the `langgraph` extra: `pip install 'sessionstore-client[langgraph]'`.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
import weakref
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

import grpc
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_serializable_checkpoint_metadata,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from sessionstore.v1 import checkpoint_service_pb2 as pb
from sessionstore.v1.checkpoint_service_pb2_grpc import CheckpointServiceStub

__all__ = ["SessionStoreSaver"]

# Checkpoints per ListCheckpoints page: each carries its channel values, and
# a response must stay under the server's message cap.
_PAGE_SIZE = 50
_PRUNE_STRATEGIES = {
    "keep_latest": pb.PruneThreadsRequest.STRATEGY_KEEP_LATEST,
    "delete": pb.PruneThreadsRequest.STRATEGY_DELETE,
}


class SessionStoreSaver(BaseCheckpointSaver[str]):
    """A `BaseCheckpointSaver` (sync and async) that stores checkpoints in Sessionstore.

    Args:
        target: the server's gRPC address, `host:port`.
        app_name: the app every thread belongs to.
        user_id: the user threads belong to unless a call's config names
            another in `configurable.user_id`.
        serde: LangGraph's serializer (default `JsonPlusSerializer`); use
            `EncryptedSerializer` to keep checkpoint contents opaque to the server.
        timeout: the deadline of each call, in seconds.
        credentials: channel credentials for TLS; none means plaintext.
        token: a Sessionstore bearer token, sent with every call.
        options: gRPC channel options.
    """

    def __init__(
        self,
        target: str,
        *,
        app_name: str,
        user_id: str,
        serde: SerializerProtocol | None = None,
        timeout: float | None = 30.0,
        credentials: grpc.ChannelCredentials | None = None,
        token: str | None = None,
        options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        super().__init__(serde=serde)
        self.target = target
        self.app_name = app_name
        self.user_id = user_id
        self.timeout = timeout
        self._credentials = credentials
        self._options = list(options)
        self._metadata: tuple[tuple[str, str], ...] = (("authorization", f"Bearer {token}"),) if token else ()
        self._lock = threading.Lock()
        self._sync: tuple[grpc.Channel, CheckpointServiceStub] | None = None
        # A grpc.aio channel belongs to the event loop it was made on.
        self._aio: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, tuple[grpc.aio.Channel, CheckpointServiceStub]
        ] = weakref.WeakKeyDictionary()

    # -- channels ---------------------------------------------------------

    def _stub(self) -> CheckpointServiceStub:
        with self._lock:
            if self._sync is None:
                if self._credentials is None:
                    channel = grpc.insecure_channel(self.target, options=self._options)
                else:
                    channel = grpc.secure_channel(self.target, self._credentials, options=self._options)
                self._sync = (channel, CheckpointServiceStub(channel))
            return self._sync[1]

    def _astub(self) -> CheckpointServiceStub:
        loop = asyncio.get_running_loop()
        if loop not in self._aio:
            if self._credentials is None:
                channel = grpc.aio.insecure_channel(self.target, options=self._options)
            else:
                channel = grpc.aio.secure_channel(self.target, self._credentials, options=self._options)
            self._aio[loop] = (channel, CheckpointServiceStub(channel))
        return self._aio[loop][1]

    def close(self) -> None:
        """Closes the blocking channel."""
        with self._lock:
            if self._sync is not None:
                self._sync[0].close()
                self._sync = None

    async def aclose(self) -> None:
        """Closes the running event loop's channel."""
        entry = self._aio.pop(asyncio.get_running_loop(), None)
        if entry is not None:
            await entry[0].close()

    def __enter__(self) -> SessionStoreSaver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> SessionStoreSaver:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _call(self, method: str, request: Any) -> Any:
        return getattr(self._stub(), method)(request, timeout=self.timeout, metadata=self._metadata)

    async def _acall(self, method: str, request: Any) -> Any:
        return await getattr(self._astub(), method)(request, timeout=self.timeout, metadata=self._metadata)

    # -- requests and answers (shared by both APIs) -----------------------

    def _user(self, config: RunnableConfig | None) -> str:
        configurable = (config or {}).get("configurable") or {}
        return str(configurable.get("user_id") or self.user_id)

    def _typed(self, value: Any) -> pb.TypedValue:
        type_, data = self.serde.dumps_typed(value)
        return pb.TypedValue(type=type_, data=data)

    def _put_request(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> tuple[pb.PutCheckpointRequest, RunnableConfig]:
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        checkpoint_ns = configurable.get("checkpoint_ns", "") or ""
        body = {k: v for k, v in checkpoint.items() if k != "channel_values"}
        values = checkpoint["channel_values"]
        md = get_serializable_checkpoint_metadata(config, metadata)
        new_values = [
            pb.ChannelValue(channel=k, version=str(v), value=self._typed(values[k]))
            if k in values
            else pb.ChannelValue(channel=k, version=str(v))
            for k, v in new_versions.items()
        ]
        request = pb.PutCheckpointRequest(
            app_name=self.app_name,
            user_id=self._user(config),
            thread_id=thread_id,
            checkpoint_ns=checkpoint_ns,
            checkpoint_id=checkpoint["id"],
            parent_checkpoint_id=configurable.get("checkpoint_id") or "",
            body=self._typed(body),
            channel_versions={k: str(v) for k, v in checkpoint["channel_versions"].items()},
            metadata=self._typed(md),
            metadata_json=_metadata_json(md),
            new_values=new_values,
        )
        next_config: RunnableConfig = {
            "configurable": {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns, "checkpoint_id": checkpoint["id"]}
        }
        return request, next_config

    def _writes_request(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str
    ) -> pb.PutWritesRequest:
        configurable = config["configurable"]
        return pb.PutWritesRequest(
            app_name=self.app_name,
            user_id=self._user(config),
            thread_id=str(configurable["thread_id"]),
            checkpoint_ns=configurable.get("checkpoint_ns", "") or "",
            checkpoint_id=configurable["checkpoint_id"],
            task_id=task_id,
            task_path=task_path,
            writes=[
                pb.PendingWrite(channel=channel, value=self._typed(value), idx=WRITES_IDX_MAP.get(channel, idx))
                for idx, (channel, value) in enumerate(writes)
            ],
            # Special writes (errors, interrupts) replace earlier ones; a
            # retried task's regular writes keep the first copy.
            replace=all(channel in WRITES_IDX_MAP for channel, _ in writes),
        )

    def _get_request(self, config: RunnableConfig) -> pb.GetCheckpointRequest:
        configurable = config["configurable"]
        return pb.GetCheckpointRequest(
            app_name=self.app_name,
            user_id=self._user(config),
            thread_id=str(configurable["thread_id"]),
            checkpoint_ns=configurable.get("checkpoint_ns", "") or "",
            checkpoint_id=get_checkpoint_id(config) or "",
        )

    def _list_request(
        self,
        config: RunnableConfig | None,
        filter: dict[str, Any] | None,
        before: RunnableConfig | None,
        limit: int | None,
    ) -> pb.ListCheckpointsRequest:
        request = pb.ListCheckpointsRequest(
            app_name=self.app_name,
            user_id=self._user(config),
            page_size=_PAGE_SIZE if limit is None else max(1, min(limit, _PAGE_SIZE)),
        )
        if config:
            configurable = config["configurable"]
            request.thread_id = str(configurable["thread_id"])
            if configurable.get("checkpoint_ns") is not None:
                request.checkpoint_ns = configurable["checkpoint_ns"]
            request.checkpoint_id = get_checkpoint_id(config) or ""
        if filter:
            request.filter_json = _metadata_json(filter)
        if before is not None:
            request.before_checkpoint_id = get_checkpoint_id(before) or ""
        return request

    def _tuple(self, cp: pb.Checkpoint) -> CheckpointTuple:
        checkpoint: Checkpoint = self.serde.loads_typed((cp.body.type, cp.body.data))
        checkpoint["channel_values"] = {
            v.channel: self.serde.loads_typed((v.value.type, v.value.data))
            for v in cp.channel_values
            if v.HasField("value")
        }

        def config_of(checkpoint_id: str) -> RunnableConfig:
            return {
                "configurable": {
                    "thread_id": cp.thread_id,
                    "checkpoint_ns": cp.checkpoint_ns,
                    "checkpoint_id": checkpoint_id,
                }
            }

        return CheckpointTuple(
            config=config_of(cp.checkpoint_id),
            checkpoint=checkpoint,
            metadata=self.serde.loads_typed((cp.metadata.type, cp.metadata.data)),
            parent_config=config_of(cp.parent_checkpoint_id) if cp.parent_checkpoint_id else None,
            pending_writes=[
                (w.task_id, w.channel, self.serde.loads_typed((w.value.type, w.value.data))) for w in cp.pending_writes
            ],
        )

    def _prune_request(self, thread_ids: Sequence[str], strategy: str) -> pb.PruneThreadsRequest:
        if isinstance(thread_ids, str):
            raise TypeError("thread_ids must be a sequence of thread IDs, not a str")
        if strategy not in _PRUNE_STRATEGIES:
            raise ValueError(f"Unknown prune strategy: {strategy!r}")
        return pb.PruneThreadsRequest(
            app_name=self.app_name,
            user_id=self.user_id,
            thread_ids=[str(t) for t in thread_ids],
            strategy=_PRUNE_STRATEGIES[strategy],
        )

    # -- blocking API -----------------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        try:
            response = self._call("GetCheckpoint", self._get_request(config))
        except grpc.RpcError as e:
            if e.code() == grpc.StatusCode.NOT_FOUND:
                return None
            raise
        return self._tuple(response.checkpoint)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        request = self._list_request(config, filter, before, limit)
        left = limit
        while left is None or left > 0:
            response = self._call("ListCheckpoints", request)
            for cp in response.checkpoints[:left]:
                yield self._tuple(cp)
            if left is not None:
                left -= len(response.checkpoints)
            if not response.next_page_token:
                return
            request.page_token = response.next_page_token

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        request, next_config = self._put_request(config, checkpoint, metadata, new_versions)
        self._call("PutCheckpoint", request)
        return next_config

    def put_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        if writes:
            self._call("PutWrites", self._writes_request(config, writes, task_id, task_path))

    def delete_thread(self, thread_id: str) -> None:
        self._call(
            "DeleteThread",
            pb.DeleteThreadRequest(app_name=self.app_name, user_id=self.user_id, thread_id=str(thread_id)),
        )

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self._call("CopyThread", self._copy_request(source_thread_id, target_thread_id))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        if run_ids:
            self._call("DeleteRuns", self._runs_request(run_ids))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        request = self._prune_request(thread_ids, strategy)
        if request.thread_ids:
            self._call("PruneThreads", request)

    # -- asyncio API ------------------------------------------------------

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        try:
            response = await self._acall("GetCheckpoint", self._get_request(config))
        except grpc.aio.AioRpcError as e:
            if e.code() == grpc.StatusCode.NOT_FOUND:
                return None
            raise
        return self._tuple(response.checkpoint)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        request = self._list_request(config, filter, before, limit)
        left = limit
        while left is None or left > 0:
            response = await self._acall("ListCheckpoints", request)
            for cp in response.checkpoints[:left]:
                yield self._tuple(cp)
            if left is not None:
                left -= len(response.checkpoints)
            if not response.next_page_token:
                return
            request.page_token = response.next_page_token

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        request, next_config = self._put_request(config, checkpoint, metadata, new_versions)
        await self._acall("PutCheckpoint", request)
        return next_config

    async def aput_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        if writes:
            await self._acall("PutWrites", self._writes_request(config, writes, task_id, task_path))

    async def adelete_thread(self, thread_id: str) -> None:
        await self._acall(
            "DeleteThread",
            pb.DeleteThreadRequest(app_name=self.app_name, user_id=self.user_id, thread_id=str(thread_id)),
        )

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await self._acall("CopyThread", self._copy_request(source_thread_id, target_thread_id))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        if run_ids:
            await self._acall("DeleteRuns", self._runs_request(run_ids))

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        request = self._prune_request(thread_ids, strategy)
        if request.thread_ids:
            await self._acall("PruneThreads", request)

    def _copy_request(self, source_thread_id: str, target_thread_id: str) -> pb.CopyThreadRequest:
        return pb.CopyThreadRequest(
            app_name=self.app_name,
            user_id=self.user_id,
            source_thread_id=str(source_thread_id),
            target_thread_id=str(target_thread_id),
        )

    def _runs_request(self, run_ids: Sequence[str]) -> pb.DeleteRunsRequest:
        if isinstance(run_ids, str):
            raise TypeError("run_ids must be a sequence of run IDs, not a str")
        return pb.DeleteRunsRequest(app_name=self.app_name, user_id=self.user_id, run_ids=[str(r) for r in run_ids])

    def get_next_version(self, current: str | None, channel: None) -> str:
        # As LangGraph's Postgres saver: a zero-padded counter (so versions
        # sort as text) and a random fraction.
        if current is None:
            current_v = 0
        elif isinstance(current, int):
            current_v = current
        else:
            current_v = int(current.split(".")[0])
        return f"{current_v + 1:032}.{random.random():016}"


def _metadata_json(metadata: Any) -> str:
    """Metadata as a JSON object for filters: what JSON cannot hold is shown as text, U+0000 dropped."""
    return json.dumps(metadata, default=repr, ensure_ascii=False).replace("\\u0000", "")
