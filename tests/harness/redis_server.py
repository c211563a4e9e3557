"""A throwaway Redis server for tests: `redis-server` on a free loopback port, no persistence.

    with running_redis() as server:       # or RedisServer().start() / .stop() / .restart()
        url = server.url                  # redis://127.0.0.1:PORT/0

The binary comes from PATH (Debian: `apt-get install redis-server`; `.ci/run` installs it).
`unavailable_reason()` says why no server can be started here (no binary, no `redis` Python
package) — tests turn it into a skip. `stop()` + `start()` reuse the port, so a client can
watch the server go away and come back.
"""

from __future__ import annotations

import contextlib
import importlib.util
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path


def find_binary() -> str | None:
    return shutil.which("redis-server")


def unavailable_reason() -> str | None:
    """Why a test Redis server cannot be used here, or None when it can."""
    if importlib.util.find_spec("redis") is None:
        return "the redis package is not installed (pip install -e '.[test]')"
    if find_binary() is None:
        return "redis-server not found on PATH (Debian: apt-get install redis-server)"
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _pings(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    def __init__(self, *, binary: str | None = None) -> None:
        found = binary or find_binary()
        if found is None:
            raise RuntimeError(unavailable_reason() or "redis-server not found")
        self.binary = found
        self.host = "127.0.0.1"
        self.port = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._root: Path | None = None

    @property
    def url(self) -> str:
        return f"redis://{self.host}:{self.port}/0"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self, *, port: int | None = None, timeout: float = 10.0) -> RedisServer:
        """Start on `port` (default: the previous port, else a free one); wait for PING."""
        if self.running:
            return self
        if self._root is None:
            self._root = Path(tempfile.mkdtemp(prefix="pallas-redis-"))
        self.port = port or self.port or _free_port()
        log = open(self._root / "server.log", "ab")  # noqa: SIM115 - owned by the child
        try:
            self._proc = subprocess.Popen(
                [
                    self.binary, "--port", str(self.port), "--bind", self.host,
                    "--save", "", "--appendonly", "no", "--daemonize", "no",
                    "--dir", str(self._root), "--protected-mode", "no",
                ],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            )  # fmt: skip
        finally:
            log.close()
        deadline = time.monotonic() + timeout
        while not _pings(self.host, self.port):
            if self._proc.poll() is not None or time.monotonic() > deadline:
                tail = (self._root / "server.log").read_text(errors="replace")[-2000:]
                self._kill()
                raise RuntimeError(f"redis-server did not answer PING on {self.port}:\n{tail}")
            time.sleep(0.02)
        return self

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)

    def stop(self) -> None:
        """Stop the server; the port is kept for `start()` / `restart()`."""
        self._kill()

    def restart(self) -> RedisServer:
        self.stop()
        return self.start(port=self.port)

    def close(self) -> None:
        """Stop and remove the temp dir."""
        self._kill()
        if self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)
            self._root = None


@contextlib.contextmanager
def running_redis() -> Iterator[RedisServer]:
    server = RedisServer().start()
    try:
        yield server
    finally:
        server.close()
