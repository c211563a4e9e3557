"""The bot built in-process by the composition root, over fakes, for ChatTurnService tests.

`start_chat_app` copies the repo's config (dice and the member rate limit off, as the e2e
harness does), starts `pallas.app.start_app` on a SQLite file (a copy of a migrated template:
tests/harness/sqlite_template.py) with a `FakeClock`, the memory StateStore and the fake
OpenAI server in-process, with a `sleep` (handed to `start_app`) that advances the fake clock
(bubble pacing, retries, merge waits never wait on the real clock).
"""

from __future__ import annotations

import random
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pallas.app import PallasApp, start_app
from pallas.core.clock import FakeClock
from pallas.core.sending import Target
from pallas.core.settings import PallasSettings
from pallas.core.state import MemoryStateStore
from pallas.core.turn import Segment, Sender, TurnInput
from tests.harness.fake_openai import FakeOpenAI
from tests.harness.group_defaults import write_group_defaults
from tests.harness.sqlite_template import migrated_copy

REPO = Path(__file__).resolve().parents[2]
BOT = 2_900_000_001
GROUP = 600_001
ADMIN = 10_001  # superuser
ALICE, BOB = 31_001, 31_002
T0 = 1_760_000_000.0


@dataclass
class RecordingSender:
    """A `Sender` that keeps what the bot sent (ids count up from 9_000_001)."""

    sent: list[tuple[Target, list[dict[str, Any]]]] = field(default_factory=list)

    async def send(self, target: Target, segments: list[dict[str, Any]]) -> int | None:
        self.sent.append((target, list(segments)))
        return 9_000_000 + len(self.sent)

    def texts(self) -> list[str]:
        return [
            "".join(str(s["data"].get("text", "")) for s in segs if s["type"] == "text")
            for _, segs in self.sent
        ]


@dataclass
class ClockSleep:
    """`sleep` for the chat service: advances the fake clock, remembers every pause."""

    clock: FakeClock
    pauses: list[float] = field(default_factory=list)

    async def __call__(self, seconds: float) -> None:
        self.pauses.append(seconds)
        self.clock.advance(seconds)


async def start_chat_app(
    root: Path,
    fake: FakeOpenAI,
    clock: FakeClock,
    *,
    group_toml: str = "",
    api_key: bool = True,
    no_dice: bool = True,
) -> tuple[PallasApp, ClockSleep]:
    shutil.copytree(REPO / "config", root / "config")
    if no_dice:
        write_group_defaults(root / "config")
    if group_toml:
        (root / "config" / "groups" / f"{GROUP}.toml").write_text(group_toml, encoding="utf-8")
    settings = PallasSettings(
        database_url=f"sqlite+aiosqlite:///{migrated_copy(root / 'pallas.db')}",
        pallas_config_dir=root / "config",
        pallas_data_dir=root,
        openai_base_url=fake.base_url,
        openai_api_key="sk-test" if api_key else "",
        pallas_llm_timeout_seconds=3.0,
        pallas_llm_max_retries=0,
    )
    sleep = ClockSleep(clock)
    app = await start_app(
        settings,
        clock=clock,
        state=MemoryStateStore(clock),
        superusers=frozenset({ADMIN}),
        rng=random.Random(7),
        sleep=sleep,
        llm_http_client=fake.http_client(),
    )
    return app, sleep


_ids = iter(range(7_000_001, 8_000_000))


def group_turn(
    text: str, clock: FakeClock, *, user: int = ALICE, at_bot: bool = False, age_s: float = 0.0
) -> TurnInput:
    """A member's group message as the OneBot edge builds it, sent `age_s` ago."""
    segments = [Segment("at", {"qq": str(BOT)})] if at_bot else []
    segments.append(Segment("text", {"text": text}))
    return TurnInput(
        bot_id=BOT,
        group_id=GROUP,
        user_id=user,
        message_id=next(_ids),
        time=clock.now() - age_s,
        text=text,
        segments=tuple(segments),
        sender=Sender(user_id=user, card=f"member{user}"),
        mentions=(BOT,) if at_bot else (),
        to_me=at_bot,
    )
