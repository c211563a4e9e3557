"""A real `PallasRuntime` on a temporary database, for learning integration tests."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pallas.core.clock import FakeClock
from pallas.core.records import StoredMessage
from pallas.core.settings import PallasSettings
from pallas.runtime import PallasRuntime
from tests.harness.fake_openai import FakeOpenAI
from tests.harness.learning_script import Line
from tests.harness.sqlite_template import migrated_copy

BOT = 2_900_000_001
OTHER_BOT = 2_900_000_002
ADMIN = 10001  # superuser
MEMBERS = (31_001, 31_002, 31_003, 31_004)


def write_config(root: Path, name: str, toml: str) -> None:
    groups = root / "config" / "groups"
    groups.mkdir(parents=True, exist_ok=True)
    (groups / f"{name}.toml").write_text(toml, encoding="utf-8")


async def start_runtime(
    root: Path, fake: FakeOpenAI, clock: FakeClock, database_url: str | None = None
) -> PallasRuntime:
    """Start on `database_url` (the `database_url` fixture), else on a SQLite file in `root`."""
    (root / "config" / "groups").mkdir(parents=True, exist_ok=True)
    settings = PallasSettings(
        database_url=database_url or f"sqlite+aiosqlite:///{migrated_copy(root / 'pallas.db')}",
        pallas_config_dir=root / "config",
        pallas_data_dir=root,
        openai_base_url=fake.base_url,
        openai_api_key="sk-test",
        pallas_llm_timeout_seconds=3.0,
        pallas_llm_max_retries=0,
    )
    return await PallasRuntime.start(
        settings, clock=clock, superusers=frozenset({ADMIN}), llm_http_client=fake.http_client()
    )


def stored(
    lines: Iterable[Line], *, group_id: int, t0: float, bot_id: int = BOT, step: float = 5.0
) -> list[StoredMessage]:
    return [
        StoredMessage(
            bot_id=bot_id,
            group_id=group_id,
            message_id=line.message_id,
            user_id=line.user_id,
            time=t0 + i * step,
            text=line.text,
            reply_to=line.reply_to,
            is_bot=line.user_id == bot_id,
        )
        for i, line in enumerate(lines)
    ]
