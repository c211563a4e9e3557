"""Facts that update: slots parsed by rules, and what a new fact does to the old ones."""

from __future__ import annotations

import pytest

from pallas.features.memory.slots import Slot, decide_update, parse_slot

SLOTS = [
    ("TA住在海淀区", "residence", "海淀", False),
    ("已经不住海淀了", "residence", "海淀", True),
    ("TA搬到了朝阳", "residence", "朝阳", False),
    ("TA老家在成都", "hometown", "成都", False),
    ("TA是程序员", "job", "程序员", False),
    ("已经辞职了", "job", "", True),
    ("TA在读大三", "school", "大三", False),
    ("TA在备考雅思", "exam", "雅思", False),
    ("TA每天早上七点起床", "wake", "早上七点", False),
    ("TA最爱吃火锅", "favorite:food", "火锅", False),
    ("TA喜欢猫", "like:pet", "猫", False),
    ("TA不喜欢猫了", "like:pet", "猫", True),
    ("TA养了一只橘猫", "pet", "橘猫", False),
    ("TA女朋友叫小雨", "partner", "小雨", False),
    ("TA是做平面设计的", "job", "平面设计", False),
    ("TA读北京大学", "school", "北京大学", False),
    ("TA读高二了", "school", "高二", False),
    # a change of state told with its date still updates
    ("TA昨天搬到朝阳了", "residence", "朝阳", False),
    ("TA上个月辞职了", "job", "", True),
    ("TA上周和男朋友分手了", "partner", "", True),
]


@pytest.mark.parametrize(("text", "name", "value", "negative"), SLOTS)
def test_a_fact_fills_a_slot(text: str, name: str, value: str, negative: bool) -> None:
    slot = parse_slot(text)
    assert slot is not None, text
    assert (slot.name, slot.value, slot.negative) == (name, value, negative)


@pytest.mark.parametrize("text", ["TA是左撇子", "TA对花生过敏", "TA有一个弟弟", ""])
def test_facts_without_a_slot_are_left_alone(text: str) -> None:
    assert parse_slot(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "TA上周末帮表妹搬家",  # was read as school "周末帮表妹搬家"
        "TA上个月开始学吉他",
        "TA上班",
        "TA上周末去爬山了",
        "TA昨天住在酒店",  # a night away, not where TA lives
        "TA三天前养了只猫",  # told as an event, not a standing fact
        "TA去年在腾讯上班",
    ],
)
def test_events_fill_no_slot(text: str) -> None:
    assert parse_slot(text) is None


def test_an_event_is_never_retired_by_a_later_fact() -> None:
    old = _old("TA上周末帮表妹搬家", "TA去年在腾讯上班")
    for new in ("TA读高二了", "TA在字节上班", "TA住在朝阳区"):
        decision = decide_update(parse_slot(new), old)
        assert decision.retire_ids == (), new


def _old(*texts: str) -> list[tuple[int, Slot | None]]:
    return [(i + 1, parse_slot(t)) for i, t in enumerate(texts)]


UPDATES = [
    # new fact, old facts, action, retired ids
    ("TA住在朝阳区", ("TA住在海淀区", "TA喜欢猫"), "replace", (1,)),
    ("TA住在海淀", ("TA住在海淀区",), "replace", (1,)),  # same place, newest words win
    ("已经不住海淀了", ("TA住在海淀区", "TA喜欢猫"), "contradict", (1,)),
    ("已经不住西城了", ("TA住在海淀区",), "add", ()),  # denies something never said
    ("TA喜欢狗", ("TA喜欢猫",), "add", ()),  # one can like both
    ("TA最喜欢狗", ("TA最喜欢猫",), "replace", (1,)),  # but has one favourite
    ("TA不喜欢猫了", ("TA喜欢猫", "TA喜欢狗"), "contradict", (1,)),
    ("TA喜欢猫", ("TA不喜欢猫了",), "replace", (1,)),
    ("TA养了一只柯基", ("TA养了一只橘猫",), "add", ()),  # a second pet
    ("已经辞职了", ("TA是程序员",), "contradict", (1,)),
    ("TA是护士", ("TA是程序员", "TA住在海淀区"), "replace", (1,)),
    ("TA对花生过敏", ("TA对芒果过敏",), "add", ()),
]


@pytest.mark.parametrize(("new", "old", "action", "retired"), UPDATES)
def test_what_a_new_fact_does_to_the_old_ones(
    new: str, old: tuple[str, ...], action: str, retired: tuple[int, ...]
) -> None:
    decision = decide_update(parse_slot(new), _old(*old))
    assert (decision.action, decision.retire_ids) == (action, retired), decision.reason
