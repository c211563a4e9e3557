"""A fact naming another instance of a class than the question ("猫" for "我的狗…", "过年" for
"我的生日…") does not answer it (`pallas.ranking.instances`, the person-facts block's
`match_instance`)."""

from __future__ import annotations

import pytest

from pallas.ranking import retrieve
from pallas.ranking.instances import named_instances, names_other_instance
from pallas.ranking.scoring import RetrievalTrace
from tests.unit.ranking.helpers import NOW, SCOPE, facts


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("TA养了一只猫", {("pet", 0)}),
        ("TA家的布偶叫团子", {("pet", 0)}),  # a kind of cat: the same instance
        ("我养的狗叫什么", {("pet", 1)}),
        ("TA会拉小提琴", {("instrument", 4)}),  # 小提琴, not 大提琴
        ("TA的生日在腊月二十", {("date", 0)}),
        ("TA跟你说过TA的身高吗", {("body", 0)}),
        # words naming the class itself are no instance
        ("我爱什么运动", set()),
        ("TA养了一只八哥叫黑豆", set()),
        ("我会什么乐器", set()),
        ("", set()),
    ],
)
def test_the_instances_a_text_names(text: str, named: set[tuple[str, int]]) -> None:
    assert named_instances(text) == frozenset(named)


@pytest.mark.parametrize(
    ("question", "fact", "other"),
    [
        # another instance of the class the question names
        ("你还记得我说过我养的狗叫什么吗", "TA养了一只猫叫咪咪", True),
        ("你还记得我的生日是哪天吗", "TA过年喜欢守岁", True),
        ("你还记得我的生日是哪天吗", "TA去年报了一个插花班", True),
        ("我跟你说过我的身高吗？", "TA有一个放了很久的体重秤", True),
        ("你记得我骑的自行车是什么牌子吗？", "TA走路喜欢数台阶", True),
        ("我说过我喜欢哪个足球队吗？", "TA喜欢在公园里看老人跳绳", True),
        ("我会说日语吗", "TA在学英语", True),
        ("我喜欢看什么电影？", "TA曾经一口气看完一整部电视剧", True),  # media
        ("你记得我玩原神吗？", "TA每天打两小时王者荣耀", True),  # games
        ("我跟你说过我有高血压吗？", "TA有糖尿病，每天打胰岛素", True),  # conditions
        ("我有什么老毛病？", "TA有风湿，下雨天腿疼", False),  # 老毛病 names the class
        ("我爱看什么电视剧？", "TA最近在追一部韩剧", False),  # a kind of drama
        # the same instance, in other words or with another one beside it
        ("我的狗叫啥？", "TA养了一只柯基叫雪球", False),
        ("我的生日是几号？", "TA的生日在腊月二十", False),
        ("我的身高是多少", "TA一米七五", False),
        ("我养的猫和狗叫什么", "TA的猫叫煤球", False),
        ("我每周打几次篮球", "TA周末打篮球，平时跑步", False),
        # the question names no instance, or the fact none: nothing to compare
        ("我爱什么运动？", "TA喜欢游泳", False),
        ("我的狗叫啥？", "TA养了一只博美叫雪球", False),  # 养了: any pet
        ("我养的宠物是什么？", "TA养了两只仓鼠", False),
        ("我的狗叫啥？", "TA喜欢游泳", False),  # another class: the encoder's call
        ("我住在北京哪里？", "TA住在昌平回龙观", False),  # places nest: no instances
    ],
)
def test_a_fact_naming_another_instance(question: str, fact: str, other: bool) -> None:
    assert names_other_instance(question, fact) is other


def ask(question: str, scores: dict[str, float], kind: str = "person_facts") -> RetrievalTrace:
    rows = facts("TA养了一只猫叫咪咪", "TA养了一只柯基叫雪球")
    return retrieve(question, rows, kind=kind, now=NOW, allowed_scopes={SCOPE},
                    semantic_scores=scores).trace  # fmt: skip


def test_the_person_facts_block_gates_a_fact_naming_another_instance() -> None:
    # both close enough by their cosine to pass the gate, neither close enough to stay anyway
    trace = ask("你还记得我养的狗叫什么吗", {"f0": 0.6, "f1": 0.6})
    assert trace.chosen_ids == ("f1",)
    assert trace.dropped_by_instance == ("f0",)
    assert trace.to_dict()["dropped"]["instance"] == 1
    assert "f0" not in trace.dropped_by_similarity


@pytest.mark.parametrize(
    ("scores", "kind", "chosen"),
    [
        ({"f0": 0.75, "f1": 0.45}, "person_facts", {"f0", "f1"}),  # the encoder: very close
        ({"f0": 0.45, "f1": 0.45}, "group_memory", {"f0", "f1"}),  # other blocks: no veto
    ],
)
def test_what_keeps_a_fact_naming_another_instance(
    scores: dict[str, float], kind: str, chosen: set[str]
) -> None:
    trace = ask("你还记得我养的狗叫什么吗", scores, kind)
    assert set(trace.chosen_ids) == chosen
    assert trace.dropped_by_instance == ()
