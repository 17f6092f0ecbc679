"""The real server (TypeScript, from this repo) as a child process."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parents[3]
START_TIMEOUT_S = 90
STOP_TIMEOUT_S = 30


class ServerProcess:
    """Starts `src/main.ts` on database_url and waits until it listens.

    port 0 lets the server pick one; `target` is then the host:port it logged,
    and a restart (stop, then ServerProcess(..., port=old.port)) comes back on
    the same address.
    """

    def __init__(self, database_url: str, *, port: int = 0) -> None:
        self._proc = subprocess.Popen(
            [str(REPO / "node_modules/.bin/tsx"), "src/main.ts", "--port", str(port)],
            cwd=REPO,
            env={**os.environ, "DATABASE_URL": database_url},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        self.log: list[str] = []
        threading.Thread(target=self._pump, daemon=True).start()
        try:
            self.url = self._wait_until_listening()
        except BaseException:
            self._proc.kill()
            self._proc.wait()
            raise
        self.target = urlsplit(self.url).netloc
        self.port = urlsplit(self.url).port

    def _pump(self) -> None:
        # Keeps reading after startup so a chatty server never blocks on a full pipe.
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            self.log.append(line)
            self._lines.put(line)
        self._lines.put(None)

    def _wait_until_listening(self) -> str:
        deadline = time.monotonic() + START_TIMEOUT_S
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self._lines.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                raise RuntimeError("server exited before listening:\n" + "".join(self.log))
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if entry.get("msg") == "sessionstore listening":
                return str(entry["url"])
        raise RuntimeError(f"server not listening after {START_TIMEOUT_S} s:\n" + "".join(self.log))

    def stop(self) -> None:
        """SIGTERM, then waits for the exit (the port is free afterwards)."""
        if self._proc.poll() is not None:
            return
        self._proc.send_signal(signal.SIGTERM)
        try:
            self._proc.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
            raise RuntimeError(
                f"server did not stop within {STOP_TIMEOUT_S} s of SIGTERM:\n" + "".join(self.log[-20:])
            ) from None
