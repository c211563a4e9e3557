"""A throwaway PostgreSQL server for tests: initdb + pg_ctl in a temp dir, trust auth, loopback.

    with running_postgres() as server:          # or PostgresServer().start() / .stop()
        url = server.create_database("pallas")  # postgresql+asyncpg://pallas@127.0.0.1:PORT/pallas

The binaries come from $PALLAS_TEST_PG_BINDIR, PATH (symlinks resolved) or
/usr/lib/postgresql/<version>/bin, newest first. initdb refuses to run as root, so as root every
server command runs as an unprivileged system user (`postgres`, else `nobody`) through
`runuser`, and the temp dir is handed to it. The server listens on 127.0.0.1 on a free port
(socket dir: the temp dir), trusts every local connection (user `pallas`), is tuned for tests
(no fsync, no synchronous commit) and is removed, data and all, on stop.

`unavailable_reason()` says why no server can be started here (no binaries, no asyncpg, no
unprivileged user) — tests turn it into a skip.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

SUPERUSER = "pallas"
_REQUIRED = ("initdb", "pg_ctl", "postgres", "psql")
_UNPRIVILEGED_USERS = ("postgres", "nobody")
_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def _bindir_has_all(bindir: Path) -> bool:
    return all(os.access(bindir / name, os.X_OK) for name in _REQUIRED)


def _version_key(bindir: Path) -> tuple[int, ...]:
    digits = re.findall(r"\d+", bindir.parent.name)
    return tuple(int(d) for d in digits) or (0,)


def find_bindir() -> Path | None:
    """The directory holding initdb, pg_ctl, postgres and psql, or None."""
    override = os.environ.get("PALLAS_TEST_PG_BINDIR")
    if override:
        return Path(override) if _bindir_has_all(Path(override)) else None
    on_path = shutil.which("pg_ctl")
    if on_path:
        bindir = Path(os.path.realpath(on_path)).parent
        if _bindir_has_all(bindir):
            return bindir
    candidates = [p for p in Path("/usr/lib/postgresql").glob("*/bin") if _bindir_has_all(p)]
    return max(candidates, key=_version_key) if candidates else None


def _run_as_user() -> str | None:
    """As root: the unprivileged user to run the server as. Otherwise None (run as ourselves)."""
    if os.geteuid() != 0:
        return None
    for name in _UNPRIVILEGED_USERS:
        with contextlib.suppress(KeyError):
            pwd.getpwnam(name)
            return name
    return None


def unavailable_reason() -> str | None:
    """Why a test PostgreSQL server cannot be started here, or None when it can."""
    if importlib.util.find_spec("asyncpg") is None:
        return "asyncpg is not installed (pip install -e '.[test]')"
    override = os.environ.get("PALLAS_TEST_PG_BINDIR")
    if override and find_bindir() is None:
        return f"PALLAS_TEST_PG_BINDIR={override} lacks one of {', '.join(_REQUIRED)}"
    if find_bindir() is None:
        return (
            "PostgreSQL server binaries (initdb, pg_ctl, postgres, psql) not found on PATH "
            "or in /usr/lib/postgresql/*/bin (Debian: apt-get install postgresql)"
        )
    if os.geteuid() == 0:
        if _run_as_user() is None:
            return "running as root and no unprivileged user (postgres / nobody) to run initdb"
        if shutil.which("runuser") is None:
            return "running as root and `runuser` is missing (needed to run initdb unprivileged)"
    return None


def _scratch_parent() -> str | None:
    """Where the cluster lives: $PALLAS_TEST_PG_TMPDIR, else /dev/shm when it is a roomy RAM
    disk (copying the template database per test takes ~35 ms there, ~200 ms on disk), else
    the default temp dir."""
    override = os.environ.get("PALLAS_TEST_PG_TMPDIR")
    if override:
        return override
    shm = "/dev/shm"
    with contextlib.suppress(OSError):
        stats = os.statvfs(shm)
        if os.access(shm, os.W_OK | os.X_OK) and stats.f_bavail * stats.f_frsize >= 1 << 30:
            return shm
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PostgresServer:
    def __init__(self, *, bindir: Path | None = None) -> None:
        found = bindir or find_bindir()
        if found is None:
            raise RuntimeError(unavailable_reason() or "PostgreSQL binaries not found")
        self.bindir = found
        self.host = "127.0.0.1"
        self.port = 0
        self.version_num = 0  # server_version_num, e.g. 150018
        self.user = SUPERUSER
        self._os_user = _run_as_user()
        self._root: Path | None = None

    # -- paths -----------------------------------------------------------------------------------
    @property
    def root(self) -> Path:
        if self._root is None:
            raise RuntimeError("server not started")
        return self._root

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    @property
    def log_file(self) -> Path:
        return self.root / "server.log"

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self, *, attempts: int = 3) -> PostgresServer:
        self._root = Path(tempfile.mkdtemp(prefix="pallas-pg-", dir=_scratch_parent()))
        try:
            if self._os_user is not None:
                account = pwd.getpwnam(self._os_user)
                os.chown(self._root, account.pw_uid, account.pw_gid)
            self._server_cmd(
                "initdb", "-D", str(self.data_dir), "-U", SUPERUSER, "-A", "trust",
                "-E", "UTF8", "--locale=C", "--no-sync",
            )  # fmt: skip
            for attempt in range(attempts):
                self.port = _free_port()
                options = (
                    f"-h {self.host} -p {self.port} -k {self.root} "
                    "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
                    "-c max_connections=200"
                )
                try:
                    self._server_cmd(
                        "pg_ctl", "start", "-w", "-t", "60", "-D", str(self.data_dir),
                        "-l", str(self.log_file), "-o", options,
                    )  # fmt: skip
                    break
                except RuntimeError:
                    if attempt == attempts - 1:
                        raise
            self.version_num = int(self.sql("SHOW server_version_num").strip())
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        if self._root is None:
            return
        try:
            if (self.data_dir / "postmaster.pid").exists():
                self._server_cmd(
                    "pg_ctl", "stop", "-w", "-m", "immediate", "-D", str(self.data_dir),
                    check=False,
                )  # fmt: skip
        finally:
            shutil.rmtree(self._root, ignore_errors=True)
            self._root = None

    # -- databases -------------------------------------------------------------------------------
    def url(self, database: str, *, driver: str = "asyncpg") -> str:
        return f"postgresql+{driver}://{self.user}@{self.host}:{self.port}/{database}"

    def sql(self, statement: str, *, database: str = "postgres") -> str:
        """Run one SQL statement through psql (as the superuser over TCP); returns its output."""
        result = subprocess.run(
            [
                str(self.bindir / "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                "-h", self.host, "-p", str(self.port), "-U", self.user, "-d", database,
                "-c", statement,
            ],
            capture_output=True, text=True, check=False, timeout=60,
        )  # fmt: skip
        if result.returncode != 0:
            raise RuntimeError(f"psql failed: {statement!r}: {result.stderr.strip()}")
        return result.stdout

    def create_database(self, name: str, *, template: str | None = None) -> str:
        """CREATE DATABASE `name` (optionally copied from `template`); returns its asyncpg URL."""
        for ident in (name, template):
            if ident is not None and not _IDENTIFIER.match(ident):
                raise ValueError(f"not a plain identifier: {ident!r}")
        suffix = f" TEMPLATE {template}" if template else ""
        if template and self.version_num >= 150000:
            suffix += " STRATEGY FILE_COPY"  # PG 15's default (WAL_LOG) is slower for tiny DBs
        self.sql(f"CREATE DATABASE {name}{suffix}")
        return self.url(name)

    def drop_database(self, name: str) -> None:
        if not _IDENTIFIER.match(name):
            raise ValueError(f"not a plain identifier: {name!r}")
        force = " WITH (FORCE)" if self.version_num >= 130000 else ""  # drops its connections
        self.sql(f"DROP DATABASE IF EXISTS {name}{force}")

    # -- internals -------------------------------------------------------------------------------
    def _server_cmd(self, program: str, *args: str, check: bool = True) -> None:
        argv = [str(self.bindir / program), *args]
        if self._os_user is not None:
            argv = ["runuser", "-u", self._os_user, "--", *argv]
        result = subprocess.run(
            argv, cwd=self.root, capture_output=True, text=True, check=False, timeout=120
        )
        if check and result.returncode != 0:
            log = ""
            with contextlib.suppress(OSError):
                log = self.log_file.read_text(errors="replace")[-2000:]
            raise RuntimeError(
                f"{program} failed ({result.returncode}): {result.stderr.strip()}\n{log}".strip()
            )


@contextlib.contextmanager
def running_postgres() -> Iterator[PostgresServer]:
    server = PostgresServer().start()
    try:
        yield server
    finally:
        server.stop()
