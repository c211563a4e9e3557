"""Reminders on a real database of each backend, on the fake clock: set → restart → fired once;
two firers on one database → once; due during downtime (inside / outside the grace); cancel;
limits; repeating ones move on; the account that took it fires it."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime
from typing import Any

import pytest

from pallas.core.clock import FakeClock
from pallas.core.db import migrate
from pallas.core.db.engine import create_engine, session_factory
from pallas.core.sending import Target
from pallas.core.turn import Sender, TurnInput
from pallas.features.reminders import (
    CANCELLED,
    CHINA_TZ,
    DONE,
    MISSED,
    PENDING,
    ReminderConfig,
    ReminderFirer,
    ReminderRepository,
    ReminderService,
)

BOT, OTHER_BOT, GROUP, AMIYA, KALTSIT = 2_900_000_001, 2_900_000_002, 68_000_001, 10_001, 10_002
NOW = datetime(2026, 12, 6, 10, 30, tzinfo=CHINA_TZ).timestamp()  # Sunday 10:30


class RecordingSender:
    def __init__(self, failing: frozenset[int] = frozenset()) -> None:
        self.sent: list[tuple[int, int, str]] = []  # (bot, group or -user, text)
        self.ats: list[int] = []
        self.failing = failing

    async def send(self, bot_id: int, target: Target, segments: list[dict[str, Any]]) -> int | None:
        text = "".join(s["data"].get("text", "") for s in segments if s["type"] == "text")
        if target.is_private:
            self.sent.append((bot_id, -target.id, text))
            return len(self.sent)
        if bot_id in self.failing:
            return None
        self.ats += [int(s["data"]["qq"]) for s in segments if s["type"] == "at"]
        self.sent.append((bot_id, target.id, text.strip()))
        return len(self.sent)


@pytest.fixture
async def sessions(database_url: str) -> AsyncIterator[Callable[[], ReminderRepository]]:
    await migrate.upgrade(database_url)
    engines = []

    def open_repository() -> ReminderRepository:  # a new engine: what a restart opens
        engine = create_engine(database_url)
        engines.append(engine)
        return ReminderRepository(session_factory(engine))

    yield open_repository
    for engine in engines:
        await engine.dispose()


def _turn(text: str, user: int = AMIYA, *, group: int = GROUP, role: str = "member") -> TurnInput:
    return TurnInput(
        bot_id=BOT, group_id=group, user_id=user, message_id=1, time=NOW, text=text,
        sender=Sender(user, card="阿米娅", role=role), to_me=True,
    )  # fmt: skip


def _sleeper(clock: FakeClock) -> Callable[[float], Awaitable[None]]:
    async def sleep(seconds: float) -> None:
        clock.advance(seconds)
        await asyncio.sleep(0)

    return sleep


def _firer(
    repo: ReminderRepository,
    clock: FakeClock,
    sender: RecordingSender,
    *,
    local: frozenset[int] = frozenset({BOT}),
    deployment: frozenset[int] | None = None,
    config: ReminderConfig | None = None,
) -> ReminderFirer:
    cfg = config or ReminderConfig()
    return ReminderFirer(
        repo, clock=clock, config=lambda _g: cfg, sender=sender,
        local_ids=lambda: local, deployment_ids=lambda: deployment or local,
        sleep=_sleeper(clock),
    )  # fmt: skip


def _service(repo: ReminderRepository, clock: FakeClock, **config: Any) -> ReminderService:
    cfg = ReminderConfig(**config)
    return ReminderService(repo, clock=clock, config=lambda _g: cfg)


async def _say(service: ReminderService, text: str, **kwargs: Any) -> str:
    turn = _turn(text, **{k: v for k, v in kwargs.items() if k in ("user", "group", "role")})
    request = service.read(turn)
    assert request is not None, text
    reply = await service.handle(turn, request, is_admin=kwargs.get("is_admin", False))
    return reply.text


async def test_set_restart_fire_once(sessions: Callable[[], ReminderRepository]) -> None:
    clock = FakeClock(NOW)
    service = _service(sessions(), clock)
    assert (
        await _say(service, "明天早上八点提醒我交电费") == "好，12月7日（周一）08:00 提醒你交电费"
    )

    # a restart: a new engine, a new firer; nothing is due yet
    repo, sender = sessions(), RecordingSender()
    firer = _firer(repo, clock, sender)
    assert await firer.tick() == 0
    clock.advance(21.5 * 3600)  # 12月7日 08:00
    assert await firer.tick() == 1
    await firer.drain()
    assert await firer.tick() == 0
    assert sender.sent == [(BOT, GROUP, "到时间啦：交电费")] and sender.ats == [AMIYA]
    (row,) = await repo.for_group(GROUP, statuses=(DONE,))
    assert row.fire_count == 1 and row.fired_at == clock.now()


async def test_two_firers_on_one_database_fire_once(
    sessions: Callable[[], ReminderRepository],
) -> None:
    clock = FakeClock(NOW)
    service = _service(sessions(), clock)
    for n in range(6):
        await _say(service, f"十分钟后提醒我喝第{n}杯水", user=AMIYA + n)
    clock.advance(600)
    one, two = RecordingSender(), RecordingSender()
    first, second = _firer(sessions(), clock, one), _firer(sessions(), clock, two)
    claimed = await asyncio.gather(first.tick(), second.tick(), first.tick(), second.tick())
    await asyncio.gather(first.drain(), second.drain())
    assert sum(claimed) == 6
    assert sorted(t for _, _, t in one.sent + two.sent) == sorted(
        f"到时间啦：喝第{n}杯水" for n in range(6)
    )


async def test_due_during_downtime_inside_and_outside_the_grace(
    sessions: Callable[[], ReminderRepository],
) -> None:
    clock = FakeClock(NOW)
    service = _service(sessions(), clock)
    await _say(service, "十分钟后提醒我收衣服")
    await _say(service, "今天11点提醒我打卡", user=KALTSIT)
    clock.advance(30 * 60)  # down from 10:30 to 11:00: the 10:40 one is 20 min late
    sender = RecordingSender()
    repo = sessions()
    firer = _firer(repo, clock, sender)
    await firer.tick()
    await firer.drain()
    assert sender.sent[0] == (BOT, GROUP, "到时间啦：收衣服（我刚才不在线，晚了20分钟）")
    assert sender.sent[1] == (BOT, GROUP, "到时间啦：打卡")

    await _say(service, "半小时后提醒我开会")  # due 11:30
    clock.advance(2 * 3600)  # down until 13:00: 90 minutes late, beyond the 30 min grace
    await firer.tick()
    await firer.drain()
    assert sender.sent[2] == (
        BOT, GROUP, "抱歉，本来12月6日（周日）11:30 要提醒你开会，那会儿我不在线，错过了",
    )  # fmt: skip
    (missed,) = await repo.for_group(GROUP, statuses=(MISSED,))
    assert missed.text == "开会" and missed.fire_count == 0


async def test_repeating_reminders_move_on_and_skip_missed_runs(
    sessions: Callable[[], ReminderRepository],
) -> None:
    clock = FakeClock(NOW)
    service = _service(sessions(), clock)
    reply = await _say(service, "每天晚上十点提醒我吃药")
    assert reply == "好，每天 22:00 提醒你吃药，第一次是12月6日（周日）22:00"
    repo, sender = sessions(), RecordingSender()
    firer = _firer(repo, clock, sender)
    clock.advance(11.5 * 3600)  # 22:00
    await firer.tick()
    await firer.drain()
    (row,) = await repo.active_of(GROUP, AMIYA)
    assert row.status == PENDING
    assert row.next_at == datetime(2026, 12, 7, 22, 0, tzinfo=CHINA_TZ).timestamp()
    clock.advance(3 * 86_400)  # down for three days: one missed run, then the next day's
    await firer.tick()
    await firer.drain()
    (row,) = await repo.active_of(GROUP, AMIYA)
    assert row.next_at == datetime(2026, 12, 10, 22, 0, tzinfo=CHINA_TZ).timestamp()
    assert len(sender.sent) == 1  # the missed repeat is not reported each time


async def test_list_and_cancel_own_reminders(sessions: Callable[[], ReminderRepository]) -> None:
    clock = FakeClock(NOW)
    service = _service(sessions(), clock)
    await _say(service, "明天早上八点提醒我交电费")
    await _say(service, "半小时后叫我收衣服")
    await _say(service, "十分钟后提醒我关火", user=KALTSIT)
    assert await _say(service, "我的提醒") == (
        "你的提醒：\n1. 12月6日（周日）11:00 收衣服\n2. 12月7日（周一）08:00 交电费"
    )
    assert (await _say(service, "取消提醒")).startswith("你有2个提醒，要取消哪个？")
    assert await _say(service, "取消提醒 2") == "好，交电费的提醒取消啦"
    assert await _say(service, "取消第5个提醒") == "没有第5个提醒哦，说“我的提醒”看看编号吧"
    assert await _say(service, "取消所有提醒") == "好，你的1个提醒都取消啦"
    assert await _say(service, "我的提醒") == "你现在没有提醒哦"
    # Kal'tsit's reminder is untouched by Amiya's cancels
    assert [r.text for r in await service.repository.active_of(GROUP, KALTSIT)] == ["关火"]
    assert len(await service.repository.for_group(GROUP, statuses=(CANCELLED,), limit=10)) == 2


async def test_limits_and_permissions(sessions: Callable[[], ReminderRepository]) -> None:
    clock = FakeClock(NOW)
    service = _service(sessions(), clock, max_active_per_member=2, max_repeating_per_group=1)
    assert (await _say(service, "每半小时提醒我喝水")).startswith("提醒得太频繁会刷屏的")
    assert (
        await _say(service, "明天晚上八点提醒大家开黑")
        == "提醒大家要管理员来设置哦，我可以只提醒你自己～"
    )
    assert (await _say(service, "明天晚上八点提醒大家开黑", role="admin", is_admin=True)) == (
        "好，12月7日（周一）20:00 提醒大家开黑"
    )
    assert (await _say(service, "每天早上七点叫我起床", user=KALTSIT)).startswith("好，每天 07:00")
    assert (await _say(service, "每周一提醒我开会")).startswith("群里的重复提醒已经有1个啦")
    await _say(service, "明天提醒我交电费")
    assert (await _say(service, "后天提醒我交作业")).startswith("你已经有2个提醒啦")
    assert (
        await _say(service, "今天早上七点提醒我吃药")
        == "12月6日（周日）07:00已经过去啦，要换个时间吗？"
    )
    assert (await _say(service, "提醒我交电费")).startswith("要什么时候提醒你呀？")
    off = _service(sessions(), clock, enabled=False)
    assert await _say(off, "明天提醒我交电费") == "这个群没有开提醒功能哦，到时候我可提醒不了你"


async def test_everyone_reminder_mentions_nobody(
    sessions: Callable[[], ReminderRepository],
) -> None:
    clock = FakeClock(NOW)
    service = _service(sessions(), clock)
    await _say(service, "半小时后通知大家开会", role="admin", is_admin=True)
    sender = RecordingSender()
    firer = _firer(sessions(), clock, sender)
    clock.advance(1800)
    await firer.tick()
    await firer.drain()
    assert sender.sent == [(BOT, GROUP, "【提醒】开会")] and sender.ats == []


async def test_private_reminders_are_sent_as_a_dm(
    sessions: Callable[[], ReminderRepository],
) -> None:
    clock = FakeClock(NOW)
    service = _service(sessions(), clock)
    await _say(service, "十分钟后提醒我关火", group=0)
    sender = RecordingSender()
    firer = _firer(sessions(), clock, sender)
    clock.advance(600)
    await firer.tick()
    await firer.drain()
    assert sender.sent == [(BOT, -AMIYA, "到时间啦：关火")]


async def test_the_account_that_took_it_fires_it(
    sessions: Callable[[], ReminderRepository],
) -> None:
    clock = FakeClock(NOW)
    service = _service(sessions(), clock)
    await _say(service, "十分钟后提醒我关火")  # taken by BOT
    clock.advance(600)
    elsewhere, here = RecordingSender(), RecordingSender()
    # BOT is connected to another process: this one (serving OTHER_BOT) leaves it alone
    other_process = _firer(
        sessions(), clock, here, local=frozenset({OTHER_BOT}),
        deployment=frozenset({BOT, OTHER_BOT}),
    )  # fmt: skip
    assert await other_process.tick() == 0
    # BOT went offline everywhere: OTHER_BOT, in the group, fires it; a failing account is skipped
    failing = RecordingSender(failing=frozenset({OTHER_BOT - 1}))
    takeover = _firer(
        sessions(), clock, failing, local=frozenset({OTHER_BOT - 1, OTHER_BOT}),
    )  # fmt: skip
    assert await takeover.tick() == 1
    await takeover.drain()
    assert failing.sent == [(OTHER_BOT, GROUP, "到时间啦：关火")] and elsewhere.sent == []


async def test_sends_are_paced_per_group_and_account(
    sessions: Callable[[], ReminderRepository],
) -> None:
    clock = FakeClock(NOW)
    service = _service(sessions(), clock)
    for n in range(5):
        await _say(service, f"十分钟后提醒我做第{n}件事", user=AMIYA + n)
    clock.advance(600)
    times: list[float] = []
    firer = _firer(sessions(), clock, RecordingSender(), config=ReminderConfig(pace_s=2.0))
    firer.observer = lambda _r, now, _o: times.append(now)
    await firer.tick()
    await firer.drain()
    assert [round(b - a, 3) for a, b in itertools.pairwise(times)] == [2.0] * 4


async def test_admins_list_and_cancel_any_reminder_of_their_group(
    sessions: Callable[[], ReminderRepository],
) -> None:
    from pallas.core.admin_commands import AdminContext
    from pallas.features.reminders import REMINDER_COMMANDS, ReminderAdmin

    clock = FakeClock(NOW)
    service = _service(sessions(), clock)
    await _say(service, "明天早上八点提醒我交电费")
    await _say(service, "每天晚上十点提醒我吃药", user=KALTSIT)
    await _say(service, "十分钟后提醒我关火", group=GROUP + 1)  # another group's
    (command,) = REMINDER_COMMANDS
    admin = ReminderAdmin(sessions(), clock)

    async def run(*args: str) -> str:
        return await command.handler(AdminContext(admin, BOT, GROUP, 1, args))

    listing = await run()
    assert listing.splitlines()[0] == "本群待发的提醒（2）："
    assert f"{KALTSIT}：每天 22:00 吃药（下次 12月6日（周日）22:00）" in listing
    assert f"{AMIYA}：12月7日（周一）08:00 交电费" in listing and "关火" not in listing
    first_id = int(listing.splitlines()[1].split()[0].lstrip("#"))
    other = (await admin.repository.for_group(GROUP + 1))[0]  # type: ignore[union-attr]
    assert await run("cancel", str(other.id)) == f"本群没有待发的提醒 #{other.id}"
    assert await run("cancel", str(first_id)) == f"已取消提醒 #{first_id}"
    assert "已取消" in await run("recent")
    assert (await run("bogus")).startswith("用法")


class _Llm:
    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.calls = 0

    async def complete(self, task: str, messages: list[dict[str, Any]], **kw: Any) -> Any:
        self.calls += 1
        return type("Result", (), {"ok": True, "text": self.answer, "error": ""})()


class _Usage:
    async def totals(self, **_: Any) -> Any:
        return type("Totals", (), {"tokens": 0})()


async def test_the_model_reads_a_time_the_rules_cannot_else_a_question_back(
    sessions: Callable[[], ReminderRepository],
) -> None:
    from typing import cast

    from pallas.features.reminders import ModelTimeReader
    from pallas.providers.cheap_calls import CheapCalls

    clock = FakeClock(NOW)
    cfg = ReminderConfig()
    for answer, expected in (
        ('{"when": "2026-12-06 10:40"}', "好，12月6日（周日）10:40 提醒你收衣服"),
        ('{"when": ""}', "要什么时候提醒你呀？说个具体时间吧，比如“明天早上八点提醒我收衣服”"),
    ):
        llm = _Llm(answer)
        cheap = CheapCalls(clock=clock, usage=cast(Any, _Usage()), llm=cast(Any, llm))
        reader = ModelTimeReader(cheap=cheap, config=lambda _g: cfg)
        service = ReminderService(sessions(), clock=clock, config=lambda _g: cfg, model_time=reader)
        assert await _say(service, "过一会儿提醒我收衣服") == expected
        assert llm.calls == 1
        assert await _say(service, "明天早上八点提醒我交电费")  # read by the rules: no call
        assert llm.calls == 1
        await _say(service, "取消所有提醒")
