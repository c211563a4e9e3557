"""Concept recall: what a fact is *about* and what a question *asks for*, with no model call.

BM25 only sees shared words, so "我对花生过敏" never answers "我有什么东西不能吃". Here both
sides are mapped onto the curated semantic classes of `concepts_table` (place, food,
restriction, sport, exam, job, pet, hand, clock time …):

- a fact's classes come from its words and patterns, plus every parent class (a sport is a
  hobby); with `expansion` (keywords / category / likely questions the background model stored
  with the fact, see `expansion.py`) those are read too;
- a question's classes come from its words, patterns and question phrasings ("哪个区" →
  place, "几点" → clock, "能吃…吗" → restriction), without parents, and a class is dropped
  when a more specific one is asked ("什么运动" → sport, not hobby).

`concept_similarity` is the weighted share of the question's classes the fact covers (0..1),
or None when the question names no class (then only BM25 and embeddings speak). Retrieval mixes
it with BM25 (`scoring.score_candidates`: the larger of the two, concept scaled by
`concept_weight`), so it adds recall and never takes a lexical match away.

Everything is deterministic and cached per text; a fact's classes are computed when the
candidate index is built, so rows stored before this table existed benefit too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from pallas.ranking.concepts_table import CLASSES, ConceptClass
from pallas.ranking.text import normalize_text

CATEGORY_TAG = "§"  # "§sport" in a fact's stored expansion names a class outright
_TAGGED = re.compile(CATEGORY_TAG + r"([a-z_]+)")


@dataclass(frozen=True, slots=True)
class _Compiled:
    cls: ConceptClass
    excludes: re.Pattern[str] | None
    members: re.Pattern[str] | None
    patterns: re.Pattern[str] | None
    questions: re.Pattern[str] | None


def _alternation(items: Iterable[str], *, literal: bool) -> re.Pattern[str] | None:
    parts = [re.escape(i) if literal else f"(?:{i})" for i in items if i]
    if not parts:
        return None
    if literal:  # longest first, so "兄弟姐妹" wins over "兄弟"
        parts.sort(key=len, reverse=True)
    return re.compile("|".join(parts))


def _compile(cls: ConceptClass) -> _Compiled:
    return _Compiled(
        cls,
        _alternation(cls.excludes, literal=True),
        _alternation(cls.members, literal=True),
        _alternation(cls.patterns, literal=False),
        _alternation(cls.questions, literal=False),
    )


_COMPILED: tuple[_Compiled, ...] = tuple(_compile(c) for c in CLASSES)
_WEIGHTS: dict[str, float] = {c.name: c.weight for c in CLASSES}
_PARENTS: dict[str, tuple[str, ...]] = {c.name: c.parents for c in CLASSES}


def _with_parents(names: set[str]) -> set[str]:
    out = set(names)
    stack = list(names)
    while stack:
        for parent in _PARENTS.get(stack.pop(), ()):
            if parent not in out:
                out.add(parent)
                stack.append(parent)
    return out


def _hits(text: str, *, question: bool) -> set[str]:
    found: set[str] = set()
    for c in _COMPILED:
        body = c.excludes.sub(" ", text) if c.excludes is not None else text
        if (
            (c.members is not None and c.members.search(body))
            or (c.patterns is not None and c.patterns.search(body))
            or (question and c.questions is not None and c.questions.search(body))
        ):
            found.add(c.cls.name)
    return found


@lru_cache(maxsize=16384)
def fact_concepts(text: str) -> frozenset[str]:
    """Classes a stored fact is about (with parent classes)."""
    norm = normalize_text(text)
    if not norm:
        return frozenset()
    found = _hits(norm, question=False)
    found.update(t for t in _TAGGED.findall(norm) if t in _WEIGHTS)
    return frozenset(_with_parents(found))


@lru_cache(maxsize=4096)
def query_concepts(text: str) -> frozenset[str]:
    """Classes a question asks about (its words, patterns and question phrasings).

    A class whose child is asked too is dropped: "周末做什么运动" asks for a sport, not for
    any hobby, so "钓鱼" gets no credit from it.
    """
    norm = normalize_text(text)
    if not norm:
        return frozenset()
    found = _hits(norm, question=True)
    implied = set().union(*(_with_parents({c}) - {c} for c in found)) if found else set()
    return frozenset(found - implied)


def concept_similarity(query: frozenset[str], fact: frozenset[str]) -> float | None:
    """Weighted share of the question's classes the fact covers; None without any."""
    if not query:
        return None
    total = sum(_WEIGHTS.get(c, 1.0) for c in query)
    covered = sum(_WEIGHTS.get(c, 1.0) for c in query & fact)
    return covered / total if total else None


def concept_scorer(query: frozenset[str]) -> Callable[[frozenset[str]], float | None]:
    """`concept_similarity(query, fact)` for many facts: the query's total weight summed once
    (the same arithmetic, so the same values)."""
    if not query:
        return lambda _fact: None
    total = sum(_WEIGHTS.get(c, 1.0) for c in query)
    if not total:
        return lambda _fact: None

    def similarity(fact: frozenset[str]) -> float | None:
        if query.isdisjoint(fact):
            return 0 / total
        return sum(_WEIGHTS.get(c, 1.0) for c in query & fact) / total

    return similarity


def parts_scorer(
    parts: Sequence[frozenset[str]],
) -> Callable[[frozenset[str]], float | None] | None:
    """The concept scorer of a question asked in parts (`text.question_parts`): a fact's
    similarity is its best over the parts, so "我住哪，家里有宠物吗" gives "搬到朝阳" the full
    share of the clause it answers, not half of the whole question's. None: no class asked."""
    scorers = [concept_scorer(p) for p in dict.fromkeys(parts) if p]
    if len(scorers) <= 1:
        return scorers[0] if scorers else None

    def similarity(fact: frozenset[str]) -> float | None:
        found = [v for score in scorers if (v := score(fact)) is not None]
        return max(found) if found else None

    return similarity


def class_names() -> tuple[str, ...]:
    """Every class of the table (for the background model's category field and docs)."""
    return tuple(c.name for c in CLASSES)
