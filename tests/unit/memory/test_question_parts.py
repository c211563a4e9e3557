"""A member's compound question is matched clause by clause: each clause finds its own fact,
by meaning (the best cosine over the parts) and by concept class (the best share)."""

from __future__ import annotations

import numpy as np
import pytest

from pallas.ranking import VectorIndex, encoded_parts, nearest_with_cosines, question_parts
from pallas.ranking.concepts import fact_concepts, parts_scorer, query_concepts


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        ("我住哪", ("我住哪",)),
        ("你还记得我住哪吗", ("我住哪",)),
        (
            "我现在是做什么的，家里有宠物吗",
            ("我现在是做什么的，家里有宠物", "我现在是做什么的", "家里有宠物"),
        ),
        ("我住哪？养了什么？", ("我住哪？养了什么", "我住哪", "养了什么")),
        (
            "我喜欢吃什么还有我几点下班",
            ("我喜欢吃什么还有我几点下班", "我喜欢吃什么", "我几点下班"),
        ),
        ("a，b", ("a，b",)),  # clauses of one character are no questions of their own
        # a clause that is only the remember-frame asks nothing
        ("你还记得吗，我外孙女在哪念书", ("我外孙女在哪念书",)),
        (
            "你还记得吗？我住哪，家里有宠物吗",
            ("我住哪，家里有宠物", "我住哪", "家里有宠物"),
        ),
        ("一，二三，四五，六七，八九", ("一，二三，四五，六七，八九", "二三", "四五", "六七")),
    ],
)
def test_question_parts(question: str, parts: tuple[str, ...]) -> None:
    assert question_parts(question) == parts


@pytest.mark.parametrize(
    ("question", "encoded"),
    [
        ("我住哪", ("我住哪",)),
        ("你还记得我住哪吗", ("我住哪",)),
        ("我现在是做什么的，家里有宠物吗", ("我现在是做什么的", "家里有宠物")),
        ("我喜欢吃什么还有我几点下班", ("我喜欢吃什么", "我几点下班")),
        ("对了，我对什么过敏", ("对了", "我对什么过敏")),
        ("你还记得吗，我外孙女在哪念书", ("我外孙女在哪念书",)),
        ("好的，好的", ("好的",)),  # the same clause twice is one encode
        ("a，b", ("a，b",)),  # no clause of two characters: the whole
        ("一，二三，四五，六七，八九", ("二三", "四五", "六七")),
    ],
)
def test_a_question_in_clauses_is_encoded_clause_by_clause_without_the_whole(
    question: str, encoded: tuple[str, ...]
) -> None:
    """The whole's vector beside its clauses' found no ask the clauses missed
    (`benchmarks.compound_questions`) and cost a fifth of the encode."""
    assert encoded_parts(question) == encoded


@pytest.mark.parametrize(
    ("question", "fact", "share"),
    [
        ("我住哪，家里有宠物吗", "我上个月搬到朝阳了", 1.0),  # the clause it answers, whole
        ("我住哪，家里有宠物吗", "我养了一只猫", 1.0),
        ("我住哪", "我上个月搬到朝阳了", 1.0),
        ("我住哪", "我养了一只猫", 0.0),
    ],
)
def test_a_fact_gets_the_share_of_the_clause_it_answers(
    question: str, fact: str, share: float
) -> None:
    score = parts_scorer([query_concepts(p) for p in question_parts(question)])
    assert score is not None
    assert score(fact_concepts(fact)) == pytest.approx(share)


def test_without_a_class_asked_there_is_no_concept_score() -> None:
    assert parts_scorer([query_concepts(p) for p in question_parts("你好呀")]) is None


def test_a_rows_cosine_is_its_best_over_the_question_parts() -> None:
    index = VectorIndex()
    index.add([(1, 11, [1.0, 0.0, 0.0]), (2, 11, [0.0, 1.0, 0.0]), (3, 11, [0.0, 0.0, 1.0])])
    parts = np.array([[0.6, 0.8, 0.0], [1.0, 0.0, 0.0]], dtype=np.float32)  # whole, clause
    hits, cosines = nearest_with_cosines([index.rows], parts, 5, subject=11, wanted=[1, 2, 3])
    assert [(h.item_id, round(h.cosine, 3)) for h in hits] == [(1, 1.0), (2, 0.8)]
    assert {i: round(c, 3) for i, c in cosines.items()} == {1: 1.0, 2: 0.8, 3: 0.0}
    one = np.array([0.6, 0.8, 0.0], dtype=np.float32)  # a question of one part: as before
    hits, _ = nearest_with_cosines([index.rows], one, 5, subject=11, wanted=[])
    assert [(h.item_id, round(h.cosine, 3)) for h in hits] == [(2, 0.8), (1, 0.6)]
