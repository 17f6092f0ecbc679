"""Runs the real server (TypeScript, from this repo) on a fresh PostgreSQL database.

SESSIONSTORE_TEST_DATABASE_URL names a database on the cluster to use (default:
the role scripts/postgres-up.sh creates); a new database is created next to it
for the run and dropped afterwards.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from cli_runners import Clis, MissingToolError, build_go_cli, python_cli_command, ts_cli_command
from server_process import ServerProcess

from sessionstore_client.adk import GrpcSessionService

BASE_URL = os.environ.get(
    "SESSIONSTORE_TEST_DATABASE_URL", "postgres://sessionstore:sessionstore@127.0.0.1:5432/postgres"
)


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
    proc = ServerProcess(database_url)
    try:
        yield proc.target
    finally:
        proc.stop()


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
