"""The offline fallback of updates and denials (issue 34): what a member's correction taught with
记住, or a denial said in plain chat, retires among their stored facts when no model answers.

The issue's six corrections and two denials first, then more of each, then statements that
must retire nothing."""

from __future__ import annotations

import pytest

from pallas.features.memory.denials import chat_denials, rule_update
from pallas.features.memory.slots import parse_slot
from pallas.features.memory_commands.teaching import third_person

STORED = (
    "TA在腾讯上班",  # 1
    "TA读高二",  # 2
    "TA用的是华为手机",  # 3
    "TA最喜欢的水果是草莓",  # 4
    "TA住在海淀区",  # 5
    "TA养了一只猫",  # 6
    "TA养狗",  # 7
    "TA抽烟",  # 8
    "TA每天喝咖啡",  # 9
    "TA在玩原神",  # 10
    "TA是做程序员的",  # 11
    "TA对花生过敏",  # 12
)
LIVE = [(i, text) for i, text in enumerate(STORED, start=1)]

# taught with "记住 …": (what the member said, op, retired ids)
CORRECTIONS = [
    # the six
    ("我换工作了，现在在做产品经理", "update", (1, 11)),
    ("我升高三了", "update", (2,)),
    ("我换手机了，现在用的是小米14", "update", (3,)),
    ("我现在最喜欢的水果变成芒果了", "update", (4,)),
    ("我上个月搬到朝阳了", "update", (5,)),
    ("我换工作了，现在在字节上班", "update", (1, 11)),
    # more
    ("我读高三了", "update", (2,)),
    ("我的手机是iPhone", "update", (3,)),
    ("我搬到了上海", "update", (5,)),
    ("我戒烟了", "update", (8,)),  # a habit given up is information of its own: kept
    ("我已经不养猫了", "deny", (6,)),
    ("我已经从腾讯辞职了", "deny", (1,)),
    ("我不再喝咖啡了", "deny", (9,)),
    ("我早就不玩原神了", "deny", (10,)),
    # nothing to retire
    ("我又养了一只仓鼠", "add", ()),
    ("我最喜欢的颜色是红色", "add", ()),
    ("我对芒果过敏", "add", ()),
    ("我现在在做饭", "add", ()),
    ("我不养兔子了", "add", ()),
]


@pytest.mark.parametrize(("said", "op", "retired"), CORRECTIONS)
def test_a_correction_taught_with_jizhu_retires_what_it_replaces(
    said: str, op: str, retired: tuple[int, ...]
) -> None:
    fact = third_person(said)
    assert fact is not None
    judged = rule_update(fact, LIVE)
    assert (judged.op, tuple(sorted(judged.retire_ids))) == (op, retired), judged.reason
    assert judged.by == "rule"


def test_last_month_is_a_date_not_a_school() -> None:
    slot = parse_slot("TA上个月搬到朝阳了")
    assert slot is not None and (slot.name, slot.value) == ("residence", "朝阳")


# said in plain chat: (message, retired ids when the rules act on its denials)
CHAT = [
    ("我已经不养猫了", (6,)),  # the two
    ("我已经从腾讯辞职了", (1,)),
    ("我早就不喝咖啡了，改喝茶", (9,)),
    ("唉，我已经不住海淀了", (5,)),
    ("我戒烟了！", (8,)),
    ("我不再玩原神了", (10,)),
    ("牛牛 我已经不养猫了", (6,)),  # said to the bot by name
    # not a denial of the speaker's own stored fact
    ("我不养猫，但是我养狗", ()),  # states a fact, retracts nothing; the dog stays
    ("我朋友不养猫了", ()),  # somebody else
    ("他已经不养猫了", ()),
    ("你不养猫了吗？", ()),  # a question
    ("我不养猫了吗", ()),
    ("我不去了", ()),  # names nothing stored
    ("我已经不养兔子了", ()),  # denies something never said
    ("今天不想上班", ()),
]


@pytest.mark.parametrize(("message", "retired"), CHAT)
def test_a_denial_in_plain_chat_retires_the_fact_it_denies(
    message: str, retired: tuple[int, ...]
) -> None:
    ids: set[int] = set()
    for denial in chat_denials(message):
        judged = rule_update(denial.fact, LIVE)
        ids.update(judged.retire_ids)
    assert tuple(sorted(ids)) == retired


def test_a_bare_denial_is_history_and_a_habit_given_up_is_kept() -> None:
    assert rule_update("TA已经不养猫了", LIVE).op == "deny"
    assert rule_update("TA戒烟了", LIVE).op == "update"
    assert rule_update("TA不喜欢猫了", [(1, "TA喜欢猫")]).op == "update"  # a dislike informs
