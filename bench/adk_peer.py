"""The ADK peer of the benchmark: google-adk's DatabaseSessionService on
PostgreSQL (postgresql+asyncpg), driven through its Python API.

Reads one JSON command per line on stdin and answers one JSON line on stdout
(bench/adk.ts drives it). Each command opens its own service and closes it,
so the peer holds no connections between workloads. Latencies are returned
raw, in milliseconds; the harness computes the percentiles for every system
the same way.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
import traceback
from datetime import datetime, timezone
from typing import Any

import asyncpg
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.sessions.base_session_service import GetSessionConfig
from google.adk.sessions.database_session_service import DatabaseSessionService
from google.genai import types

TURN_TEXT = (
    "Where is my order? It was supposed to arrive on Tuesday and the tracking page has not changed since Monday morning."
)
LIST_APP = "bench-list"
LIST_USERS = 100


class Peer:
    def __init__(self, url: str, pool_size: int) -> None:
        # postgres://… for asyncpg's bulk loads, postgresql+asyncpg://… for ADK.
        self.pg_url = url
        self.adk_url = "postgresql+asyncpg://" + url.split("://", 1)[1]
        self.pool_size = pool_size

    def service(self) -> DatabaseSessionService:
        # The same number of connections as the sessionstore server's pool.
        return DatabaseSessionService(self.adk_url, pool_size=self.pool_size, max_overflow=0)

    async def init(self) -> dict[str, Any]:
        svc = self.service()
        try:
            await svc.prepare_tables()
        finally:
            await svc.close()
        return {}

    async def append(self, tag: str, writers: int, hot: bool, warmup: float, seconds: float) -> dict[str, Any]:
        svc = self.service()
        try:
            sessions = []
            for w in range(1 if hot else writers):
                sessions.append(await svc.create_session(app_name="bench-append", user_id=f"u{w}", session_id=f"{tag}-{w}"))

            async def loop(w: int, deadline: float, latencies: list[float] | None, counter: list[int]) -> None:
                session = sessions[0 if hot else w]
                while time.perf_counter() < deadline:
                    n = counter[0]
                    counter[0] += 1
                    event = Event(
                        invocation_id=f"inv-{w}-{n}",
                        author="user",
                        content=types.Content(role="user", parts=[types.Part(text=TURN_TEXT)]),
                        actions=EventActions(state_delta={"turn": n}),
                    )
                    began = time.perf_counter()
                    await svc.append_event(session, event)
                    if latencies is not None:
                        latencies.append((time.perf_counter() - began) * 1000)

            counter = [0]
            if warmup > 0:
                deadline = time.perf_counter() + warmup
                await asyncio.gather(*(loop(w, deadline, None, counter) for w in range(writers)))
            latencies: list[float] = []
            cpu0 = cpu_seconds()
            t0 = time.perf_counter()
            deadline = t0 + seconds
            await asyncio.gather(*(loop(w, deadline, latencies, counter) for w in range(writers)))
            elapsed = time.perf_counter() - t0
            cpu1 = cpu_seconds()
            rss, hwm = memory_mib()
            return {
                "latenciesMs": [round(x, 3) for x in latencies],
                "seconds": elapsed,
                "cpuSeconds": cpu1 - cpu0,
                "rssMiB": rss,
                "hwmMiB": hwm,
            }
        finally:
            await svc.close()

    async def turn(self, tag: str, concurrency: int, warmup: float, seconds: float) -> dict[str, Any]:
        """An agent turn: get_session with the 20 most recent events, then three append_event calls on
        the session it returned (ADK refuses an append to a session object older than storage: its
        expected-revision check). `concurrency` turns at once, each on its own session."""
        svc = self.service()
        try:
            for w in range(concurrency):
                await svc.create_session(app_name="bench-turn", user_id=f"u{w}", session_id=f"{tag}-{w}")
            config = GetSessionConfig(num_recent_events=20)

            async def loop(w: int, deadline: float, latencies: list[float] | None, counter: list[int]) -> None:
                while time.perf_counter() < deadline:
                    n = counter[0]
                    counter[0] += 1
                    began = time.perf_counter()
                    session = await svc.get_session(
                        app_name="bench-turn", user_id=f"u{w}", session_id=f"{tag}-{w}", config=config
                    )
                    if session is None:
                        raise RuntimeError(f"turn session {tag}-{w} not found")
                    for k in range(3):
                        event = Event(
                            invocation_id=f"inv-{w}-{n}",
                            author="user",
                            content=types.Content(role="user", parts=[types.Part(text=TURN_TEXT)]),
                            actions=EventActions(state_delta={"turn": n * 3 + k}),
                        )
                        await svc.append_event(session, event)
                    if latencies is not None:
                        latencies.append((time.perf_counter() - began) * 1000)

            counter = [0]
            if warmup > 0:
                deadline = time.perf_counter() + warmup
                await asyncio.gather(*(loop(w, deadline, None, counter) for w in range(concurrency)))
            latencies: list[float] = []
            cpu0 = cpu_seconds()
            t0 = time.perf_counter()
            deadline = t0 + seconds
            await asyncio.gather(*(loop(w, deadline, latencies, counter) for w in range(concurrency)))
            elapsed = time.perf_counter() - t0
            cpu1 = cpu_seconds()
            return {"latenciesMs": [round(x, 3) for x in latencies], "seconds": elapsed, "cpuSeconds": cpu1 - cpu0}
        finally:
            await svc.close()

    async def load_history(self, size: int) -> dict[str, Any]:
        """A session created through ADK's API, its events copied straight into ADK's events table
        in the form ADK itself writes (StorageEvent.from_event)."""
        began = time.perf_counter()
        svc = self.service()
        session_id = f"history-{size}"
        try:
            await svc.create_session(app_name="bench-window", user_id="reader", session_id=session_id)
        finally:
            await svc.close()
        base = time.time() - size / 1000
        records = []
        for seq in range(1, size + 1):
            event = Event(
                id=f"h-{seq}",
                invocation_id=f"inv-0-{seq}",
                author="user" if seq % 2 else "agent",
                timestamp=base + seq / 1000,
                content=types.Content(role="user", parts=[types.Part(text=TURN_TEXT)]),
                actions=EventActions(state_delta={"turn": seq}),
            )
            ts = datetime.fromtimestamp(event.timestamp, tz=timezone.utc).replace(tzinfo=None)
            data = json.dumps(event.model_dump(exclude_none=True, mode="json"))
            records.append((event.id, "bench-window", "reader", session_id, event.invocation_id, ts, data))
        conn = await asyncpg.connect(self.pg_url)
        try:
            await conn.copy_records_to_table(
                "events",
                records=records,
                columns=["id", "app_name", "user_id", "session_id", "invocation_id", "timestamp", "event_data"],
            )
            await conn.execute(
                "UPDATE sessions SET update_time = $1 WHERE app_name = 'bench-window' AND user_id = 'reader' AND id = $2",
                records[-1][5],
                session_id,
            )
            await conn.execute("ANALYZE events")
        finally:
            await conn.close()
        return {"sessionId": session_id, "loadSeconds": time.perf_counter() - began}

    async def get_window(self, session_id: str, size: int, warmup: int, iterations: int) -> dict[str, Any]:
        svc = self.service()
        config = GetSessionConfig(num_recent_events=20)
        want = min(20, size)
        try:
            latencies = []
            for i in range(warmup + iterations):
                began = time.perf_counter()
                session = await svc.get_session(app_name="bench-window", user_id="reader", session_id=session_id, config=config)
                took = (time.perf_counter() - began) * 1000
                if session is None or len(session.events) != want or session.events[-1].id != f"h-{size}":
                    raise RuntimeError(f"window of {session_id} is wrong")
                if i >= warmup:
                    latencies.append(round(took, 3))
            return {"latenciesMs": latencies}
        finally:
            await svc.close()

    async def load_sessions(self, count: int) -> dict[str, Any]:
        """The same sessions as the sessionstore listing: one app, 100 users, distinct update times."""
        began = time.perf_counter()
        base = time.time() - count
        sessions = []
        for g in range(1, count + 1):
            t = datetime.fromtimestamp(base + g / 1000, tz=timezone.utc).replace(tzinfo=None)
            sessions.append((LIST_APP, f"u{g % LIST_USERS}", f"s-{g:07d}", json.dumps({"topic": f"order {g}"}), t, t))
        now = datetime.now(timezone.utc).replace(tzinfo=None)
        conn = await asyncpg.connect(self.pg_url)
        try:
            await conn.copy_records_to_table(
                "sessions",
                records=sessions,
                columns=["app_name", "user_id", "id", "state", "create_time", "update_time"],
            )
            await conn.copy_records_to_table(
                "user_states",
                records=[(LIST_APP, f"u{u}", json.dumps({"tier": "gold"}), now) for u in range(LIST_USERS)],
                columns=["app_name", "user_id", "state", "update_time"],
            )
            await conn.execute(
                "INSERT INTO app_states (app_name, state, update_time) VALUES ($1, $2, $3)",
                LIST_APP,
                json.dumps({"region": "eu"}),
                now,
            )
            await conn.execute("ANALYZE sessions")
        finally:
            await conn.close()
        return {"loadSeconds": time.perf_counter() - began}

    async def list(self, count: int, warmup: int, iterations: int) -> dict[str, Any]:
        """list_sessions has no paging: every call returns all of the app's sessions."""
        svc = self.service()
        try:
            latencies = []
            for i in range(warmup + iterations):
                began = time.perf_counter()
                res = await svc.list_sessions(app_name=LIST_APP)
                took = (time.perf_counter() - began) * 1000
                if len(res.sessions) != count:
                    raise RuntimeError(f"list_sessions returned {len(res.sessions)} of {count}")
                if i >= warmup:
                    latencies.append(round(took, 3))
            return {"latenciesMs": latencies}
        finally:
            await svc.close()


def cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system


def memory_mib() -> tuple[float, float]:
    rss = hwm = float("nan")
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) / 1024
            elif line.startswith("VmHWM:"):
                hwm = int(line.split()[1]) / 1024
    return rss, hwm


async def main() -> None:
    url = sys.argv[1]
    pool_size = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    peer = Peer(url, pool_size)
    loop = asyncio.get_running_loop()
    out = sys.stdout
    import google.adk

    out.write(json.dumps({"ready": True, "adk": google.adk.__version__, "python": sys.version.split()[0]}) + "\n")
    out.flush()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            return
        request = json.loads(line)
        command = request.pop("cmd")
        if command == "quit":
            return
        try:
            result = await getattr(peer, command)(**request)
            reply = {"ok": True, **result}
        except Exception as err:  # reported to the harness, which fails the run
            reply = {"ok": False, "error": f"{type(err).__name__}: {err}", "trace": traceback.format_exc()[-4000:]}
        out.write(json.dumps(reply) + "\n")
        out.flush()


if __name__ == "__main__":
    asyncio.run(main())
