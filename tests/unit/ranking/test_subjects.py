"""A member's fact about one of their people ("TA女儿…") answers only a question about that
person (`pallas.ranking.subjects`, the person-facts block's `match_subject`)."""

from __future__ import annotations

import pytest

from pallas.features.memory.config import RetrievalConfig
from pallas.ranking import retrieve
from pallas.ranking.scoring import subject_raise
from pallas.ranking.subjects import (
    about_someone_else,
    fact_about,
    names_none_of,
    question_about,
)
from pallas.ranking.trace import RetrievalTrace
from tests.unit.ranking.helpers import NOW, SCOPE, facts


@pytest.mark.parametrize(
    ("fact", "about"),
    [
        ("TA女儿在读幼儿园大班", {"daughter"}),
        ("TA外孙女在北京读大学", {"maternal granddaughter"}),  # not 外孙
        ("TA的老婆是护士", {"wife"}),
        ("TA家孩子上三年级", {"son", "daughter"}),
        ("TA最好的朋友叫小李", {"friend"}),
        ("TA爸妈住在成都", {"father", "mother"}),
        ("TA女儿的生日是五月", {"daughter"}),  # 的 straight after: the daughter's birthday
        ("我儿子今年上一年级", {"son"}),  # as taught, before "我" → "TA"
        # about the member
        ("TA喜欢游泳", None),
        ("TA的网名叫星河旅人", None),
        ("TA经常给朋友推荐电影", None),  # a relation, but not leading
        ("TA妈妈做的红烧肉最好吃", None),  # the relation qualifies: the member's taste
        ("TA爸教TA弹吉他", None),  # the member comes back: about them too
        ("TA老婆周末常带TA去爬山", None),
        ("", None),
    ],
)
def test_whom_a_fact_is_about(fact: str, about: set[str] | None) -> None:
    assert fact_about(fact) == (None if about is None else frozenset(about))


@pytest.mark.parametrize(
    ("question", "about"),
    [
        ("你还记得我儿子在哪读书吗？", {"son"}),
        ("我家孩子读几年级了？", {"son", "daughter"}),
        ("我媳妇做什么的？", {"wife"}),
        ("我老伴是做什么的", {"wife", "husband"}),
        ("你记得我最好的朋友叫啥吗？", {"friend"}),
        ("你记得我有孩子吗？", {"son", "daughter"}),  # 我有…: whether they exist
        ("我是不是还有个妹妹？", {"younger sister"}),
        ("我有没有跟你说过我老婆的事", {"wife"}),
        ("我婆婆叫什么？", {"mother-in-law"}),  # in-laws, either side
        ("我丈母娘住哪？", {"mother-in-law"}),
        ("我公公退休了吗？", {"father-in-law"}),
        ("我大学学的什么", None),
        ("我有什么爱好？", None),
        ("我家离学校远不远？", None),
        ("我喜欢看什么体育比赛？", None),
    ],
)
def test_whom_a_question_asks_about(question: str, about: set[str] | None) -> None:
    assert question_about(question) == (None if about is None else frozenset(about))


@pytest.mark.parametrize(
    ("fact", "question", "other"),
    [
        ("TA女儿在读幼儿园大班", "你记得我儿子在哪读书吗？", True),  # another of theirs
        ("TA外孙女在北京读大学", "我跟你说过我大学学的什么吗？", True),  # not the member
        ("TA外孙女在北京读大学", "我外孙女在哪上学？", False),
        ("TA儿子今年上一年级", "我家孩子读几年级了？", False),  # 孩子: a son or a daughter
        ("TA老婆是护士", "我媳妇做什么的？", False),  # synonyms
        ("TA老婆是护士", "我老伴是做什么的", False),
        ("TA是做软件测试的", "我爸是做什么的", False),  # a fact about the member stays
        ("TA喜欢游泳", "我爱什么运动？", False),
    ],
)
def test_a_fact_about_someone_else(fact: str, question: str, other: bool) -> None:
    assert about_someone_else(fact_about(fact), question_about(question)) is other


@pytest.mark.parametrize(
    ("fact", "question", "none"),
    [
        ("TA喜欢给文件起很长的名字", "我老婆叫什么名字？", True),  # shares 名字, names nobody
        ("TA总是记不住别人的名字", "你记得我最好的朋友叫啥吗？", True),
        ("TA宿舍住六个人", "我爸妈是做什么的？", True),
        ("TA女儿在读幼儿园大班", "我儿子在哪读书？", True),  # another of theirs
        ("TA老婆叫小芳", "我老婆叫什么名字？", False),
        ("TA和老伴都退休了", "我老伴以前做什么的？", False),  # named, not leading
        ("TA媳妇是护士", "我老婆做什么的？", False),  # synonyms
        ("TA女朋友是做UI设计的", "我对象干什么工作？", False),  # 对象: a partner
        ("TA儿子今年上一年级", "我家孩子读几年级了？", False),
        ("TA全家都爱吃辣", "我家里人爱吃什么？", False),  # the whole family: any fact
        ("TA有一个双胞胎哥哥", "你记得我有妹妹吗？", True),
        ("TA女儿今年上幼儿园中班", "你记得我有孩子吗？", False),
        ("TA喜欢游泳", "我爱什么运动？", False),  # a question about the member
        ("TA家仓鼠取名叫奶盖", "我婆婆叫什么？", True),
        ("TA婆婆每天帮TA带孩子", "我婆婆叫什么？", False),
    ],
)
def test_a_fact_naming_none_of_the_people_asked_about(fact: str, question: str, none: bool) -> None:
    assert names_none_of(fact, question_about(question)) is none


def test_the_person_facts_block_gates_a_fact_about_someone_else() -> None:
    rows = facts("TA女儿在读幼儿园大班", "TA喜欢游泳")
    # each fact is close enough by its cosine to pass the gate on its own
    scores = {"f0": 0.6, "f1": 0.6}

    def ask(question: str, kind: str = "person_facts") -> tuple[str, ...]:
        result = retrieve(question, rows, kind=kind, now=NOW, allowed_scopes={SCOPE},
                          semantic_scores=scores)  # fmt: skip
        return result.ids

    assert ask("你记得我儿子在哪读书吗？") == ()  # the daughter's, and the member's own
    assert ask("我女儿在哪读书？") == ("f0",)
    assert ask("我平时爱干嘛？") == ("f1",)  # a question about the member
    # other blocks do not look at whom a text is about
    assert set(ask("你记得我儿子在哪读书吗？", "group_memory")) == {"f0", "f1"}
    trace = retrieve("你记得我儿子在哪读书吗？", rows, kind="person_facts", now=NOW,
                     allowed_scopes={SCOPE}, semantic_scores=scores).trace  # fmt: skip
    assert trace.dropped_by_subject == ("f0", "f1")
    assert trace.to_dict()["dropped"]["subject"] == 2
    assert "f0" not in trace.dropped_by_similarity


def test_the_person_facts_block_gates_a_fact_naming_nobody_asked_about() -> None:
    """ "我老婆叫什么名字" about a member who never told it: the fact sharing "名字" is not
    told as if it answered (it was past the gate on its cosine); the wife's own fact is."""
    rows = facts("TA喜欢给文件起很长的名字", "TA老婆叫小芳")
    scores = {"f0": 0.6, "f1": 0.6}

    def ask(question: str) -> RetrievalTrace:
        return retrieve(question, rows, kind="person_facts", now=NOW, allowed_scopes={SCOPE},
                        semantic_scores=scores).trace  # fmt: skip

    trace = ask("我老婆叫什么名字？")
    assert trace.chosen_ids == ("f1",)
    assert trace.dropped_by_subject == ("f0",)
    assert ask("我老公叫什么名字？").chosen_ids == ()  # neither names a husband
    assert set(ask("我的名字有什么讲究？").chosen_ids) == {"f0"}  # about the member


def test_a_fact_about_the_person_asked_about_passes_the_gate() -> None:
    """ "我闺女今年多大" → "TA女儿三岁了": no shared word (闺女 / 女儿) and a cosine (0.46,
    similarity 0.41) too low to pass the gate (0.43), but the fact is about the daughter asked
    about (`subject_raise`)."""
    rows = facts("TA女儿三岁了", "TA喜欢穿运动鞋", "TA老婆在银行上班")
    scores = {"f0": 0.46, "f1": 0.3, "f2": 0.3}

    def ask(question: str, **block: object) -> RetrievalTrace:
        config = RetrievalConfig()
        pf = config.person_facts.model_copy(update=block)
        return retrieve(question, rows, kind="person_facts", now=NOW, allowed_scopes={SCOPE},
                        semantic_scores=scores,
                        config=config.model_copy(update={"person_facts": pf})).trace  # fmt: skip

    raised = ask("我闺女今年多大？")
    assert raised.chosen_ids == ("f0",)
    assert [c.similarity for c in raised.candidates if c.id == "f0"] == [0.5]
    assert ask("我媳妇做什么工作？").chosen_ids == ("f2",)  # a synonym of 老婆
    assert ask("我闺女今年多大？", match_subject=False).chosen_ids == ()  # the switch
    assert ask("我闺女今年多大？", subject_similarity=0.3).chosen_ids == ()  # below the gate
    assert ask("我平时穿什么鞋？").chosen_ids == ()  # about the member: nothing raised
    family = ask("我家里人都好吗？")  # the whole family: no raise (the family class decides)
    assert family.candidates == ask("我家里人都好吗？", subject_similarity=1.0).candidates


@pytest.mark.parametrize(
    ("sim", "about", "match", "expected"),
    [
        (0.2, True, True, 0.5),  # about the person asked about: at least 0.5
        (0.7, True, True, 0.7),  # never lowered
        (0.2, False, True, 0.2),
        (0.2, True, False, 0.2),  # match_subject off
    ],
)
def test_subject_raise(sim: float, about: bool, match: bool, expected: float) -> None:
    block = RetrievalConfig().person_facts.model_copy(update={"match_subject": match})
    assert subject_raise(sim, about, block) == expected
