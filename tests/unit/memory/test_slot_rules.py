"""Updates and denials that generalise by slot (issue 34 item 2): the development set of
`benchmarks.memory_updates` drives the offline rules case by case, plus a table of what slot
each everyday statement fills."""

from __future__ import annotations

import pytest

from benchmarks._memory_updates_data import UNRELATED, UpdateCase
from benchmarks._memory_updates_dev import DEV_CASES
from pallas.features.memory.denials import chat_denials, rule_update
from pallas.features.memory.slots import parse_slot
from pallas.features.memory_commands.teaching import third_person


def _stored(text: str) -> str:
    return third_person(text) or text


def offline(case: UpdateCase) -> tuple[set[str], bool]:
    """What the rules retire among the member's facts, and whether the new statement stays
    live — the offline path of a teaching (the whole statement) or of a chat line (its
    denials)."""
    live = [(n, _stored(t)) for n, t in enumerate((*case.old, UNRELATED), start=1)]
    texts = dict(live)
    if case.how == "teach":
        judged = rule_update(case.fact, live)
        retired = set(judged.retire_ids) if judged.op != "add" else set()
        return {texts[i] for i in retired}, not (judged.op == "deny" and retired)
    retired, stays = set(), False
    for denial in chat_denials(case.said):
        judged = rule_update(denial.fact, live)
        if judged.op != "add":
            retired |= set(judged.retire_ids)
            stays = stays or judged.op == "update"
    return {texts[i] for i in retired}, stays


@pytest.mark.parametrize("case", DEV_CASES, ids=lambda c: c.said)
def test_the_rules_retire_what_the_development_set_says(case: UpdateCase) -> None:
    retired, stays = offline(case)
    assert retired == {_stored(t) for t in case.retired}
    if case.retired:  # a bare denial is history only; an update is stored
        assert stays == bool(case.new_marker)


SLOTS = [
    # job / workplace: where, as what, a change, a departure
    ("TA在超市当收银员", "job", "超市", False),
    ("TA在一家外企做翻译", "job", "外企", False),
    ("TA从那家外企辞职了", "job", "外企", True),
    ("TA不在麦当劳干了", "job", "麦当劳", True),
    ("TA跳槽到字节了", "job", "字节", False),
    ("TA转行做销售了", "job", "销售", False),
    ("TA换了份工作", "job", "", False),
    ("TA已经不当老师了", "job", "老师", True),
    ("TA在家做饭", None, "", False),  # not a job
    # school
    ("TA在北京大学读书", "school", "北京大学", False),
    ("TA转学到清华了", "school", "清华", False),
    ("TA现在读研一了", "school", "研一", False),
    ("TA已经高二了", "school", "高二", False),
    ("TA已经毕业了", "school", "", True),
    ("TA喜欢读书", "like:other", "读书", False),  # a liking, not a school
    # residence
    ("TA家搬去闵行了", "residence", "闵行", False),
    ("TA在成都生活", "residence", "成都", False),
    ("TA现在在外面租房住了", "residence", "外面", False),
    ("TA已经搬出宿舍了", "residence", "宿舍", True),
    ("TA妈妈搬到上海了", None, "", False),  # somebody else's
    # devices, by word or brand
    ("TA用的手机是小米", "phone", "小米", False),
    ("TA换成iPhone15了", "phone", "iphone15", False),
    ("TA换了台MacBook", "computer", "macbook", False),
    ("TA开的是大众朗逸", "car", "大众朗逸", False),
    ("TA换车了，现在开比亚迪", "car", "比亚迪", False),
    ("TA把车卖了", "car", "", True),
    ("TA换了发型", None, "", False),
    ("TA给TA爸买了个小米手机", None, "", False),
    # pets: a name per animal, a pet gone
    ("TA的猫叫咪咪", "petname:猫", "咪咪", False),
    ("TA养了一只叫豆豆的狗", "petname:狗", "豆豆", False),
    ("TA家柯基现在叫雪碧了", "petname:狗", "雪碧", False),
    ("TA家仓鼠去世了", "pet", "仓鼠", True),
    ("TA把猫送人了", "pet", "猫", True),
    ("TA姐姐的猫送人了", None, "", False),
    # partner / relationship, diet
    ("TA单身", "partner", "", False),
    ("TA脱单了", "partner", "", False),
    ("TA和男朋友结婚了", "partner", "", False),
    ("TA现在的女朋友叫小红", "partner", "小红", False),
    ("TA和女朋友分手了", "partner", "", True),
    ("TA室友和女朋友分手了", None, "", False),
    ("TA是素食主义者", "diet", "", False),
    ("TA现在开始吃肉了", "diet", "吃肉", False),
]


@pytest.mark.parametrize(("fact", "name", "value", "negative"), SLOTS)
def test_the_slot_a_statement_fills(
    fact: str, name: str | None, value: str, negative: bool
) -> None:
    slot = parse_slot(fact)
    if name is None:
        assert slot is None
        return
    assert slot is not None
    assert (slot.name, slot.value, slot.negative) == (name, value, negative)
