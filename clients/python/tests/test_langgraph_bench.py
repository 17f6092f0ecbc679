"""The LangGraph benchmark harness runs and reads back what it wrote (--smoke:
tiny sizes, no measurement)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import BASE_URL

BENCH = Path(__file__).resolve().parents[1] / "bench" / "langgraph_bench.py"


def test_bench_harness_smoke() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--smoke", "--database-url", BASE_URL], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ") and "---" not in line]
    assert [r.split(" | ")[0] for r in rows] == [
        "| workload",
        "| checkpoint puts/s, 1 thread(s) at once",
        "| checkpoint puts/s, 16 thread(s) at once",
        "| get_tuple (latest of 5), p50 / p99 ms",
        "| bytes stored, one 4-step thread",
    ]
