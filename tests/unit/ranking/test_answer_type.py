"""A fact telling no number does not answer a question asking one ("我几岁了" →
"TA过年喜欢守岁"; `pallas.ranking.answer_type`, the person-facts block's
`match_answer_type`)."""

from __future__ import annotations

import pytest

from pallas.ranking import retrieve
from pallas.ranking.answer_type import (
    asks_number,
    asks_yes_no,
    class_answers_alone,
    tells_number,
)
from pallas.ranking.trace import RetrievalTrace
from tests.unit.ranking.helpers import NOW, SCOPE, facts


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("我说过我几岁了吗？", "几岁"),
        ("我跟你说过我几点起床吗？", "几点"),
        ("我的生日是几号？", "几号"),
        ("我现在上几年级？", "几年"),
        ("我一周值几次夜班？", "几次"),
        # no number asked
        ("你还记得我的生日是哪天吗", None),
        ("我最喜欢哪个歌手来着？", None),
        ("我几乎每天都喝奶茶吗", None),  # 几乎: almost
        ("我家茶几上放着什么", None),
        # 几 as "a few" or an approximate number: nothing asked with it
        ("你还记得我好几年前说我老家在哪吗", None),
        ("我这几天在忙什么来着", None),
        ("我前几天跟你说我养了啥", None),
        ("我二十几岁的时候在哪上班？", None),
        ("我过几天要去哪出差", None),
        # an amount, a degree or a duration: told in words as often ("喝点就上头", "很久")
        ("我一次能喝多少酒？", None),
        ("你记得我的鞋码是多少吗？", None),
        ("我上班路上要多久？", None),
        ("你记得吗", None),
        # two things asked, one no number: a fact may answer the other
        ("我几岁了，住在哪？", None),
        ("我几岁了，几点下班？", "几岁"),
    ],
)
def test_what_a_question_asks_a_number_with(question: str, asked: str | None) -> None:
    assert asks_number(question) == asked


@pytest.mark.parametrize(
    ("fact", "asked", "tells"),
    [
        ("TA的生日在腊月二十", "几号", True),
        ("TA的车牌尾号是886", "几个", True),
        ("TA的车牌尾号是８８６", "几个", True),  # full-width digits
        ("TA近视六百度", "几个", True),
        ("TA每天开车通勤一个半小时", "几个", True),
        ("TA在读高二", "几年", True),
        ("TA半夜起来喝水", "几点", True),  # a part of the day answers 几点
        ("TA过年喜欢守岁", "几岁", False),
        ("TA从不午睡", "几点", False),
        ("TA从不午睡", "几个", False),
        ("TA晚上爱看书", "几岁", False),  # a part of the day answers only 几点
    ],
)
def test_whether_a_fact_tells_a_number(fact: str, asked: str, tells: bool) -> None:
    assert tells_number(fact, asked) is tells


def ask(question: str, scores: dict[str, float], kind: str = "person_facts") -> RetrievalTrace:
    rows = facts("TA过年喜欢守岁", "TA今年二十八岁")
    return retrieve(question, rows, kind=kind, now=NOW, allowed_scopes={SCOPE},
                    semantic_scores=scores).trace  # fmt: skip


def test_the_person_facts_block_gates_a_fact_telling_no_number() -> None:
    trace = ask("我说过我几岁了吗？", {"f0": 0.6, "f1": 0.6})
    assert trace.chosen_ids == ("f1",)
    assert trace.dropped_by_answer_type == ("f0",)
    assert trace.to_dict()["dropped"]["answer_type"] == 1
    assert "f0" not in trace.dropped_by_similarity


@pytest.mark.parametrize(
    ("question", "scores", "kind", "chosen"),
    [
        ("我说过我几岁了吗？", {"f0": 0.75, "f1": 0.6}, "person_facts", {"f0", "f1"}),  # very close
        ("我说过我几岁了吗？", {"f0": 0.6, "f1": 0.6}, "group_memory", {"f0", "f1"}),  # no veto
        ("我平时喜欢做什么？", {"f0": 0.6, "f1": 0.6}, "person_facts", {"f0", "f1"}),  # no number
    ],
)
def test_what_keeps_a_fact_telling_no_number(
    question: str, scores: dict[str, float], kind: str, chosen: set[str]
) -> None:
    trace = ask(question, scores, kind)
    assert set(trace.chosen_ids) == chosen
    assert trace.dropped_by_answer_type == ()


@pytest.mark.parametrize(
    ("question", "yes_no"),
    [
        ("我说过我养猫吗？", True),
        ("你还记得我年轻时当过兵吗", True),
        ("我是不是去过日本？", True),  # A-not-A
        ("我有没有跟你说过我会开车", True),
        ("你记得我有车吗", True),
        ("我说过我血压高不高吗？", True),
        # asking for a value
        ("你还记得我养的猫叫什么吗", False),  # a question word
        ("我周六早上一般干嘛？", False),  # 干嘛, not the particle 嘛
        ("你记得我的生日吗？", False),  # a remembered noun phrase
        ("我跟你讲过我最喜欢的电影吗？", False),
        ("我饭量大不大？", False),  # a degree, no particle
        ("我是做哪一行的？", False),
        ("", False),
    ],
)
def test_whether_a_question_asks_yes_or_no(question: str, yes_no: bool) -> None:
    assert asks_yes_no(question) is yes_no


@pytest.mark.parametrize(
    ("question", "chosen"),
    [
        # the fact names another place than the one asked about: a class match is no answer
        ("我跟你说过我去过新疆吗？", ()),
        ("我是不是去过新疆？", ()),
        # asked for the value, the same class match is evidence (raised past the gate)
        ("我在哪个城市读书？", ("f0",)),
    ],
)
def test_a_yes_or_no_question_is_not_answered_by_its_class_alone(
    question: str, chosen: tuple[str, ...]
) -> None:
    rows = facts("TA在成都读大三")
    trace = retrieve(question, rows, kind="person_facts", now=NOW, allowed_scopes={SCOPE},
                     semantic_scores={"f0": 0.33}).trace  # fmt: skip
    assert trace.chosen_ids == chosen


@pytest.mark.parametrize(
    ("question", "asked", "alone"),
    [
        ("我在哪个城市读书？", {"place", "school"}, True),  # a value of the class asked
        ("我的猫叫什么？", {"pet", "animal", "name"}, True),  # a name, of the member's cat
        ("我婆婆叫什么？", {"name"}, False),  # a name, of anything
        ("我的民宿叫什么名字？", {"name"}, False),
        ("我去过新疆吗？", {"place"}, False),  # yes or no: it names its value
    ],
)
def test_whether_a_class_match_alone_can_answer(
    question: str, asked: set[str], alone: bool
) -> None:
    assert class_answers_alone(question, frozenset(asked)) is alone


def test_a_question_asking_only_a_name_is_not_answered_by_any_name() -> None:
    """ "我的民宿叫什么" has the name class only; the hamster's name shares it, and used to be
    raised past the gate by it alone (0.5). The encoder and the shared words decide now."""
    rows = facts("TA家仓鼠取名叫奶盖", "TA在鼓浪屿开了一家民宿叫听海")
    scores = {"f0": 0.3, "f1": 0.55}
    trace = retrieve("我的民宿叫什么？", rows, kind="person_facts", now=NOW,
                     allowed_scopes={SCOPE}, semantic_scores=scores).trace  # fmt: skip
    assert trace.chosen_ids == ("f1",)
    # a question naming what is named keeps the class raise: the hamster's name is found
    pet = retrieve("我的仓鼠叫什么？", rows, kind="person_facts", now=NOW,
                   allowed_scopes={SCOPE}, semantic_scores=scores).trace  # fmt: skip
    assert pet.chosen_ids[0] == "f0"
