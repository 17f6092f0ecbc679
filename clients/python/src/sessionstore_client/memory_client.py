"""A thin asyncio client for sessionstore.v1.MemoryService."""

from __future__ import annotations

import logging
import uuid
from typing import Any

from sessionstore.v1 import memory_service_pb2 as pb
from sessionstore.v1.memory_service_pb2_grpc import MemoryServiceStub
from sessionstore_client._grpc_client import DEFAULT, GrpcClient, request_of

_DEFAULT = DEFAULT
_request = request_of


class MemoryClient(GrpcClient[MemoryServiceStub]):
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

    _stub_class = MemoryServiceStub
    _logger = logging.getLogger(__name__)

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
