"""A thin asyncio client for sessionstore.v1.MemoryService."""

from __future__ import annotations

import asyncio
import logging
import uuid
import weakref
from collections.abc import Sequence
from typing import Any, TypeVar

import grpc
from google.protobuf.message import Message

from sessionstore.v1 import memory_service_pb2 as pb
from sessionstore.v1.memory_service_pb2_grpc import MemoryServiceStub
from sessionstore_client._target import resolve_target
from sessionstore_client.client import DEFAULT_MAX_MESSAGE_BYTES
from sessionstore_client.retry import RETRIED_METHODS, RetryPolicy

_Request = TypeVar("_Request", bound=Message)
_DEFAULT: Any = object()

logger = logging.getLogger(__name__)


class MemoryClient:
    """Calls MemoryService over gRPC (grpc.aio), with the options of SessionStoreClient.

    Each method takes a request message or its fields as keyword arguments and
    returns the response message; failures raise `grpc.aio.AioRpcError`.
    Every call that fails with UNAVAILABLE is tried again as `retry` says,
    within the call's deadline (see RETRIED_METHODS); add_memories gives an
    entry without an id a fresh UUID before the first try, so a repeat
    replaces the entry the first try stored instead of adding a second.

        async with MemoryClient("127.0.0.1:50051") as memory:
            found = await memory.search_memory(app_name="support", user_id="u_42", query="shipping address")
    """

    def __init__(
        self,
        target: str,
        *,
        timeout: float | None = 30.0,
        credentials: grpc.ChannelCredentials | None = None,
        options: Sequence[tuple[str, Any]] = (),
        metadata: Sequence[tuple[str, str]] = (),
        retry: RetryPolicy | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        self.target = target
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        # The same target forms, TLS choice and message limits as SessionStoreClient.
        self._grpc_target, self._credentials = resolve_target(target, credentials)
        # The channel reconnects no slower than calls retry; the caller's own
        # options win.
        defaults: dict[str, Any] = {
            "grpc.initial_reconnect_backoff_ms": int(self.retry.initial_backoff * 1000),
            "grpc.max_reconnect_backoff_ms": int(self.retry.max_backoff * 1000),
            "grpc.max_receive_message_length": max_message_bytes,
            "grpc.max_send_message_length": max_message_bytes,
        }
        self._options = list({**defaults, **dict(options)}.items())
        self._metadata = tuple(metadata)
        # One channel per event loop, as in SessionStoreClient: a grpc.aio
        # channel belongs to the loop it was made on.
        self._stubs: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, tuple[grpc.aio.Channel, MemoryServiceStub]
        ] = weakref.WeakKeyDictionary()

    @property
    def stub(self) -> MemoryServiceStub:
        loop = asyncio.get_running_loop()
        if loop not in self._stubs:
            if self._credentials is None:
                channel = grpc.aio.insecure_channel(self._grpc_target, options=self._options)
            else:
                channel = grpc.aio.secure_channel(self._grpc_target, self._credentials, options=self._options)
            self._stubs[loop] = (channel, MemoryServiceStub(channel))
        return self._stubs[loop][1]

    async def close(self) -> None:
        entry = self._stubs.pop(asyncio.get_running_loop(), None)
        if entry is not None:
            await entry[0].close()

    async def __aenter__(self) -> MemoryClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def add_session_to_memory(
        self, request: pb.AddSessionToMemoryRequest | None = None, *, timeout: float | None = _DEFAULT, **fields: Any
    ) -> pb.AddSessionToMemoryResponse:
        return await self._unary("AddSessionToMemory", _request(pb.AddSessionToMemoryRequest, request, fields), timeout)

    async def add_events_to_memory(
        self, request: pb.AddEventsToMemoryRequest | None = None, *, timeout: float | None = _DEFAULT, **fields: Any
    ) -> pb.AddEventsToMemoryResponse:
        return await self._unary("AddEventsToMemory", _request(pb.AddEventsToMemoryRequest, request, fields), timeout)

    async def add_memories(
        self, request: pb.AddMemoriesRequest | None = None, *, timeout: float | None = _DEFAULT, **fields: Any
    ) -> pb.AddMemoriesResponse:
        message = _request(pb.AddMemoriesRequest, request, fields)
        if any(not m.id for m in message.memories):
            # Fixed before the first try, so that every try is the same
            # write; the caller's message is left as it was.
            fixed = pb.AddMemoriesRequest()
            fixed.CopyFrom(message)
            for m in fixed.memories:
                if not m.id:
                    m.id = str(uuid.uuid4())
            message = fixed
        return await self._unary("AddMemories", message, timeout)

    async def search_memory(
        self, request: pb.SearchMemoryRequest | None = None, *, timeout: float | None = _DEFAULT, **fields: Any
    ) -> pb.SearchMemoryResponse:
        return await self._unary("SearchMemory", _request(pb.SearchMemoryRequest, request, fields), timeout)

    async def list_memories(
        self, request: pb.ListMemoriesRequest | None = None, *, timeout: float | None = _DEFAULT, **fields: Any
    ) -> pb.ListMemoriesResponse:
        return await self._unary("ListMemories", _request(pb.ListMemoriesRequest, request, fields), timeout)

    async def get_memory(
        self, request: pb.GetMemoryRequest | None = None, *, timeout: float | None = _DEFAULT, **fields: Any
    ) -> pb.GetMemoryResponse:
        return await self._unary("GetMemory", _request(pb.GetMemoryRequest, request, fields), timeout)

    async def delete_memory(
        self, request: pb.DeleteMemoryRequest | None = None, *, timeout: float | None = _DEFAULT, **fields: Any
    ) -> pb.DeleteMemoryResponse:
        return await self._unary("DeleteMemory", _request(pb.DeleteMemoryRequest, request, fields), timeout)

    async def delete_session_memories(
        self, request: pb.DeleteSessionMemoriesRequest | None = None, *, timeout: float | None = _DEFAULT, **fields: Any
    ) -> pb.DeleteSessionMemoriesResponse:
        return await self._unary(
            "DeleteSessionMemories", _request(pb.DeleteSessionMemoriesRequest, request, fields), timeout
        )

    async def _unary(self, method: str, request: Message, timeout: float | None) -> Any:
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
                return await call(request, timeout=left, metadata=self._metadata)
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
