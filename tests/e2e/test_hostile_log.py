"""Hostile input costs one log line, never a traceback (issue 33), through the real protocol.

A peer sends 14 kinds of broken events 20 times each (segments of the wrong shape, ids that
are words, a missing sender, null text, events with no ids at all, broken notices) plus frames
that are not events. The bot keeps serving, records what can be recorded, and its log holds no
traceback and a few lines per kind — before, the same run wrote ~160 tracebacks and 6,800
lines.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tests.e2e.conftest import BOT_ID, DbView
from tests.harness.bot_process import BotProcess
from tests.harness.onebot_peer import OneBotPeer

pytestmark = pytest.mark.e2e

GROUP = 61_000_001
ROUNDS = 20


def hostile(peer: OneBotPeer, i: int) -> dict[str, Any]:
    event = peer.group_message(GROUP, 20_000 + i % 50, f"第{i}条", message_id=900_000 + i)
    broken: dict[int, dict[str, Any]] = {
        0: {"message": [{"type": "text", "data": {"text": "半截"}}, "not-a-seg", {"data": {}}]},
        1: {"message": "前面[CQ:image,file=abc 后面 [CQ:at,qq=123"},
        2: {"message": [{"type": "at", "data": {"qq": None}}]},
        3: {"message": [{"type": "image", "data": {"url": 12345}}]},
        4: {"user_id": "not-a-number"},
        5: {"sender": "nope"},
        6: {"message_id": None},
        7: {"time": "yesterday"},
        8: {"group_id": -5},
        9: {"message": [{"type": "reply", "data": {"id": "abc"}}, {"type": "text", "data": {}}]},
        10: {"message": [{"type": "text", "data": {"text": None}}]},
        11: {"message": [{"type": "face", "data": {"id": []}}]},
    }
    kind = i % 14
    if kind == 12:
        return {"post_type": "message", "message_type": "group"}
    if kind == 13:
        return {"post_type": "notice", "notice_type": "group_increase", "group_id": "x"}
    return {**event, **broken[kind]}


async def test_hostile_events_cost_a_few_lines_and_no_traceback(
    bot: BotProcess, peer: OneBotPeer, db: DbView
) -> None:
    for i in range(14 * ROUNDS):
        await peer.send_event(hostile(peer, i))
    await peer.send_raw("{not json")
    await peer.send_raw(json.dumps([1, 2, 3]))
    await peer.send_raw("[" * 5000 + "]" * 5000)
    await peer.send_event(peer.group_message(GROUP, 20_001, "still alive", message_id=77))

    async def alive() -> bool:
        return bool(await db.messages.find_by_message_ids(BOT_ID, GROUP, [77]))

    await db.wait_for(alive, what="a normal message after the hostile ones")
    await asyncio.sleep(0.5)  # the last handlers finish (and would log)
    assert bot.proc is not None and bot.proc.poll() is None

    log = bot.log_path.read_text(encoding="utf-8")
    assert log.count("Traceback") == 0, bot.tail_log(60)
    refused = [line for line in log.splitlines() if "refused a OneBot" in line]
    assert 0 < len(refused) <= 60  # a few per kind a minute, then a count
    # what could be kept is kept: the good segment around the malformed ones
    kept = await db.messages.find_by_message_ids(BOT_ID, GROUP, [900_000, 900_014])
    assert {m.text for m in kept.values()} == {"半截"}
