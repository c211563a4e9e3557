"""Concept recall: questions asked in other words find the fact, unrelated facts stay out."""

from __future__ import annotations

import pytest

from pallas.features.memory.config import RetrievalConfig
from pallas.ranking.concepts import concept_similarity, fact_concepts, query_concepts
from pallas.ranking.scoring import MemoryCandidate, retrieve

# (stored fact, question) pairs that share no content word but mean the same thing
MATCHES = [
    ("TA对花生过敏", "我有什么东西不能吃？"),
    ("TA是左撇子", "我用哪只手写字？"),
    ("TA周末一般去游泳", "我周末喜欢做什么运动？"),
    ("TA在备考雅思", "我最近在准备什么考试？"),
    ("TA住在海淀区", "我住哪个区？"),
    ("TA一般晚上十一点睡觉", "我几点休息？"),
    ("TA不吃香菜", "我有什么忌口？"),
    ("TA是程序员", "我是干什么的？"),
    ("TA养了一只橘猫", "我养的是什么宠物？"),
    ("TA会弹钢琴", "我会什么乐器？"),
    ("TA平时喜欢钓鱼", "我有什么爱好？"),
    ("TA周末一般去游泳", "我有什么爱好？"),  # a sport is a hobby
    ("TA下个月结婚", "我什么时候办婚礼？"),
    ("TA滴酒不沾", "我能喝啤酒吗？"),
]

# pairs that must NOT match on concepts
MISMATCHES = [
    ("TA平时喜欢钓鱼", "我周末喜欢做什么运动？"),  # a hobby is not necessarily a sport
    ("TA养了一只橘猫", "我会什么乐器？"),
    ("TA对猫毛过敏", "我养的是什么宠物？"),  # 猫毛 is not a pet
    ("TA在考虑换工作", "我最近有什么考试？"),  # 考虑 is not an exam
    ("TA喜欢喝拿铁", "我住哪个区？"),
]


@pytest.mark.parametrize(("fact", "question"), MATCHES)
def test_a_question_in_other_words_covers_the_fact(fact: str, question: str) -> None:
    score = concept_similarity(query_concepts(question), fact_concepts(fact))
    assert score is not None and score >= 0.5, (fact, question, score)


@pytest.mark.parametrize(("fact", "question"), MISMATCHES)
def test_an_unrelated_fact_gets_no_concept_credit(fact: str, question: str) -> None:
    assert not concept_similarity(query_concepts(question), fact_concepts(fact))


def test_a_question_naming_no_class_leaves_it_to_bm25() -> None:
    assert concept_similarity(query_concepts("嗯嗯好的"), fact_concepts("TA喜欢猫")) is None


def _cand(i: int, text: str) -> MemoryCandidate:
    return MemoryCandidate(f"mem:{i}", text, "group:1:2", "person_facts", created_at=0.0)


def test_retrieval_picks_the_paraphrased_fact_over_the_speakers_newer_facts() -> None:
    facts = [_cand(1, "TA对花生过敏"), _cand(2, "TA手机壳是粉色的"), _cand(3, "TA讨厌下雨天")]
    config = RetrievalConfig(personal_fallback_k=0)
    result = retrieve(
        "我有什么东西不能吃？",
        facts,
        kind="person_facts",
        now=90 * 86_400.0,
        allowed_scopes={"group:1:2"},
        config=config,
    )
    assert result.ids == ("mem:1",)
    off = retrieve(
        "我有什么东西不能吃？",
        facts,
        kind="person_facts",
        now=90 * 86_400.0,
        allowed_scopes={"group:1:2"},
        config=RetrievalConfig(personal_fallback_k=0, concept_weight=0.0),
    )
    assert off.ids == (), "without concepts BM25 alone misses it (the issue's gap)"


def test_expansion_text_is_searched_but_not_shown() -> None:
    cand = MemoryCandidate(
        "mem:9", "TA是左撇子", "group:1:2", "person_facts", 0.0, expansion="惯用手 左手"
    )
    assert "惯用手" in cand.index_text and cand.text == "TA是左撇子"
