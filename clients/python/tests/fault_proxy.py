"""A TCP proxy that can swallow the server's answers and then cut every connection.

It stands between a real client and the real server to produce the one fault a
client cannot tell apart from a lost request: the server did the work, and the
answer never arrived.
"""

from __future__ import annotations

import asyncio
import contextlib


class FaultProxy:
    def __init__(self, upstream: str) -> None:
        host, _, port = upstream.rpartition(":")
        self._upstream = (host, int(port))
        self._holding = False
        self._connections: set[tuple[asyncio.StreamWriter, asyncio.StreamWriter]] = set()
        self._server: asyncio.Server | None = None
        self.target = ""

    async def __aenter__(self) -> FaultProxy:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.target = f"127.0.0.1:{self._server.sockets[0].getsockname()[1]}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.cut()
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    def hold_answers(self) -> None:
        """From now on, bytes from the server are dropped (requests still go through)."""
        self._holding = True

    def cut(self) -> None:
        """Resets every open connection and stops dropping; new connections work normally."""
        self._holding = False
        for client, upstream in list(self._connections):
            client.transport.abort()
            upstream.transport.abort()
        self._connections.clear()

    async def _accept(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        upstream_r, upstream_w = await asyncio.open_connection(*self._upstream)
        pair = (client_w, upstream_w)
        self._connections.add(pair)
        try:
            await asyncio.gather(
                self._pump(client_r, upstream_w, answers=False),
                self._pump(upstream_r, client_w, answers=True),
            )
        finally:
            self._connections.discard(pair)
            client_w.transport.abort()
            upstream_w.transport.abort()

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, answers: bool) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            while data := await reader.read(65536):
                if answers and self._holding:
                    continue
                writer.write(data)
                await writer.drain()
        writer.transport.abort()
