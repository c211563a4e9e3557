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
        ("我最喜欢吃辣", set()),  # a flavour
        ("我去过西北", set()),  # a region spans provinces
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
        ("我说过我喜欢吃寿司吗？", "TA最爱吃潮汕牛肉火锅", True),  # dishes
        ("我喜欢吃榴莲吗？", "TA吃面条喜欢加醋", True),
        ("我平时喝可乐吗？", "TA每天早上必须喝一杯美式", True),  # drinks
        ("我早上喝牛奶吗？", "TA喝奶茶只点三分糖", True),  # 奶茶 is no milk
        ("我用的什么手机？", "TA用的是一台华为的笔记本", True),  # kinds of device
        ("我托福考了几分？", "TA去年考过了雅思，七分", True),  # exams
        ("我家里有没有狗？", "TA养了两只英短", True),  # a breed of cat
        ("我喜欢听越剧吗？", "TA退休后迷上了听京剧", True),  # operas
        ("我去过西藏吗？", "TA年轻时去过一趟新疆", True),  # provinces
        ("我是上海人吗？", "TA在杭州上班", True),  # a city names its province
        # kinds and parts of one instance
        ("我对海鲜过敏吗？", "TA爱吃小龙虾", False),
        ("我能吃花生吗？", "TA对坚果过敏", False),
        ("我的电脑是什么牌子？", "TA用的是一台华为的笔记本", False),
        ("我四级过了吗？", "TA六级考了两次才过", False),  # one test, two levels
        ("我去过四川吗？", "TA在成都读大三", False),  # a province holds its cities
        ("我住在北京哪里？", "TA住在海淀", False),
        ("我平时喝酒吗？", "TA出差总住快捷酒店", False),  # 酒店 is no drink
        ("我用什么牌子的手机？", "TA一直用小米", False),  # a brand makes several kinds
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
        ("我住在北京哪里？", "TA住在昌平回龙观", False),  # a district the table does not list
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
