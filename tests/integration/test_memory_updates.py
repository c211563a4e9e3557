"""Facts that update, through the real member-command path and the extraction write path:
the replaced fact stays in history and stops being injected; "你记得我什么" lists only the
speaker's own facts."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from pallas.app_wiring import memory_service_for
from pallas.core.clock import FakeClock
from pallas.core.settings import PallasSettings
from pallas.core.state import MemoryStateStore
from pallas.core.turn import Sender, TurnInput
from pallas.features.memory.isolation import group_scope
from pallas.features.memory.records import MemoryItem
from pallas.features.memory.service import MemoryService
from pallas.features.memory_commands.member_commands import handle_member_message
from pallas.features.memory_commands.recall_pages import REPLY_NOTHING_KNOWN
from pallas.features.memory_prompt.recall import RECALL_HEADER
from pallas.runtime import PallasRuntime

REPO = Path(__file__).resolve().parents[2]
BOT, A, B = 7, 100, 200
ALICE, BOB = 20_011, 20_022


@pytest.fixture
async def service(tmp_path: Path, database_url: str) -> AsyncIterator[MemoryService]:
    shutil.copytree(REPO / "config", tmp_path / "config")
    clock = FakeClock(1_760_000_000.0)
    rt = await PallasRuntime.start(
        PallasSettings(database_url=database_url, pallas_config_dir=tmp_path / "config"),
        clock=clock,
        state=MemoryStateStore(clock),
    )
    yield memory_service_for(rt)
    await rt.stop()


async def say(service: MemoryService, group: int, user: int, text: str, mid: int = 1) -> str | None:
    turn = TurnInput(BOT, group, user, mid, 0.0, text, sender=Sender(user, card="u"), to_me=True)
    return await handle_member_message(service, turn, aliases=("牛牛",))


async def live(service: MemoryService, group: int, user: int) -> list[str]:
    items = await service.repo.list_items(scopes=[group_scope(BOT, group)], subject_user_id=user)
    return sorted(i.text for i in items)


async def test_a_new_place_replaces_the_old_and_the_old_stays_in_history(
    service: MemoryService,
) -> None:
    assert await say(service, A, ALICE, "牛牛 记住 我住在海淀区") == "记住啦～"
    await say(service, A, ALICE, "牛牛 记住 我喜欢猫", 2)
    assert await say(service, A, ALICE, "牛牛 记住 我搬到朝阳了", 3) == (
        "记住啦～ 之前记的「你住在海淀区」我划掉了"
    )
    assert await live(service, A, ALICE) == ["TA喜欢猫", "TA搬到朝阳了"]
    history = await service.repo.list_items(
        scopes=[group_scope(BOT, A)], subject_user_id=ALICE, include_deleted=True
    )
    old = next(i for i in history if i.text == "TA住在海淀区")
    new = next(i for i in history if i.text == "TA搬到朝阳了")
    assert (old.delete_reason, old.replaced_by) == ("rule:update", new.id)


async def test_liking_a_second_animal_adds_and_a_denial_contradicts(
    service: MemoryService,
) -> None:
    await say(service, A, ALICE, "牛牛 记住 我喜欢猫")
    assert await say(service, A, ALICE, "牛牛 记住 我喜欢狗", 2) == "记住啦～"
    assert await live(service, A, ALICE) == ["TA喜欢狗", "TA喜欢猫"]
    # a dislike is information of its own: kept as the new fact
    assert await say(service, A, ALICE, "牛牛 记住 我不喜欢猫了", 3) == (
        "记住啦～ 之前记的「你喜欢猫」我划掉了"
    )
    assert await live(service, A, ALICE) == ["TA不喜欢猫了", "TA喜欢狗"]


async def test_an_extracted_denial_retires_the_taught_fact(service: MemoryService) -> None:
    """Extraction of "@牛牛 我已经不住海淀了": the bare negation retires the fact and is kept
    only as history (never injected next to anything)."""
    await say(service, A, ALICE, "牛牛 记住 我住在海淀区")
    outcome = await service.remember(
        bot_id=BOT, scope=group_scope(BOT, A), kind="person_facts", text="已经不住海淀了",
        origin="extract", key="residence", subject_user_id=ALICE,
    )  # fmt: skip
    assert outcome.action == "contradicted"
    assert await live(service, A, ALICE) == []
    history = await service.repo.list_items(
        scopes=[group_scope(BOT, A)], subject_user_id=ALICE, include_deleted=True
    )
    old = next(i for i in history if i.text == "TA住在海淀区")
    denial = next(i for i in history if i.text == "已经不住海淀了")
    assert (old.delete_reason, old.replaced_by, denial.delete_reason) == (
        "rule:deny",
        denial.id,
        "denial",
    )


async def test_a_reader_never_sees_the_bare_denial_live(
    service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A prompt assembled right after the denied fact is retired (a concurrent turn) must not
    carry "已经不养猫了" as a live fact: the two writes are one transaction."""
    await say(service, A, ALICE, "牛牛 记住 我养了一只猫")
    seen: list[list[str]] = []
    retire = service.repo.retire

    async def retire_then_read(*args: Any, **kwargs: Any) -> list[MemoryItem]:
        gone = await retire(*args, **kwargs)
        seen.append(await live(service, A, ALICE))  # a reader arriving at once
        return gone

    monkeypatch.setattr(service.repo, "retire", retire_then_read)
    turn = TurnInput(BOT, A, ALICE, 6, 0.0, "我已经不养猫了", sender=Sender(ALICE, card="u"))
    [outcome] = await service.apply_plain_chat(turn)
    assert outcome.action == "contradicted"
    assert seen == [[]], seen


async def test_a_denial_said_in_plain_chat_retires_the_fact_by_rules(
    service: MemoryService,
) -> None:
    """The offline path for one chat line (what the extraction job falls back to)."""
    await say(service, A, ALICE, "牛牛 记住 我养了一只猫")
    await say(service, A, ALICE, "牛牛 记住 我养狗", 2)
    await say(service, B, ALICE, "牛牛 记住 我养了一只猫", 3)
    await say(service, A, BOB, "牛牛 记住 我养了一只猫", 4)
    for text in ("我不养猫，但是我养狗", "我朋友不养猫了", "你不养猫了吗"):
        turn = TurnInput(BOT, A, ALICE, 5, 0.0, text, sender=Sender(ALICE, card="u"))
        assert await service.apply_plain_chat(turn) == []
    denial = TurnInput(BOT, A, ALICE, 6, 0.0, "牛牛 我已经不养猫了", sender=Sender(ALICE, card="u"))
    [outcome] = await service.apply_plain_chat(denial)
    assert outcome.action == "contradicted"
    assert await live(service, A, ALICE) == ["TA养狗"]
    assert await live(service, B, ALICE) == ["TA养了一只猫"], "another group's fact stays"
    assert await live(service, A, BOB) == ["TA养了一只猫"], "another member's fact stays"


async def test_recall_lists_only_the_speakers_own_facts_in_this_group(
    service: MemoryService,
) -> None:
    assert await say(service, A, ALICE, "牛牛 你记得我什么") == REPLY_NOTHING_KNOWN
    await say(service, A, ALICE, "牛牛 记住 我喜欢猫")
    await say(service, A, ALICE, "牛牛 记住 我在备考雅思", 2)
    await say(service, A, BOB, "牛牛 记住 我对花生过敏", 3)
    await say(service, B, ALICE, "牛牛 记住 我是左撇子", 4)
    reply = await say(service, A, ALICE, "牛牛 你还记得我什么？", 5)
    assert reply is not None and reply.startswith(RECALL_HEADER)
    assert "喜欢猫" in reply and "在备考雅思" in reply
    assert "花生" not in reply, "another member's fact"
    assert "左撇子" not in reply, "another group's fact"
    assert "TA" not in reply
