"""A member's facts ranked by meaning, age only between near-equals (issue #47).

A member teaches over months and every reply touches the facts it chose. With the other
blocks' weights (recency 0.3, frequency 0.1), a fact taught this week, or one chosen on many
replies, came before the older fact the question asks about."""

from __future__ import annotations

import dataclasses

import pytest

from pallas.features.memory.config import RetrievalConfig
from pallas.ranking import MemoryCandidate, RelevanceWeights, ScoringConfig, retrieve

from .helpers import NOW, SCOPE, facts

DAY = 86_400.0
OTHERS = RelevanceWeights()  # the weights of the blocks that keep the retrieval's own


def aged(cand: MemoryCandidate, days: float, touches: int = 0) -> MemoryCandidate:
    """`cand` taught `days` ago, and chosen on `touches` replies, the last an hour ago."""
    last = NOW - 3600 if touches else None
    return dataclasses.replace(
        cand, created_at=NOW - days * DAY, access_count=touches, last_access_at=last
    )


def first(config: ScoringConfig, candidates: list[MemoryCandidate],
          cosines: dict[str, float]) -> str:  # fmt: skip
    result = retrieve("我喜欢什么运动", candidates, kind="person_facts", now=NOW,
                      allowed_scopes={SCOPE}, config=config, semantic_scores=cosines)  # fmt: skip
    return result.trace.chosen_ids[0]


# (case, the old fact's cosine, the newer one's, its age in days, its touches)
CASES = [
    ("taught this week", 0.75, 0.55, 2.0, 0),
    ("chosen on many replies", 0.75, 0.55, 90.0, 60),
    ("taught yesterday, chosen on a few replies", 0.70, 0.50, 1.0, 5),
]


@pytest.mark.parametrize(("case", "old_cos", "new_cos", "new_age", "touches"), CASES)
def test_the_fact_asked_about_comes_first_however_old(
    case: str, old_cos: float, new_cos: float, new_age: float, touches: int
) -> None:
    old, new = facts("TA喜欢打羽毛球", "TA周末喜欢看纪录片")
    candidates = [aged(old, 120.0), aged(new, new_age, touches)]
    cosines = {"f0": old_cos, "f1": new_cos}
    config = RetrievalConfig()
    assert first(config, candidates, cosines) == "f0", case
    # the other blocks' weights put the newer, weaker fact first: what the block's own fix
    block = config.person_facts.model_copy(update={"weights": OTHERS})
    assert first(config.model_copy(update={"person_facts": block}), candidates, cosines) == "f1"


def test_between_near_equals_the_newer_fact_comes_first() -> None:
    # a new value the update rules did not retire: the same meaning, the newer first
    old, new = facts("TA住在海淀", "TA住在朝阳")
    candidates = [aged(old, 120.0), aged(new, 3.0)]
    result = retrieve("我住在哪", candidates, kind="person_facts", now=NOW,
                      allowed_scopes={SCOPE}, config=RetrievalConfig(),
                      semantic_scores={"f0": 0.62, "f1": 0.61})  # fmt: skip
    assert result.trace.chosen_ids == ("f1", "f0")


def test_a_block_without_its_own_weights_keeps_the_retrievals() -> None:
    config = RetrievalConfig(weights=RelevanceWeights(recency=0.5))
    assert config.person_facts.weights == RelevanceWeights(recency=0.05, frequency=0.02)
    assert config.group_memory.weights is None
    old, new = facts("群规第一条：不许刷屏", "群规第二条：不发广告")
    candidates = [aged(old, 120.0), aged(new, 1.0)]
    result = retrieve("群规", candidates, kind="group_memory", now=NOW, allowed_scopes={SCOPE},
                      config=config, semantic_scores={"f0": 0.7, "f1": 0.6})  # fmt: skip
    assert result.trace.chosen_ids == ("f1", "f0")  # recency 0.5: the newer, weaker first


def test_a_group_overrides_the_person_facts_weights_in_its_config() -> None:
    config = RetrievalConfig.model_validate({"person_facts": {"weights": {"recency": 0.3}}})
    assert config.person_facts.weights == RelevanceWeights(recency=0.3)
    assert config.person_facts.min_similarity == 0.35  # the rest of the block's defaults kept


def test_person_facts_weigh_the_cosine_more_than_the_other_blocks() -> None:
    """With the question adapter, a member's facts are fused 0.9 cosine + 0.1 BM25 (the other
    blocks 0.7 + 0.3), so a fact sharing the question's words but far in meaning no longer
    passes on the words: "我喜欢什么运动" → "TA不喜欢什么都管" stays out, the badminton in."""
    words, meaning = facts("TA不喜欢什么都管", "TA周末打羽毛球")
    cosines = {"f0": 0.3, "f1": 0.7}

    def similarities(kind: str, config: ScoringConfig) -> dict[str, float]:
        rows = [dataclasses.replace(c, kind=kind) for c in (words, meaning)]
        result = retrieve("我喜欢什么运动", rows, kind=kind, now=NOW, allowed_scopes={SCOPE},
                          config=config, semantic_scores=cosines)  # fmt: skip
        return {c.id: c.similarity for c in result.trace.candidates if not c.gated}

    config = RetrievalConfig(concept_weight=0.0)  # the words and the cosine only (no class)
    assert similarities("person_facts", config) == {"f1": pytest.approx(0.9 * 0.7)}
    # the retrieval's own mix and gate, as the other blocks keep: the words carry f0 through
    old = config.person_facts.model_copy(
        update={"embedding_weight": None, "min_similarity_with_vectors": None}
    )
    mixed = similarities("person_facts", config.model_copy(update={"person_facts": old}))
    assert set(mixed) == {"f0", "f1"}
    assert mixed["f1"] == pytest.approx(0.7 * 0.7)
    assert set(similarities("group_memory", config)) == {"f0", "f1"}
