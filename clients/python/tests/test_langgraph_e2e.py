"""A compiled StateGraph with a fake model and a tool, interrupted for a human,
its process ended, resumed by a new process from what the server stored; then
time travel to the interrupted checkpoint and a fork from it."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

AGENT = Path(__file__).with_name("langgraph_agent.py")


def run_phase(phase: str, server: str, app: str, user: str, thread: str, *extra: str) -> Any:
    done = subprocess.run(
        [sys.executable, str(AGENT), phase, server, app, user, thread, *extra],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"phase {phase} failed:\n{done.stderr}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_interrupt_restart_resume_time_travel_and_fork(server: str, app_name: str) -> None:
    user, thread = "u_42", f"t-{uuid.uuid4().hex[:8]}"

    started = run_phase("start", server, app_name, user, thread)
    assert started["next"] == ["review"]
    assert started["interrupts"] == [{"question": "run lookup_order?", "call": {"order_id": "8842"}}]
    assert started["messages"] == ["Where is order 8842?", ""]
    interrupted_at = started["checkpoint_id"]

    resumed = run_phase("resume", server, app_name, user, thread)
    assert resumed["before"]["checkpoint_id"] == interrupted_at
    assert resumed["before"]["interrupts"] == started["interrupts"]
    assert resumed["after"]["next"] == []
    assert resumed["after"]["approved"] is True
    assert resumed["after"]["messages"][-2:] == ["order 8842 ships tomorrow", "Order status: order 8842 ships tomorrow"]
    # History is newest first and passes through the interrupted checkpoint.
    ids = [h["checkpoint_id"] for h in resumed["history"]]
    assert ids == sorted(ids, reverse=True)
    assert interrupted_at in ids

    forked = run_phase("fork", server, app_name, user, thread, interrupted_at)
    # Time travel: the past checkpoint reads as it was, interrupt included.
    assert forked["replayed"]["checkpoint_id"] == interrupted_at
    assert forked["replayed"]["next"] == ["review"]
    assert forked["replayed"]["messages"] == ["Where is order 8842?", ""]
    # The fork starts from the past checkpoint, again waiting for review.
    assert forked["fork"]["next"] == ["review"]
    assert forked["fork"]["checkpoint_id"] > resumed["after"]["checkpoint_id"]
    # It took the other answer; the thread's head is now the fork's end.
    assert forked["after"]["approved"] is False
    assert forked["after"]["messages"][-2:] == ["Denied by reviewer.", "The request was not approved."]
    # The approved branch is still stored: both endings are in the history.
    endings = {h["messages"][-1] for h in forked["history"] if h["next"] == []}
    assert endings == {"Order status: order 8842 ships tomorrow", "The request was not approved."}
