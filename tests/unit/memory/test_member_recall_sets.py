"""The member-recall sets (issue 47): the frozen test halves are pinned, all sets are well formed.

A changed sha256 means somebody edited a frozen test half: write a new set instead (see its
docstring). The shape checks keep each half measurable: every answer names one fact only.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from types import ModuleType

import pytest

from benchmarks import (
    _compound_questions_data,
    _member_recall_context,
    _member_recall_data,
    _member_recall_extra,
    _member_recall_extra2,
    _member_recall_extra3,
    _member_recall_frozen,
    _member_recall_frozen2,
    _member_recall_frozen3,
    _member_recall_names,
    _member_recall_places,
    _member_recall_unfit,
    _member_recall_yesno,
)
from pallas.ranking import question_parts

FROZEN_SHA256 = "fcde6263987fe09ba28fc04f21b2c2a5fce436623be22c29a96b5cc1128f32a8"
FROZEN2_SHA256 = "06c96d7f918688e014982a800e06ee3d4c5fcd5feaf9abe1a38e29f5373be39b"
FROZEN3_SHA256 = "86b244da5104af9ea035beb85832947eed5108f845e525799de108140fbc3d1d"
HALVES = [
    _member_recall_frozen,
    _member_recall_data,
    _member_recall_frozen2,
    _member_recall_frozen3,
]
# development members written after the dev half (`benchmarks.member_recall_gate --set`)
EXTRAS = [
    _member_recall_extra,
    _member_recall_extra2,
    _member_recall_yesno,
    _member_recall_extra3,
    _member_recall_context,
    _member_recall_names,
    _member_recall_places,
    _member_recall_unfit,
]


def test_the_frozen_half_is_unchanged() -> None:
    path = Path(_member_recall_frozen.__file__)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == FROZEN_SHA256


def test_the_second_frozen_half_is_unchanged() -> None:
    path = Path(_member_recall_frozen2.__file__)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == FROZEN2_SHA256


def test_the_third_frozen_half_is_unchanged() -> None:
    path = Path(_member_recall_frozen3.__file__)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == FROZEN3_SHA256


@pytest.mark.parametrize("half", HALVES, ids=lambda m: m.__name__)
def test_a_half_has_the_sizes_the_issue_asks(half: ModuleType) -> None:
    assert len(half.FACTS) >= 50
    assert len(set(half.DISTRACTORS)) == len(half.DISTRACTORS) >= 200
    assert len(half.NEGATIVES) >= 12
    assert len(half.CORRECTIONS) >= 12
    assert {c.marker for c in half.CORRECTIONS} == {True, False}
    assert len(half.DENIALS) >= 6
    assert {f.kind for f in half.FACTS} == {"direct", "paraphrase", "category"}


@pytest.mark.parametrize("half", HALVES + EXTRAS, ids=lambda m: m.__name__)
def test_every_answer_names_one_fact_of_its_member(half: ModuleType) -> None:
    for fact in half.FACTS:
        assert fact.answer in fact.taught, fact
        others = [f.taught for f in half.FACTS if f.member == fact.member and f is not fact]
        clashes = [t for t in [*others, *half.DISTRACTORS] if fact.answer in t]
        assert clashes == [], (fact, clashes)


def test_the_halves_share_no_fact_question_or_distractor() -> None:
    def texts(half: ModuleType) -> set[str]:
        return (
            {f.taught for f in half.FACTS}
            | {f.question for f in half.FACTS}
            | {n.question for n in half.NEGATIVES}
            | (set() if half in EXTRAS else set(half.DISTRACTORS))  # extras share the dev's
        )

    # the first extra set repeats two facts and a question of the test half (written after
    # it, and kept as measured since); every later set must share nothing
    sets = HALVES + EXTRAS[1:]
    for i, half in enumerate(sets):
        for other in sets[i + 1 :]:
            shared = texts(half) & texts(other)
            assert shared == set(), (half.__name__, other.__name__, shared)


@pytest.mark.parametrize("extra", EXTRAS, ids=lambda m: m.__name__)
def test_an_extra_set_asks_its_own_members_only(extra: ModuleType) -> None:
    """A negative asks a member the set teaches, and no member number is another set's: the
    gate bench pads each member with the dev distractors and reads the member by number."""
    members = {f.member for f in extra.FACTS}
    assert {n.member for n in extra.NEGATIVES} <= members
    for other in HALVES[1:2] + [e for e in EXTRAS if e is not extra]:
        assert members.isdisjoint(f.member for f in other.FACTS), other.__name__


def test_each_compound_question_asks_in_clauses_facts_of_its_member_only() -> None:
    """The compound development set (`benchmarks.compound_questions`) measures what it says:
    a question asking two things splits into its clauses, and each answer names one dev fact
    of its asker. (An opener and one ask may not split: "你还记得吗，…" is one ask.)"""
    assert len(_compound_questions_data.QUESTIONS) >= 25
    assert sum(len(q.answers) == 2 for q in _compound_questions_data.QUESTIONS) >= 18
    for q in _compound_questions_data.QUESTIONS:
        if len(q.answers) > 1:  # the whole and a clause for each ask
            assert len(question_parts(q.question)) == len(q.answers) + 1, q
        mine = [f.taught for f in _member_recall_data.FACTS if f.member == q.member]
        for answer in q.answers:
            assert sum(answer in t for t in mine) == 1, (q, answer)
            assert not any(answer in d for d in _member_recall_data.DISTRACTORS), (q, answer)
