"""`import-adk` (src/importer/adk, the Node entry) moves what ADK's own
DatabaseSessionService stored, on SQLite and on PostgreSQL and in both of
ADK's schemas (v1: JSON `event_data`; v0: pickled `EventActions`), into the
store; GrpcSessionService then returns what ADK's service returns for every
session. A second run writes nothing."""

from __future__ import annotations

import asyncio
import re
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import BASE_URL, _psql
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.sessions import DatabaseSessionService
from google.adk.sessions.schemas.v0 import Base as BaseV0
from google.genai import types
from server_process import REPO
from sqlalchemy import create_engine

from sessionstore_client.adk import GrpcSessionService

USERS = ["u1", "u2"]


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=["v1", "v0"])
def schema(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def adk_url(backend: str, schema: str, tmp_path: Path) -> Iterator[str]:
    """A fresh database for ADK; v0 has ADK's legacy tables made first, which
    makes DatabaseSessionService keep using them (and pickle actions)."""
    if backend == "sqlite":
        sync_url = f"sqlite:///{tmp_path / 'adk.db'}"
        async_url = f"sqlite+aiosqlite:///{tmp_path / 'adk.db'}"
        name = None
    else:
        name = f"adk_src_{uuid.uuid4().hex[:12]}"
        _psql(f'CREATE DATABASE "{name}"')
        base = re.sub(r"^postgres(ql)?://", "", BASE_URL).rsplit("/", 1)[0]
        sync_url = f"postgresql+psycopg://{base}/{name}"
        async_url = sync_url
    if schema == "v0":
        engine = create_engine(sync_url)
        BaseV0.metadata.create_all(engine)
        engine.dispose()
    try:
        yield async_url
    finally:
        if name:
            _psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def fc(name: str, call_id: str, args: dict[str, Any]) -> types.Part:
    return types.Part(function_call=types.FunctionCall(id=call_id, name=name, args=args))


def fr(name: str, call_id: str, response: dict[str, Any]) -> types.Part:
    return types.Part(function_response=types.FunctionResponse(id=call_id, name=name, response=response))


async def fill(db: DatabaseSessionService, app: str) -> None:
    """Sessions as a real agent leaves them: state in every scope, tool calls, actions."""
    # Users in reverse key order: ADK's last write of a shared key is then not
    # the last the importer replays (it goes in key order), which the import
    # must still end with.
    for u, user in reversed(list(enumerate(USERS))):
        for n in range(2):
            s = await db.create_session(
                app_name=app,
                user_id=user,
                session_id=f"s-{user}-{n}",
                state={"app:plan": "pro", f"user:lang{u}": "de", "topic": f"t{n}", "temp:x": 1},
            )
            inv = f"e-{uuid.uuid4()}"
            events = [
                Event(
                    invocation_id=inv,
                    author="user",
                    content=types.Content(role="user", parts=[types.Part(text=f"hello {user} {n}")]),
                ),
                Event(
                    invocation_id=inv,
                    author="assistant",
                    branch="root.assistant",
                    content=types.Content(role="model", parts=[fc("lookup", f"call-{n}", {"q": "order", "n": 3})]),
                    long_running_tool_ids={f"call-{n}"},
                ),
                Event(
                    invocation_id=inv,
                    author="assistant",
                    content=types.Content(role="user", parts=[fr("lookup", f"call-{n}", {"status": "shipped"})]),
                    actions=EventActions(
                        state_delta={"app:count": n, f"user:seen{n}": True, "order": {"id": 8842}, "temp:t": 2},
                        artifact_delta={"report.txt": 1},
                    ),
                ),
                Event(
                    invocation_id=inv,
                    author="assistant",
                    content=types.Content(
                        role="model",
                        parts=[
                            types.Part(text="Shipped."),
                            types.Part(inline_data=types.Blob(mime_type="image/png", data=b"\x89PNG\x00\xff")),
                        ],
                    ),
                    turn_complete=True,
                    custom_metadata={"k": [1, "two", None]},
                    usage_metadata=types.GenerateContentResponseUsageMetadata(prompt_token_count=7),
                    actions=EventActions(transfer_to_agent="billing", escalate=True, skip_summarization=True),
                ),
                Event(
                    invocation_id=f"e-{uuid.uuid4()}",
                    author="billing",
                    error_code="SAFETY",
                    error_message="blocked",
                    interrupted=True,
                    actions=EventActions(state_delta={"topic": None, "app:count": 10 + n + 2 * u}, end_of_agent=True),
                ),
            ]
            for event in events:
                await db.append_event(s, event)
                await asyncio.sleep(0.002)  # distinct timestamps, as real turns have
    # A session without events.
    await db.create_session(app_name=app, user_id="u3", session_id="empty", state={"k": "v"})


def run_import(adk_url: str, server: str, app: str) -> str:
    proc = subprocess.run(
        [str(REPO / "node_modules/.bin/tsx"), "src/importer/adk/main.ts", "--from", adk_url,
         "--server", f"http://{server}", "--app", app, "--batch", "2"],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stderr


def event_form(event: Event) -> dict[str, Any]:
    d = event.model_dump(mode="json", exclude_none=True)
    d["long_running_tool_ids"] = sorted(d.get("long_running_tool_ids") or [])
    return d


def session_form(session: Any) -> dict[str, Any]:
    return {
        "id": session.id,
        "app_name": session.app_name,
        "user_id": session.user_id,
        "state": session.state,
        "events": [event_form(e) for e in session.events],
    }


async def test_import_gives_back_what_adk_gives(adk_url: str, schema: str, server: str, app_name: str):
    db = DatabaseSessionService(adk_url)
    try:
        await fill(db, app_name)
        first = run_import(adk_url, server, app_name)
        assert f"schema {schema}" in first, first
        assert "5 sessions (5 new), 20 events (20 written, 0 already there)" in first, first

        again = run_import(adk_url, server, app_name)
        assert "5 sessions (0 new), 20 events (0 written, 20 already there)" in again, again

        # ADK went on after the import (and a run stopped part way leaves the
        # same thing): a new run continues after each session's last stored event.
        grown = await db.get_session(app_name=app_name, user_id="u1", session_id="s-u1-0")
        assert grown is not None
        await db.append_event(
            grown,
            Event(invocation_id="e-late", author="user", content=types.Content(role="user", parts=[types.Part(text="late")]),
                  actions=EventActions(state_delta={"user:late": 1, "late": True})),
        )
        await db.create_session(app_name=app_name, user_id="u2", session_id="late", state={"app:plan": "max"})
        resumed = run_import(adk_url, server, app_name)
        assert "6 sessions (1 new), 21 events (1 written, 20 already there)" in resumed, resumed

        async with GrpcSessionService(server) as grpc:
            theirs = (await db.list_sessions(app_name=app_name)).sessions
            ours = (await grpc.list_sessions(app_name=app_name)).sessions
            key = lambda s: (s.user_id, s.id)  # noqa: E731
            assert [session_form(s) for s in sorted(ours, key=key)] == [session_form(s) for s in sorted(theirs, key=key)]
            for a, b in zip(sorted(ours, key=key), sorted(theirs, key=key), strict=True):
                assert a.last_update_time == pytest.approx(b.last_update_time, abs=1e-6)
            for s in theirs:
                want = await db.get_session(app_name=app_name, user_id=s.user_id, session_id=s.id)
                got = await grpc.get_session(app_name=app_name, user_id=s.user_id, session_id=s.id)
                assert want is not None and got is not None
                assert session_form(got) == session_form(want)
                assert got.last_update_time == pytest.approx(want.last_update_time, abs=1e-6)
                # Resolution of ADK's update_time column: equal to the microsecond.
                assert abs(got.last_update_time - want.last_update_time) <= 1e-6
            for user in [*USERS, "u3", "adk-import"]:
                assert await grpc.get_user_state(app_name=app_name, user_id=user) == await db.get_user_state(
                    app_name=app_name, user_id=user
                )
    finally:
        await db.close()
