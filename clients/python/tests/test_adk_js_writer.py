"""A real adk-js Runner (TypeScript) writes a session; Python, TypeScript and
Go read it back identically, and Python ADK reads adk-js's events as its own."""

from __future__ import annotations

import asyncio
import json
import os

from cli_runners import CLI_TIMEOUT_S, REPO, Clis, assert_all_read_the_same, read_everywhere, ts_cli_command
from google.genai import types

from sessionstore_client.adk import GrpcSessionService


async def run_adk_js_turns(url: str, app: str, user: str) -> dict[str, object]:
    tsx = ts_cli_command()[0]
    proc = await asyncio.create_subprocess_exec(
        tsx,
        "test/adk/adk-js-turns.ts",
        "--url",
        f"http://{url}",
        app,
        user,
        cwd=REPO,
        env={k: v for k, v in os.environ.items() if k not in ("SESSIONSTORE_URL", "SESSIONSTORE_TOKEN")},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), CLI_TIMEOUT_S)
    assert proc.returncode == 0, err.decode()
    return json.loads(out)


async def test_a_session_written_by_adk_js_reads_the_same_everywhere(
    server: str, clis: Clis, service: GrpcSessionService, app_name: str
):
    written = await run_adk_js_turns(server, app_name, "u1")
    assert written["authors"] == [["assistant", "assistant", "assistant"], ["assistant"]]
    session_id = str(written["sessionId"])

    reads = await read_everywhere(service.client, clis, app_name, "u1", session_id)
    read = assert_all_read_the_same(reads).session
    assert read.revision == 6

    # Python ADK reads the adk-js events as ADK events.
    stored = await service.get_session(app_name=app_name, user_id="u1", session_id=session_id)
    assert stored is not None
    assert stored.state == {"user:favorite_color": "teal", "last_reply": "Your favorite color is teal."}
    parts = [e.content.parts[0] for e in stored.events if e.content and e.content.parts]
    assert [p.text for p in parts] == [
        "My favorite color is teal.",
        None,
        None,
        "Saved: teal.",
        "What is my favorite color?",
        "Your favorite color is teal.",
    ]
    assert parts[1].function_call == types.FunctionCall(id="fc-1", name="remember_color", args={"color": "teal"})
    assert parts[2].function_response is not None and parts[2].function_response.response == {"status": "saved"}
    assert [e.author for e in stored.events] == ["user", "assistant", "assistant", "assistant", "user", "assistant"]
    assert stored.events[2].actions.state_delta == {"user:favorite_color": "teal"}
    # adk-js counts milliseconds; Python ADK reads seconds.
    assert all(1.7e9 < e.timestamp < 1e10 for e in stored.events)
    assert await service.get_user_state(app_name=app_name, user_id="u1") == {"favorite_color": "teal"}
