"""Which admission lane a group message takes at the edge (pallas/onebot/lane_choice.py).

Addressed messages — an @bot, a reply, a line naming the bot — skip the queue of unaddressed
traffic. The verdict is taken on the raw OneBot frame, before the adapter has looked up the
quoted message (so any reply counts) and before it strips the @ (so the segment is still there).
"""

from __future__ import annotations

from typing import Any

import pytest

from pallas.onebot.convert import turn_input_from_event
from pallas.onebot.lane_choice import NORMAL, LaneChoice, LaneVerdict, lane_for

BOT = 2_900_000_001
ALIASES = ("帕拉斯", "牛牛")


def _frame(segments: list[dict[str, Any]], *, user: int = 41_001) -> dict[str, Any]:
    return {
        "time": 1_700_000_000,
        "self_id": BOT,
        "post_type": "message",
        "message_type": "group",
        "sub_type": "normal",
        "message_id": 7_001,
        "group_id": 64_000_001,
        "user_id": user,
        "anonymous": None,
        "message": segments,
        "raw_message": "",
        "font": 0,
        "sender": {"user_id": user, "nickname": "alice", "card": "", "role": "member"},
    }


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "data": {"text": text}}


def _at(qq: int | str) -> dict[str, Any]:
    return {"type": "at", "data": {"qq": str(qq)}}


def _reply(message_id: int) -> dict[str, Any]:
    return {"type": "reply", "data": {"id": str(message_id)}}


CASES = [
    ("plain chatter", [_text("今天吃什么")], LaneVerdict(False, "unaddressed")),
    ("@ the bot", [_at(BOT), _text(" 在吗")], LaneVerdict(True, "at")),
    ("@ the bot at the end", [_text("问一下 "), _at(BOT)], LaneVerdict(True, "at")),
    ("@ someone else", [_at(12_345), _text(" 在吗")], LaneVerdict(False, "unaddressed")),
    ("@ everyone", [_at("all"), _text(" 开会")], LaneVerdict(False, "unaddressed")),
    # a reply to anyone skips the queue but holds the loop only once it is known to quote the bot
    ("a reply to anyone", [_reply(6_001), _text("真的吗")], LaneVerdict(True, "reply", False)),
    ("a reply that @s the bot", [_reply(6_001), _at(BOT), _text(" 嗯")], LaneVerdict(True, "at")),
    ("an alias first", [_text("帕拉斯 你好")], LaneVerdict(True, "alias")),
    ("an alias inside", [_text("我觉得牛牛说得对")], LaneVerdict(True, "alias")),
    ("a picture only", [{"type": "image", "data": {"file": "a.png"}}], NORMAL),
    ("empty text", [_text("")], NORMAL),
]


@pytest.mark.parametrize(("name", "segments", "verdict"), CASES, ids=[c[0] for c in CASES])
def test_lane_of_a_raw_group_message(
    name: str, segments: list[dict[str, Any]], verdict: LaneVerdict
) -> None:
    turn = turn_input_from_event(_frame(segments), to_me=False, reply_to_user_id=None)
    assert lane_for(turn, ALIASES) == verdict


@pytest.mark.parametrize(
    ("to_me", "reply_to_user", "reason"),
    [(True, None, "to_me"), (False, BOT, "quotes_bot"), (True, BOT, "quotes_bot")],
)
def test_the_adapters_own_verdicts_count_too(
    to_me: bool, reply_to_user: int | None, reason: str
) -> None:
    segments = [_reply(6_001), _text("嗯")] if reply_to_user else [_text("嗯")]
    turn = turn_input_from_event(_frame(segments), to_me=to_me, reply_to_user_id=reply_to_user)
    assert lane_for(turn, ()) == LaneVerdict(True, reason)


def test_without_aliases_a_name_in_the_text_is_just_text() -> None:
    turn = turn_input_from_event(_frame([_text("帕拉斯 你好")]), to_me=False)
    assert lane_for(turn, ()) == NORMAL


def test_the_lane_choice_uses_the_groups_aliases() -> None:
    asked: list[int] = []

    def aliases(group_id: int) -> tuple[str, ...]:
        asked.append(group_id)
        return ALIASES

    choice = LaneChoice(aliases)
    named = turn_input_from_event(_frame([_text("牛牛 在吗")]), to_me=False)
    assert choice.for_turn(named) == LaneVerdict(True, "alias") and asked == [64_000_001]
    at = turn_input_from_event(_frame([_at(BOT), _text(" 在吗")]), to_me=False)
    assert choice.for_turn(at) == LaneVerdict(True, "at")
    plain = turn_input_from_event(_frame([_text("哈哈")]), to_me=False)
    assert choice.for_turn(plain) == NORMAL


def test_a_broken_group_config_only_loses_the_aliases() -> None:
    def broken(group_id: int) -> tuple[str, ...]:
        raise ValueError("config/groups/64000001.toml: bad value")

    choice = LaneChoice(broken)
    named = turn_input_from_event(_frame([_text("牛牛 在吗")]), to_me=False)
    assert choice.for_turn(named) == NORMAL and choice.aliases_for(64_000_001) == ()
