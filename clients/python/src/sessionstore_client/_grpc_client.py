"""What every Sessionstore service client shares: one channel per event loop, deadlines and retries."""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Callable, Sequence
from typing import Any, Generic, Self, TypeVar

import grpc
from google.protobuf.message import Message

from sessionstore_client._target import resolve_target
from sessionstore_client.retry import RETRIED_METHODS, RetryPolicy

_Request = TypeVar("_Request", bound=Message)
_Stub = TypeVar("_Stub")
DEFAULT: Any = object()
"""The `timeout` of a call that takes the client's own."""

DEFAULT_TIMEOUT = 30.0
"""Seconds a unary call may take, retries included, unless the call says otherwise."""
DEFAULT_MAX_MESSAGE_BYTES = 16 << 20
"""The server's default limit (gRPC's own 4 MiB would refuse large sessions)."""


class GrpcClient(Generic[_Stub]):
    """A grpc.aio channel per event loop for one service's stub, and the retrying unary call."""

    _stub_class: Callable[[grpc.aio.Channel], _Stub]
    _logger: logging.Logger

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
        self._stubs: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[grpc.aio.Channel, _Stub]] = (
            weakref.WeakKeyDictionary()
        )

    @property
    def stub(self) -> _Stub:
        """The generated stub for the running event loop's channel."""
        loop = asyncio.get_running_loop()
        if loop not in self._stubs:
            if self._credentials is None:
                channel = grpc.aio.insecure_channel(self._grpc_target, options=self._options)
            else:
                channel = grpc.aio.secure_channel(self._grpc_target, self._credentials, options=self._options)
            self._stubs[loop] = (channel, type(self)._stub_class(channel))
        return self._stubs[loop][1]

    async def close(self) -> None:
        """Closes the running loop's channel (channels of ended loops are already dead)."""
        entry = self._stubs.pop(asyncio.get_running_loop(), None)
        if entry is not None:
            await entry[0].close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _unary(self, method: str, request: Message, timeout: float | None) -> Any:
        response, _ = await self._tries(method, request, timeout)
        return response

    async def _tries(self, method: str, request: Message, timeout: float | None) -> tuple[Any, int]:
        """The call's answer and how many tries it took (RETRIED_METHODS retry UNAVAILABLE)."""
        call = getattr(self.stub, method)
        if timeout is DEFAULT:
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
                self._logger.info(
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


def request_of(cls: type[_Request], request: _Request | None, fields: dict[str, Any]) -> _Request:
    """The request message a call was given, or one made of its keyword fields."""
    if request is not None and fields:
        raise TypeError("pass either a request message or its fields, not both")
    return request if request is not None else cls(**fields)
