"""A fact naming another instance of a class than the question ("猫" for "我的狗…", "过年" for
"我的生日…") does not answer it (`pallas.ranking.instances`, the person-facts block's
`match_instance`)."""

from __future__ import annotations

import pytest

from pallas.ranking import retrieve
from pallas.ranking.instances import (
    asked_instances,
    named_instances,
    names_none_of_class,
    names_other_instance,
)
from pallas.ranking.text import recall_question
from pallas.ranking.trace import RetrievalTrace
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
        ("TA暑假去拉萨骑行了", {("place", 29), ("sport", 10)}),  # 拉萨: its province, 西藏
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
        # what an identity asks is one value: another instance answers it (no)
        ("我最爱喝的是奶茶吗？", "TA最爱的饮料是冰可乐", False),
        ("我养的是狗吗？", "TA养了一只橘猫", False),
        ("我是不是养了狗？", "TA养了一只橘猫", True),  # 是不是 before a verb: no identity
        # kinds and parts of one instance
        ("我对海鲜过敏吗？", "TA爱吃小龙虾", False),
        ("我能吃花生吗？", "TA对坚果过敏", False),
        ("我的电脑是什么牌子？", "TA用的是一台华为的笔记本", False),
        ("我四级过了吗？", "TA六级考了两次才过", False),  # one test, two levels
        ("我去过西藏吗？", "TA年轻时去过一趟新疆", True),  # a place asked yes or no
        ("我老家离成都远吗？", "TA老家在重庆江北", False),  # 离: a reference point
        ("我在上海出差住哪一块？", "TA出差去杭州一般住在西湖边", False),  # a frame: no yes-no
        ("我去过四川吗？", "TA在成都读大三", False),  # a province holds its cities
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
        ("我住在北京哪里？", "TA住在昌平回龙观", False),  # a district the list does not name
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


@pytest.mark.parametrize(
    ("question", "fact", "silent"),
    [
        ("我喜欢吃包子吗？", "TA冬天喜欢吃糖葫芦", True),  # only the frame (喜欢吃) shared
        ("我喜欢听越剧吗？", "TA喜欢听下雨的声音", True),
        ("我喜欢吃包子吗？", "TA最爱吃韭菜馅饺子", False),  # another instance: the other rule
        ("我喜欢吃包子吗？", "TA早饭总吃两个包子", False),  # the instance asked
        ("我喜欢吃什么？", "TA冬天喜欢吃糖葫芦", False),  # no instance asked
        ("我是不是在杭州上班？", "TA在滨江的一家互联网公司上班", False),  # nested: 滨江 is in 杭州
    ],
)
def test_a_fact_naming_no_instance_of_the_class_asked(
    question: str, fact: str, silent: bool
) -> None:
    asked = named_instances(recall_question(question))
    assert names_none_of_class(asked, named_instances(fact)) is silent


def test_a_yes_or_no_question_gates_a_fact_that_only_shares_its_frame() -> None:
    """ "我喜欢吃包子吗" asks about buns: a fact about another food the table does not list
    says nothing of them, unless the encoder finds it close (`yes_no_min_cosine`, 0.6)."""
    rows = facts("TA冬天喜欢吃糖葫芦", "TA早饭总吃两个包子", "TA周末喜欢吃点心")

    def trace(question: str, scores: dict[str, float] | None) -> RetrievalTrace:
        return retrieve(question, rows, kind="person_facts", now=NOW, allowed_scopes={SCOPE},
                        semantic_scores=scores).trace  # fmt: skip

    asked = trace("我喜欢吃包子吗？", {"f0": 0.55, "f1": 0.7, "f2": 0.62})
    assert asked.chosen_ids == ("f1", "f2")  # f2: close enough by its cosine
    assert asked.dropped_by_instance == ("f0",)
    # a question asking for a value is not about one instance: nothing gated
    value = trace("我冬天喜欢吃什么零食？", {"f0": 0.55, "f1": 0.4, "f2": 0.5})
    assert "f0" in value.chosen_ids and value.dropped_by_instance == ()
    # without vectors the words are all there is: nothing gated by this rule
    words = trace("我喜欢吃包子吗？", None)
    assert "f0" in words.chosen_ids and words.dropped_by_instance == ()


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("我老婆是宝马车主吗？", set()),  # 是 + the instance: the value of an identity
        ("我最爱喝的是奶茶吗？", set()),
        ("我是不是一只狗？", set()),  # a measure word between
        ("我养的是狗吗？", set()),
        ("我是不是养了狗？", {("pet", 1)}),  # 是不是 + a verb: asks about the dog
        ("我喜欢吃包子吗？", {("food", 8)}),
        ("你还记得我养的狗叫什么吗", {("pet", 1)}),  # the remember-frame is no part
        ("我去过西藏吗？", {("place", 29)}),  # a place, asked yes or no
        ("我在上海出差住哪一块？", set()),  # a place framing a question asking a value
        ("我老家离成都远吗？", set()),  # a reference point (离, 从)
        ("我是从武汉搬来的吗？", set()),
    ],
)
def test_the_instances_a_question_asks_about(question: str, asked: set[tuple[str, int]]) -> None:
    assert asked_instances(question) == frozenset(asked)
