"""Run the real bot (`python bot.py`) as a subprocess on a free port, for end-to-end tests.

A bot on its own SQLite file starts from a copy of a database the start-up migration brought
to the heads once per test process (tests/harness/sqlite_template.py): its start-up finds the
schema in place, as every restart in production does, instead of running Alembic per test.
Starts on an empty database stay covered by the migration tests (tests/integration/
test_migrate.py, test_postgres.py) and by bots whose `DATABASE_URL` a test sets.
"""

from __future__ import annotations

import asyncio
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.harness.fake_openai import free_port
from tests.harness.group_defaults import write_group_defaults
from tests.harness.sqlite_template import migrated_copy

REPO = Path(__file__).resolve().parents[2]
PYCACHE = Path(tempfile.gettempdir()) / "pallas-test-pycache"  # the bots' bytecode
WARM_LINE = "warm-ups done in"  # pallas/onebot/startup_loads.py, once per start
# a file path: each bot stop appends "<test id>\t<child CPU seconds>" there, to count the
# suite's bot starts and what they cost (the suite's time is mostly bot starts)
STARTS_LOG = "PALLAS_TEST_BOT_STARTS"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclass
class BotProcess:
    workdir: Path
    env_overrides: Mapping[str, str] = field(default_factory=dict)
    access_token: str = "test-token"
    random_actions: bool = False  # False: tests.harness.group_defaults.NO_DICE
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None
    # where `log_text` / `tail_log` begin: a bot shared by a module's tests reads only the
    # lines of the test under way (tests/e2e/conftest.py, `this_test`)
    log_offset: int = 0
    _cpu_at_start: float = 0.0

    @property
    def db_path(self) -> Path:
        return self.workdir / "pallas.db"

    @property
    def database_url(self) -> str:
        return f"sqlite+aiosqlite:///{self.db_path}"

    @property
    def config_dir(self) -> Path:
        return self.workdir / "config"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/onebot/v11/ws"

    @property
    def log_path(self) -> Path:
        return self.workdir / "bot.log"

    def prepare(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        if "DATABASE_URL" not in self.env_overrides:
            migrated_copy(self.db_path)
        if not self.config_dir.exists():
            shutil.copytree(REPO / "config", self.config_dir)
            if not self.random_actions:
                write_group_defaults(self.config_dir)

    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "PALLAS_"))}
        # Each bot is a fresh interpreter: with PYTHONDONTWRITEBYTECODE (set on CI machines)
        # every start compiled ~380 modules again (~0.5 s CPU). Their bytecode goes to one
        # cache outside the checkout, shared by the run's bots (writes are atomic renames).
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.setdefault("PYTHONPYCACHEPREFIX", str(PYCACHE))
        env.update(
            {
                "ENVIRONMENT": "test",
                "DRIVER": "~fastapi",
                "HOST": "127.0.0.1",
                "PORT": str(self.port),
                "ONEBOT_ACCESS_TOKEN": self.access_token,
                "SUPERUSERS": '["10001"]',
                "NICKNAME": '["帕拉斯", "牛牛"]',
                "LOG_LEVEL": "INFO",
                "DATABASE_URL": self.database_url,
                "PALLAS_CONFIG_DIR": str(self.config_dir),
                "PALLAS_DATA_DIR": str(self.workdir),
                "OPENAI_API_KEY": "sk-test",
                "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
                # ~3 s of CPU and +120 MB per bot: on only where a test asks for it
                # (tests/e2e/test_sentence_encoder.py runs the default, "local"), or for a
                # whole run with PALLAS_TEST_SENTENCE_ENCODER=local
                "PALLAS_SENTENCE_ENCODER": os.environ.get("PALLAS_TEST_SENTENCE_ENCODER", "off"),
            }
        )
        env.update(self.env_overrides)
        return env

    async def start(self, timeout: float = 60.0, *, warm: bool = True) -> None:
        """Spawn the bot and wait until it listens; with `warm`, also until its background
        warm-ups (jieba, BPE) finished, so a test's first turn does not time the loading."""
        self.prepare()
        warm_lines = self._count(WARM_LINE)
        log = self.log_path.open("ab")
        self._cpu_at_start = _children_cpu()
        self.proc = subprocess.Popen(  # noqa: ASYNC220 - spawning returns at once
            [sys.executable, str(REPO / "bot.py")],
            cwd=REPO,
            env=self.environment(),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + timeout
        async with httpx.AsyncClient() as client:
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"bot exited early:\n{self.tail_log()}")
                try:
                    await client.get(f"http://127.0.0.1:{self.port}/docs", timeout=0.5)
                    text = self.log_path.read_text(errors="replace")
                    if "Pallas is up" in text and (not warm or text.count(WARM_LINE) > warm_lines):
                        return
                except httpx.HTTPError:
                    pass
                await asyncio.sleep(0.1)
        tail = self.tail_log()
        await self.stop()  # not left running after the test (nobody else would stop it)
        raise TimeoutError(f"bot did not start:\n{tail}")

    async def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGINT)
        for _ in range(100):
            if self.proc.poll() is not None:
                self._record_start()
                return
            await asyncio.sleep(0.1)
        self.proc.kill()
        self.proc.wait()
        self._record_start()

    def _record_start(self) -> None:
        path = os.environ.get(STARTS_LOG)
        if path:
            test = os.environ.get("PYTEST_CURRENT_TEST", "?").split(" ")[0]
            cpu = _children_cpu() - self._cpu_at_start
            with open(path, "a", encoding="utf-8") as out:
                out.write(f"{test}\t{cpu:.2f}\n")

    def _count(self, line: str) -> int:
        try:
            return self.log_path.read_text(errors="replace").count(line)
        except FileNotFoundError:
            return 0

    def tail_log(self, lines: int = 60) -> str:
        try:
            return "\n".join(self.log_text().splitlines()[-lines:])
        except FileNotFoundError:
            return "<no log>"

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")[self.log_offset :]

    def whole_log(self) -> str:
        return self.log_path.read_text(errors="replace")
