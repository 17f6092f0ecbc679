"""SessionStoreSaver next to langgraph-checkpoint-postgres's AsyncPostgresSaver on one PostgreSQL.

    clients/python/.venv/bin/python clients/python/bench/langgraph_bench.py \\
        --database-url postgres://sessionstore:sessionstore@127.0.0.1:5432/postgres [--smoke]

Creates two fresh databases on that cluster (one for the Sessionstore server it
starts from this checkout, one for the Postgres saver), runs each workload against
both savers and prints a Markdown table; drops the databases afterwards.

Workloads (each checkpoint is what a chat graph's step writes: a `messages`
channel that grows by one message, a step counter, and a 10 KB context that is
written once and never changes):
- puts/s: checkpoint puts (with their pending write) per second, 1 and 16 threads at once;
- get_tuple: latency of reading the latest checkpoint of a thread with 1,000 checkpoints;
- bytes: what one 100-step thread occupies in each saver's tables (column sizes as stored).

`--smoke` runs every workload at a tiny size and checks what is read back; it
measures nothing. Numbers are only worth reporting from a quiet machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver, Checkpoint
from langgraph.checkpoint.base.id import uuid6
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

from sessionstore_client.langgraph import SessionStoreSaver

REPO = Path(__file__).resolve().parents[3]
CONTEXT = {"instructions": "x" * 10_000}


@dataclass
class Sizes:
    steps_per_thread: int
    history: int
    bytes_steps: int
    reads: int


FULL = Sizes(steps_per_thread=200, history=1000, bytes_steps=100, reads=500)
SMOKE = Sizes(steps_per_thread=3, history=5, bytes_steps=4, reads=3)


def step_checkpoint(saver: BaseCheckpointSaver, step: int, previous: Checkpoint | None) -> tuple[Checkpoint, dict]:
    """The checkpoint of one chat step, and the channel versions new in it."""
    messages = list(previous["channel_values"]["messages"]) if previous else []
    cls = HumanMessage if step % 2 == 0 else AIMessage
    messages.append(cls(content=f"message {step}: " + "lorem ipsum " * 15, id=str(uuid.uuid4())))
    versions = dict(previous["channel_versions"]) if previous else {}
    new = {}
    for channel in ("messages", "step") + (() if previous else ("context",)):
        versions[channel] = saver.get_next_version(versions.get(channel), None)
        new[channel] = versions[channel]
    checkpoint: Checkpoint = {
        "v": 4,
        "id": str(uuid6(clock_seq=step)),
        "ts": datetime.now(timezone.utc).isoformat(),
        "channel_values": {"messages": messages, "step": step, "context": CONTEXT},
        "channel_versions": versions,
        "versions_seen": {"agent": {k: v for k, v in versions.items() if k != "context"}},
        "updated_channels": list(new),
    }
    return checkpoint, new


async def write_thread(saver: BaseCheckpointSaver, thread_id: str, steps: int) -> dict:
    config: dict[str, Any] = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    previous = None
    for step in range(steps):
        checkpoint, new = step_checkpoint(saver, step, previous)
        metadata = {"source": "loop", "step": step, "parents": {}, "run_id": "bench"}
        config = await saver.aput(config, checkpoint, metadata, new)
        await saver.aput_writes(config, [("messages", ["next"])], task_id=str(uuid.uuid4()))
        previous = checkpoint
    return config


async def puts_per_second(saver: BaseCheckpointSaver, threads: int, steps: int) -> float:
    start = time.perf_counter()
    await asyncio.gather(
        *(write_thread(saver, f"puts-{threads}-{i}-{uuid.uuid4().hex[:6]}", steps) for i in range(threads))
    )
    return threads * steps / (time.perf_counter() - start)


async def get_latency(saver: BaseCheckpointSaver, history: int, reads: int) -> tuple[float, float]:
    thread_id = f"history-{uuid.uuid4().hex[:8]}"
    last = await write_thread(saver, thread_id, history)
    latest = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    times = []
    for _ in range(reads):
        start = time.perf_counter()
        tup = await saver.aget_tuple(latest)
        times.append(time.perf_counter() - start)
        assert tup is not None and tup.config["configurable"]["checkpoint_id"] == last["configurable"]["checkpoint_id"]
        assert len(tup.checkpoint["channel_values"]["messages"]) == history
        assert tup.checkpoint["channel_values"]["context"] == CONTEXT
    times.sort()
    return statistics.median(times) * 1000, times[min(len(times) - 1, int(len(times) * 0.99))] * 1000


def stored_bytes(database_url: str, sql: str, thread_id: str) -> int:
    out = subprocess.run(
        ["psql", database_url, "-At", "-v", "ON_ERROR_STOP=1", "-c", sql.replace(":thread", _literal(thread_id))],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(out.stdout.strip() or 0)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


SESSIONSTORE_BYTES = """
WITH t AS (SELECT pk FROM checkpoint_threads WHERE thread_id = :thread)
SELECT (SELECT coalesce(sum(pg_column_size(c.*)), 0) FROM checkpoints c, t WHERE c.thread_pk = t.pk)
     + (SELECT coalesce(sum(pg_column_size(v.*)), 0) FROM checkpoint_values v, t WHERE v.thread_pk = t.pk)
     + (SELECT coalesce(sum(pg_column_size(w.*)), 0) FROM checkpoint_writes w, t WHERE w.thread_pk = t.pk)
"""
POSTGRES_SAVER_BYTES = """
SELECT (SELECT coalesce(sum(pg_column_size(c.*)), 0) FROM checkpoints c WHERE thread_id = :thread)
     + (SELECT coalesce(sum(pg_column_size(b.*)), 0) FROM checkpoint_blobs b WHERE thread_id = :thread)
     + (SELECT coalesce(sum(pg_column_size(w.*)), 0) FROM checkpoint_writes w WHERE thread_id = :thread)
"""


async def run(target: str, server_db: str, saver_db: str, sizes: Sizes) -> list[tuple[str, str, str]]:
    ours = SessionStoreSaver(target, app_name="bench", user_id="bench")
    rows: list[tuple[str, str, str]] = []
    async with AsyncPostgresSaver.from_conn_string(saver_db) as theirs:
        await theirs.setup()
        for threads in (1, 16):
            a = await puts_per_second(ours, threads, sizes.steps_per_thread)
            b = await puts_per_second(theirs, threads, sizes.steps_per_thread)
            rows.append((f"checkpoint puts/s, {threads} thread(s) at once", f"{a:,.0f}", f"{b:,.0f}"))
        a50, a99 = await get_latency(ours, sizes.history, sizes.reads)
        b50, b99 = await get_latency(theirs, sizes.history, sizes.reads)
        rows.append(
            (f"get_tuple (latest of {sizes.history}), p50 / p99 ms", f"{a50:.2f} / {a99:.2f}", f"{b50:.2f} / {b99:.2f}")
        )
        thread_id = f"bytes-{uuid.uuid4().hex[:8]}"
        await write_thread(ours, thread_id, sizes.bytes_steps)
        await write_thread(theirs, thread_id, sizes.bytes_steps)
        a_bytes = stored_bytes(server_db, SESSIONSTORE_BYTES, thread_id)
        b_bytes = stored_bytes(saver_db, POSTGRES_SAVER_BYTES, thread_id)
        assert a_bytes > 0 and b_bytes > 0
        rows.append((f"bytes stored, one {sizes.bytes_steps}-step thread", f"{a_bytes:,}", f"{b_bytes:,}"))
    await ours.aclose()
    return rows


def table(rows: list[tuple[str, str, str]]) -> str:
    lines = ["| workload | SessionStoreSaver | AsyncPostgresSaver |", "| --- | --- | --- |"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    return "\n".join(lines)


def _psql(url: str, sql: str) -> None:
    subprocess.run(["psql", url, "-q", "-v", "ON_ERROR_STOP=1", "-c", sql], check=True)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default="postgres://sessionstore:sessionstore@127.0.0.1:5432/postgres")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes; checks the harness, measures nothing")
    args = parser.parse_args(argv)
    suffix = uuid.uuid4().hex[:8]
    urls = {}
    for name in ("server", "saver"):
        db = f"lgbench_{name}_{suffix}"
        _psql(args.database_url, f'CREATE DATABASE "{db}"')
        urls[name] = urlunsplit(urlsplit(args.database_url)._replace(path=f"/{db}"))
    proc = subprocess.Popen(
        [str(REPO / "node_modules/.bin/tsx"), "src/main.ts", "--port", "0", "--log-level", "info"],
        cwd=REPO,
        env={**os.environ, "DATABASE_URL": urls["server"]},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        target = None
        assert proc.stdout is not None
        for line in proc.stdout:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if entry.get("msg") == "sessionstore listening":
                target = urlsplit(entry["url"]).netloc
                break
        if target is None:
            raise SystemExit("the server did not start")
        rows = asyncio.run(run(target, urls["server"], urls["saver"], SMOKE if args.smoke else FULL))
        print(table(rows))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        for url in urls.values():
            db = urlsplit(url).path.lstrip("/")
            _psql(args.database_url, f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')


if __name__ == "__main__":
    main(sys.argv[1:])
