"""Corrections, the teaching cap, forgetting one fact, undo and recall by pages (issue 47), through
the real member-command path with no model: what the member sees and what stays live.

The sentence encoder is the deterministic `HashingEncoder` (the real one is measured in
`benchmarks.memory_corrections`); a few rows run without any encoder (the words decide).
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pallas.app_wiring import memory_service_for
from pallas.core.clock import FakeClock
from pallas.core.settings import PallasSettings
from pallas.core.state import MemoryStateStore
from pallas.core.turn import Sender, TurnInput
from pallas.features.memory.history import retired_items
from pallas.features.memory.isolation import group_scope
from pallas.features.memory.records import MemoryItem
from pallas.features.memory.service import MemoryService
from pallas.features.memory_commands.member_commands import (
    MAX_TAUGHT_PER_USER,
    handle_member_message,
)
from pallas.features.memory_commands.member_forget import UNDO_WINDOW_S
from pallas.providers.sentence_encoder import HashingEncoder, SentenceEncoder
from pallas.runtime import PallasRuntime

REPO = Path(__file__).resolve().parents[2]
BOT, A = 7, 100
ALICE, BOB = 20_011, 20_022


@dataclass
class Bot:
    service: MemoryService
    clock: FakeClock
    encoder: SentenceEncoder | None = field(default_factory=HashingEncoder)
    mid: int = 0

    async def say(self, text: str, user: int = ALICE) -> str | None:
        self.mid += 1
        self.clock.advance(5)
        turn = TurnInput(BOT, A, user, self.mid, 0.0, f"牛牛 {text}",
                         sender=Sender(user, card="u"), to_me=True)  # fmt: skip
        return await handle_member_message(
            self.service, turn, aliases=("牛牛",), encoder=self.encoder
        )

    async def live(self, user: int = ALICE) -> list[str]:
        items = await self.service.repo.list_items(
            scopes=[group_scope(BOT, A)], subject_user_id=user, limit=500
        )
        return sorted(i.text for i in items)


@pytest.fixture
async def bot(tmp_path: Path, database_url: str) -> AsyncIterator[Bot]:
    shutil.copytree(REPO / "config", tmp_path / "config")
    clock = FakeClock(1_760_000_000.0)
    rt = await PallasRuntime.start(
        PallasSettings(database_url=database_url, pallas_config_dir=tmp_path / "config"),
        clock=clock,
        state=MemoryStateStore(clock),
    )
    yield Bot(memory_service_for(rt), clock)
    await rt.stop()


@pytest.mark.parametrize("encoder", [True, False], ids=["encoder", "words"])
@pytest.mark.parametrize(
    ("old", "said", "stored"),
    [
        ("我的血型是A型", "不对，我的血型是O型", "TA的血型是O型"),
        ("我穿42码的鞋", "更正一下：我穿44码的鞋", "TA穿44码的鞋"),
        ("我的游戏ID是风中追风", "之前的游戏ID作废了，新ID是月下独酌", "TA新ID是月下独酌"),
        ("我的血型是A型", "我的血型不对，是O型", "TA血型是O型"),
        ("我的座右铭是天道酬勤", "我的座右铭是知行合一", "TA的座右铭是知行合一"),
    ],
)
async def test_a_correction_retires_the_fact_it_replaces_and_says_which(
    bot: Bot, encoder: bool, old: str, said: str, stored: str
) -> None:
    if not encoder:
        bot.encoder = None
    for fact in ("我对花生过敏", "我周末喜欢去爬山", old):
        assert await bot.say(f"记住 {fact}") == "记住啦～"
    reply = await bot.say(f"记住 {said}")
    shown = "你" + old.removeprefix("我")
    assert reply == f"记住啦～ 之前记的「{shown}」我划掉了（划错了就说“撤销”）"
    assert await bot.live() == sorted([stored, "TA对花生过敏", "TA周末喜欢去爬山"])
    [retired] = await retired_items(bot.service.repo, [group_scope(BOT, A)], subject_user_id=ALICE)
    assert retired.reason_zh == "被新说法替换（按意思判断）"


@pytest.mark.parametrize(
    ("old", "said"),
    [
        ("我会说日语", "我会说韩语"),  # one speaks both
        ("我的网名叫咸鱼", "我的英文名叫Jack"),  # a neighbouring thing
        ("我对花生过敏", "纠正一下，我其实不吃香菜"),  # a marker, nothing close to correct
    ],
)
async def test_what_corrects_nothing_retires_nothing(bot: Bot, old: str, said: str) -> None:
    await bot.say(f"记住 {old}")
    assert await bot.say(f"记住 {said}") == "记住啦～"
    assert len(await bot.live()) == 2


async def test_undo_brings_back_what_a_correction_crossed_out(bot: Bot) -> None:
    await bot.say("记住 我的幸运数字是7")
    await bot.say("记住 不对，我的幸运数字是13")
    assert await bot.live() == ["TA的幸运数字是13"]
    assert await bot.say("撤销") == "好，「你的幸运数字是7」我又记起来啦～"
    assert await bot.live() == ["TA的幸运数字是13", "TA的幸运数字是7"]


async def _teach_up_to_the_cap(bot: Bot) -> None:
    """One fact taught before, then fillers up to the cap."""
    for n in range(MAX_TAUGHT_PER_USER - 1):
        assert await bot.say(f"记住 我收藏的第{n + 1}张邮票来自第{n + 1}个国家") == "记住啦～"


async def test_at_the_cap_a_correction_is_taken_and_a_new_fact_drops_the_oldest_unused(
    bot: Bot,
) -> None:
    await bot.say("记住 我的血型是A型")
    await _teach_up_to_the_cap(bot)
    assert len(await bot.live()) == MAX_TAUGHT_PER_USER

    corrected = await bot.say("记住 纠正一下，我的血型是O型")
    assert corrected is not None and "「你的血型是A型」我划掉了" in corrected
    assert len(await bot.live()) == MAX_TAUGHT_PER_USER

    added = await bot.say("记住 我会弹尤克里里")
    oldest = "你收藏的第1张邮票来自第1个国家"
    assert added == (
        f"记住啦～ 关于你的事我最多记 {MAX_TAUGHT_PER_USER} 条，最早教我、也没用上的"
        f"「{oldest}」我先忘掉了（说“撤销”可以找回来）"
    )
    after = await bot.live()
    assert "TA会弹尤克里里" in after and "TA收藏的第1张邮票来自第1个国家" not in after
    assert await bot.say("撤销") == f"好，「{oldest}」我又记起来啦～"
    assert "TA收藏的第1张邮票来自第1个国家" in await bot.live()


async def test_a_denial_at_the_cap_is_taken(bot: Bot) -> None:
    await bot.say("记住 我养了一只猫")
    await _teach_up_to_the_cap(bot)
    assert await bot.say("记住 我已经不养猫了") == "好～ 之前记的「你养了一只猫」我划掉了"
    assert "TA养了一只猫" not in await bot.live()


async def test_forget_one_fact_by_meaning_says_which_and_can_be_undone(bot: Bot) -> None:
    for fact in ("我的血型是O型", "我对花生过敏", "我周末喜欢去爬山"):
        await bot.say(f"记住 {fact}")
    await bot.say("记住 我喜欢猫", user=BOB)
    changed: list[MemoryItem] = []

    async def listener(service: MemoryService, item: MemoryItem) -> None:
        changed.append(item)

    bot.service.change_listeners = (*bot.service.change_listeners, listener)
    reply = await bot.say("忘掉我的血型")
    assert reply == "好，「你的血型是O型」这条我忘掉啦～说“撤销”可以找回来（10 分钟内）"
    assert await bot.live() == ["TA周末喜欢去爬山", "TA对花生过敏"]
    assert await bot.live(BOB) == ["TA喜欢猫"]
    await bot.service.drain()
    assert [i.text for i in changed] == ["TA的血型是O型"]  # the profile is rebuilt without it

    assert await bot.say("撤销", user=BOB) is None  # Bob forgot nothing: the chat answers
    assert await bot.say("恢复") == "好，「你的血型是O型」我又记起来啦～"
    assert await bot.live() == ["TA周末喜欢去爬山", "TA对花生过敏", "TA的血型是O型"]
    assert await bot.say("撤销") is None  # nothing left to undo


async def test_undo_only_within_its_window(bot: Bot) -> None:
    await bot.say("记住 我的血型是O型")
    await bot.say("把我的血型忘了吧")
    bot.clock.advance(UNDO_WINDOW_S + 1)
    assert await bot.say("撤销") is None
    assert await bot.live() == []


async def test_forget_one_of_nothing_known_or_two_alike(bot: Bot) -> None:
    assert await bot.say("忘掉我的血型") == (
        "我没找到关于你“血型”的记忆哦，可以问我“你记得我什么”看看"
    )
    await bot.say("记住 我的猫叫咪咪")
    await bot.say("记住 我的狗叫旺财")
    bot.encoder = None
    reply = await bot.say("忘掉我的宠物名字")
    assert reply is not None and reply.startswith("你是说") and await bot.live() != []


async def test_recall_pages_through_every_fact(bot: Bot) -> None:
    facts = [f"我去过第{n}个城市" for n in range(1, 21)]
    for fact in facts:
        await bot.say(f"记住 {fact}")
    first = await bot.say("你记得我什么")
    assert first is not None
    assert first.count("· ") == 8 and "（第1/3页，共 20 条；说“下一页”看后面的）" in first
    second = await bot.say("下一页")
    assert second is not None and "第2/3页" in second and second.count("· ") == 8
    third = await bot.say("你记得我什么 3")
    assert third is not None and "第3/3页" in third and "这是最后一页啦" in third
    assert third.count("· ") == 4
    shown = "".join(p for p in (first, second, third))
    assert all(f.removeprefix("我") in shown for f in facts), "every fact can be seen"
    assert await bot.say("你记得我什么 9") == "只有 3 页哦，说“你记得我什么 3”看最后一页"
    assert await bot.say("下一页", user=BOB) is None  # no listing of Bob's: the chat answers


async def test_few_facts_fit_one_page_without_an_indicator(bot: Bot) -> None:
    await bot.say("记住 我喜欢猫")
    assert await bot.say("你记得我什么") == "我记得你：\n· 喜欢猫"
