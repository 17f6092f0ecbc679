"""The three languages' CLIs (Python, TypeScript, Go) as the cross-language tests run them.

Every CLI has the same two commands and speaks canonical protobuf JSON, so a
test can write with one language and read with another, and compare the
results as Python messages.
"""

from __future__ import annotations

import asyncio
import difflib
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from google.protobuf import json_format, text_format
from google.protobuf.message import Message

from sessionstore.v1 import session_service_pb2 as pb
from sessionstore_client import SessionStoreClient

REPO = Path(__file__).resolve().parents[3]
CLI_TIMEOUT_S = 120
# The CLIs read these as defaults; the tests pass everything explicitly.
_ENV = {k: v for k, v in os.environ.items() if k not in ("SESSIONSTORE_URL", "SESSIONSTORE_TOKEN")}


class MissingToolError(RuntimeError):
    """A language's toolchain is not installed: the cross-language tests fail rather than skip."""


def build_go_cli(out_dir: Path) -> Path:
    go = shutil.which("go")
    if go is None:
        raise MissingToolError("the Go toolchain (`go`) is not on PATH; the cross-language tests need it")
    binary = out_dir / "sessionstore-cli"
    result = subprocess.run(
        [go, "build", "-o", str(binary), "./cmd/sessionstore-cli"],
        cwd=REPO / "clients/go",
        env=_ENV,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if result.returncode != 0:
        raise RuntimeError(f"go build of the Go CLI failed (exit {result.returncode}):\n{result.stderr}")
    return binary


def ts_cli_command() -> list[str]:
    tsx = REPO / "node_modules/.bin/tsx"
    if shutil.which("node") is None:
        raise MissingToolError("`node` is not on PATH; the cross-language tests need it for the TypeScript CLI")
    if not tsx.exists():
        raise MissingToolError(f"{tsx} is missing: run `npm ci` in {REPO}")
    return [str(tsx), "clients/ts/cli.ts"]


@dataclass(frozen=True)
class Clis:
    """Runs `COMMAND APP USER SESSION` with one language's CLI against one server."""

    url: str
    commands: Mapping[str, Sequence[str]]

    @property
    def languages(self) -> list[str]:
        return list(self.commands)

    async def run_raw(self, language: str, args: Sequence[str], stdin: bytes = b"") -> tuple[int, str, str]:
        """Exit status, stdout and stderr of one CLI call."""
        argv = [*self.commands[language], "--url", self.url, *args]
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=REPO,
            env=_ENV,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            out, err = await asyncio.wait_for(proc.communicate(stdin), CLI_TIMEOUT_S)
        except asyncio.TimeoutError:
            proc.kill()
            await proc.wait()
            raise AssertionError(f"{language} CLI did not finish in {CLI_TIMEOUT_S} s: {argv}") from None
        assert proc.returncode is not None
        return proc.returncode, out.decode("utf-8"), err.decode("utf-8", errors="replace")

    async def run(self, language: str, args: Sequence[str], stdin: bytes = b"") -> str:
        """Stdout of a call that must succeed: exactly one line."""
        code, out, err = await self.run_raw(language, args, stdin)
        if code != 0:
            raise AssertionError(f"{language} CLI exited {code}: {[*args]}\nstderr: {err}")
        assert out.endswith("\n") and out.count("\n") == 1, f"{language} CLI output is not one line: {out!r}"
        return out

    async def get_session(self, language: str, app: str, user: str, session_id: str) -> pb.GetSessionResponse:
        text = await self.run(language, ["get-session", app, user, session_id])
        return json_format.Parse(text, pb.GetSessionResponse())

    async def append_event(
        self, language: str, app: str, user: str, session_id: str, event_json: str
    ) -> pb.AppendEventResponse:
        text = await self.run(language, ["append-event", app, user, session_id], event_json.encode("utf-8"))
        return json_format.Parse(text, pb.AppendEventResponse())


def python_cli_command() -> list[str]:
    return [sys.executable, "-m", "sessionstore_client.cli"]


def assert_same(want: Message, got: Message, what: str) -> None:
    """Message equality (==), with a readable diff when it fails."""
    if want == got:
        return
    diff = difflib.unified_diff(
        text_format.MessageToString(want, as_utf8=True).splitlines(),
        text_format.MessageToString(got, as_utf8=True).splitlines(),
        "want",
        "got",
        lineterm="",
    )
    raise AssertionError(f"{what} differs:\n" + "\n".join(diff))


async def read_everywhere(
    client: SessionStoreClient, clis: Clis, app: str, user: str, session_id: str
) -> dict[str, pb.GetSessionResponse]:
    """The session as the Python library and each language's CLI read it (the CLIs side by side)."""
    library = await client.get_session(app_name=app, user_id=user, session_id=session_id)
    by_cli = await asyncio.gather(*(clis.get_session(lang, app, user, session_id) for lang in clis.languages))
    return {"python-library": library, **dict(zip(clis.languages, by_cli, strict=True))}


def assert_all_read_the_same(reads: Mapping[str, pb.GetSessionResponse]) -> pb.GetSessionResponse:
    """Every reader's GetSessionResponse equals the Python library's; returns that one."""
    assert set(reads) == {"python-library", "python", "typescript", "go"}
    reference = reads["python-library"]
    for language, got in reads.items():
        assert_same(reference, got, f"GetSession as read by {language} (vs the Python library)")
    return reference
