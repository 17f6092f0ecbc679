"""Runs the real server (TypeScript, from this repo) on a fresh PostgreSQL database.

SESSIONSTORE_TEST_DATABASE_URL names a database on the cluster to use (default:
the role scripts/postgres-up.sh creates); a new database is created next to it
for the run and dropped afterwards.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from cli_runners import Clis, MissingToolError, build_go_cli, python_cli_command, ts_cli_command

from sessionstore_client.adk import GrpcSessionService

REPO = Path(__file__).resolve().parents[3]
BASE_URL = os.environ.get(
    "SESSIONSTORE_TEST_DATABASE_URL", "postgres://sessionstore:sessionstore@127.0.0.1:5432/postgres"
)
START_TIMEOUT_S = 90


def _psql(sql: str) -> None:
    subprocess.run(["psql", BASE_URL, "-q", "-v", "ON_ERROR_STOP=1", "-c", sql], check=True)


@pytest.fixture(scope="session")
def database_url() -> Iterator[str]:
    name = f"sessionstore_py_{uuid.uuid4().hex[:12]}"
    _psql(f'CREATE DATABASE "{name}"')
    try:
        yield urlunsplit(urlsplit(BASE_URL)._replace(path=f"/{name}"))
    finally:
        _psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def server(database_url: str) -> Iterator[str]:
    """The server's gRPC target, host:port."""
    proc = subprocess.Popen(
        [str(REPO / "node_modules/.bin/tsx"), "src/main.ts", "--port", "0"],
        cwd=REPO,
        env={**os.environ, "DATABASE_URL": database_url},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: queue.Queue[str | None] = queue.Queue()
    log: list[str] = []

    def pump() -> None:
        # Keeps reading after startup so a chatty server never blocks on a full pipe.
        assert proc.stdout is not None
        for line in proc.stdout:
            log.append(line)
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    try:
        yield _wait_until_listening(lines, log)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise RuntimeError("server did not stop within 30 s of SIGTERM:\n" + "".join(log[-20:])) from None


def _wait_until_listening(lines: queue.Queue[str | None], log: list[str]) -> str:
    deadline = time.monotonic() + START_TIMEOUT_S
    while (left := deadline - time.monotonic()) > 0:
        try:
            line = lines.get(timeout=left)
        except queue.Empty:
            break
        if line is None:
            raise RuntimeError("server exited before listening:\n" + "".join(log))
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if entry.get("msg") == "sessionstore listening":
            return urlsplit(entry["url"]).netloc
    raise RuntimeError(f"server not listening after {START_TIMEOUT_S} s:\n" + "".join(log))


@pytest.fixture
async def service(server: str) -> AsyncIterator[GrpcSessionService]:
    async with GrpcSessionService(server) as svc:
        yield svc


@pytest.fixture(scope="session")
def go_cli(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Go CLI, built once per test run from clients/go."""
    try:
        return build_go_cli(tmp_path_factory.mktemp("go-cli"))
    except MissingToolError as e:
        pytest.fail(str(e), pytrace=False)


@pytest.fixture(scope="session")
def clis(server: str, go_cli: Path) -> Clis:
    """The Python, TypeScript and Go CLIs, pointed at the test server."""
    try:
        ts = ts_cli_command()
    except MissingToolError as e:
        pytest.fail(str(e), pytrace=False)
    return Clis(
        url=f"http://{server}",
        commands={"python": python_cli_command(), "typescript": ts, "go": [str(go_cli)]},
    )


@pytest.fixture
def app_name() -> str:
    """A fresh app per test: app and user state are per app, so tests never share any."""
    return f"app-{uuid.uuid4().hex[:12]}"


_passed = 0


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    global _passed
    if report.when == "call" and report.passed:
        _passed += 1


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    # A run where nothing passed (all skipped or deselected) must not look green.
    if exitstatus == pytest.ExitCode.OK and _passed == 0:
        session.exitstatus = pytest.ExitCode.NO_TESTS_COLLECTED
