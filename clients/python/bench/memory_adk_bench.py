"""ADK's memory services on the data of bench/memory.ts.

`clients/python/.venv/bin/python clients/python/bench/memory_adk_bench.py [--smoke]`

Loads the entries bench/memory.ts writes into PostgreSQL (same texts, users,
ids and timestamps, 1,000 users) into google-adk's InMemoryMemoryService and
SqliteMemoryService through their public API (add_session_to_memory: at each
size step, one session per user holding that user's new entries) and times search_memory p50 / p95 for the same
questions at 10k, 100k and 1M entries. The services run in this process, so
unlike ours no network round trip is in their figures.

A search that takes long is not run 500 times: at each size a service gets
SEARCHES questions or SEARCH_BUDGET_S seconds of searching, whichever ends
first, and the output says how many ran. Writes
bench/results/memory-adk-<mode>.json and prints a Markdown table. `--smoke`
uses tiny sizes and checks the harness (searches find entries, only the
asking user's); its numbers mean nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import gc
import json
import math
import os
import platform
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import google.adk
from google.adk.events.event import Event
from google.adk.memory import InMemoryMemoryService
from google.adk.memory._sqlite_memory_service import SqliteMemoryService
from google.adk.memory.base_memory_service import BaseMemoryService
from google.adk.sessions.session import Session
from google.genai import types

ROOT = Path(__file__).resolve().parents[3]
APP = "bench"
# Sessions of 20 events made SqliteMemoryService's load take ~25 min at 1M:
# every call opens its own connection (and thread) and commits. What a search
# costs depends on the rows stored, not on how they were grouped into calls.
SESSION_EVENTS = 1000

# The generator of bench/memory.ts, mirrored term by term (its SQL arrays are
# 1-based, so its common[1 + x] is COMMON[x] here). Change both together.
COMMON = ["i", "my", "the", "is", "a", "to", "and", "of", "it", "that"]


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return out


RARE = [f"w{_base36(i)}" for i in range(5000)]


def body(g: int) -> str:
    """Entry g's text: concat_ws(' ', ...) of bench/memory.ts's load()."""
    return " ".join(
        [
            COMMON[g % 10],
            COMMON[(g // 7) % 10],
            RARE[(g * 7919) % 5000],
            COMMON[(g // 3) % 10],
            RARE[(g * 104729) % 5000],
            "fact",
            str(g),
        ]
    )


def question(i: int, users: int) -> tuple[str, str]:
    """Search i's user and query, as in bench/memory.ts's search loop."""
    return f"u{(i * 37) % users}", f"what is {RARE[(i * 7919) % len(RARE)]} to my {RARE[(i * 13) % len(RARE)]}"


def sessions(start: int, end: int, users: int) -> Iterator[Session]:
    """Entries start..end-1 as sessions of up to SESSION_EVENTS events of one user.

    Entry g belongs to user u(g % users), has id m<g> and timestamp g seconds,
    as in bench/memory.ts.
    """
    for u in range(users):
        first = start + ((u - start) % users)
        ids = range(first, end, users)
        for s in range(0, len(ids), SESSION_EVENTS):
            chunk = ids[s : s + SESSION_EVENTS]
            yield Session(
                id=f"s{chunk[0]}",
                app_name=APP,
                user_id=f"u{u}",
                events=[
                    Event(
                        id=f"m{g}",
                        invocation_id=f"i{g}",
                        author="user",
                        timestamp=float(g),
                        content=types.Content(role="user", parts=[types.Part(text=body(g))]),
                    )
                    for g in chunk
                ],
            )


def percentile(sorted_ms: list[float], p: float) -> float:
    """Nearest rank, as bench/stats.ts."""
    rank = math.ceil(p / 100 * len(sorted_ms))
    return sorted_ms[min(len(sorted_ms) - 1, max(0, rank - 1))]


def entry_event_id(entry) -> str:
    # InMemoryMemoryService answers the event id as the entry id; the SQLite
    # service answers its row id and puts the event id in the metadata.
    meta = entry.custom_metadata or {}
    return str(meta.get("event_id", entry.id))


async def measure(name: str, service: BaseMemoryService, args: argparse.Namespace) -> list[dict]:
    rows: list[dict] = []
    loaded = 0
    for size in args.sizes:
        t0 = time.perf_counter()
        for session in sessions(loaded, size, args.users):
            await service.add_session_to_memory(session)
        load_s = time.perf_counter() - t0
        loaded = size
        gc.collect()
        latencies: list[float] = []
        found = 0
        started = time.perf_counter()
        for i in range(args.searches):
            if latencies and time.perf_counter() - started > args.budget:
                break
            user, query = question(i, args.users)
            t = time.perf_counter()
            res = await service.search_memory(app_name=APP, user_id=user, query=query)
            latencies.append((time.perf_counter() - t) * 1000)
            found += len(res.memories)
            # Only the asking user's entries: m<g> with g % users == the user's number.
            for m in res.memories:
                if int(entry_event_id(m)[1:]) % args.users != int(user[1:]):
                    raise RuntimeError(f"{name}: {user} got {entry_event_id(m)}, another user's entry")
            if i == 0 and res.memories:
                words = set(query.split())
                text = res.memories[0].content.parts[0].text or ""
                if not words & set(text.split()):
                    raise RuntimeError(f"{name}: top result {text!r} shares no word with {query!r}")
        latencies.sort()
        row = {
            "entries": size,
            "searches": len(latencies),
            "p50Ms": round(percentile(latencies, 50), 2),
            "p95Ms": round(percentile(latencies, 95), 2),
            "found": found,
            "loadSeconds": round(load_s, 1),
            "loadAverage": [round(x, 2) for x in os.getloadavg()],
        }
        rows.append(row)
        print(
            f"[memory adk bench] {name} {size} entries: p50 {row['p50Ms']} ms, p95 {row['p95Ms']} ms"
            f" over {len(latencies)} searches (load {load_s:.1f} s, load average {row['loadAverage']})",
            file=sys.stderr,
            flush=True,
        )
        if found == 0:
            raise RuntimeError(f"{name}: searches at {size} entries found nothing: the load or the search is broken")
    return rows


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: checks the harness, numbers mean nothing")
    parser.add_argument("--sizes", help="comma-separated entry counts (default 10000,100000,1000000)")
    parser.add_argument("--services", default="inmemory,sqlite", help="comma-separated: inmemory, sqlite")
    args = parser.parse_args()
    args.users = 20 if args.smoke else 1000
    default_sizes = [2_000] if args.smoke else [10_000, 100_000, 1_000_000]
    args.sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else default_sizes
    args.searches = 20 if args.smoke else 500
    args.budget = 10.0 if args.smoke else 60.0
    results: dict = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "mode": "smoke" if args.smoke else "full",
        "users": args.users,
        "adk": google.adk.__version__,
        "python": platform.python_version(),
        "searchesPerSize": args.searches,
        "searchBudgetSeconds": args.budget,
        "loadAverageStart": [round(x, 2) for x in os.getloadavg()],
    }
    out_dir = ROOT / "bench" / "results"
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"memory-adk-{results['mode']}.json"
    for name in args.services.split(","):
        if name == "inmemory":
            results["InMemoryMemoryService"] = await measure("InMemoryMemoryService", InMemoryMemoryService(), args)
        elif name == "sqlite":
            with tempfile.TemporaryDirectory(prefix="memory-adk-bench-") as tmp:
                service = SqliteMemoryService(os.path.join(tmp, "memory.db"))
                try:
                    results["SqliteMemoryService"] = await measure("SqliteMemoryService (file, FTS5)", service, args)
                finally:
                    await service.close()
        else:
            raise SystemExit(f"unknown service {name!r}: inmemory or sqlite")
        gc.collect()
        out.write_text(json.dumps(results, indent=2) + "\n")
    results["loadAverageEnd"] = [round(x, 2) for x in os.getloadavg()]
    out.write_text(json.dumps(results, indent=2) + "\n")

    print("| workload | service | searches | p50 ms | p95 ms |\n| --- | --- | --- | --- | --- |")
    for key in ("InMemoryMemoryService", "SqliteMemoryService"):
        for r in results.get(key, []):
            workload = f"search_memory, {r['entries']:,} entries, {args.users} users"
            print(f"| {workload} | {key} | {r['searches']} | {r['p50Ms']} | {r['p95Ms']} |")
    print(f"load average {results['loadAverageStart']} at the start, {results['loadAverageEnd']} at the end")


if __name__ == "__main__":
    asyncio.run(main())
