from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from pallas.features.memory.config import (
    BLOCK_KINDS,
    BlockRetrievalConfig,
    RelevanceWeights,
    RetrievalConfig,
)
from pallas.ranking.scoring import (
    Bm25Index,
    MemoryCandidate,
    cosine_similarity,
    frequency_term,
    hybrid_similarity,
    recency_term,
    relevance,
    retrieve,
)
from pallas.ranking.text import tokenize

NOW = 1_760_000_000.0
DAY = 86_400.0
SCOPE = "group:1:100"


def cand(
    cid: str, text: str, *, days: float = 0.0, count: int = 0, **kw: object
) -> MemoryCandidate:
    fields: dict[str, object] = {"scope": SCOPE, "kind": "group_memory"}
    fields.update(kw)
    return MemoryCandidate(
        id=cid,
        text=text,
        created_at=NOW - days * DAY,
        last_access_at=None,
        access_count=count,
        **fields,  # type: ignore[arg-type]
    )


CORPUS = [
    cand("cake", "用户123最喜欢吃草莓蛋糕"),
    cand("trip", "群主说下周六去海边团建"),
    cand("cat", "小明的猫叫凯尔希，是一只橘猫"),
    cand("weather", "今天天气不错，适合出门"),
    cand("game", "群里周末一起打明日方舟"),
]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("我最喜欢吃什么蛋糕来着", "cake"),
        ("团建是哪天去海边", "trip"),
        ("小明的猫叫什么名字", "cat"),
        ("周末打不打明日方舟", "game"),
    ],
)
def test_bm25_ranks_relevant_document_first(query: str, expected: str) -> None:
    index = Bm25Index.from_texts((c.id, c.text) for c in CORPUS)
    scores = index.normalised_scores(tokenize(query))
    assert max(scores, key=lambda k: scores[k]) == expected
    assert all(0.0 <= s <= 1.0 for s in scores.values())


def test_bm25_normalisation_is_coverage_not_max() -> None:
    index = Bm25Index({"a": ["x", "y"], "b": ["x", "q"], "c": ["z", "w"]})
    full = index.normalised_scores(["x", "y"])
    assert full["a"] == pytest.approx(1.0)
    # b covers only the more common of the two terms: its share of the query's IDF weight.
    assert full["b"] == pytest.approx(index.idf("x") / (index.idf("x") + index.idf("y")))
    assert 0.0 < full["b"] < 0.5
    assert full["c"] == 0.0
    # A term no document has still counts: covering half the query is 0.5, not 1.0.
    assert index.normalised_scores(["z", "unknown"])["c"] == pytest.approx(0.5)
    assert index.normalised_scores(["unknown"]) == {"a": 0.0, "b": 0.0, "c": 0.0}


def test_one_word_overlap_in_a_tiny_corpus_is_not_a_perfect_match() -> None:
    index = Bm25Index.from_texts([("only", "凯尔希说了很多关于源石病的话")])
    sim = index.normalised_scores(tokenize("凯尔希今天在干嘛呢医生"))["only"]
    assert 0.0 < sim < 0.5


def test_bm25_prefers_rarer_terms_and_respects_k1_b() -> None:
    docs = {"common": ["a", "b"], "rare": ["a", "r"], "filler": ["a", "b"]}
    index = Bm25Index(docs)
    raw = index.scores(["b", "r"])
    assert raw["rare"] > raw["common"]
    assert Bm25Index(docs, k1=0.0).scores(["a"])["common"] == pytest.approx(index.idf("a"))


@pytest.mark.parametrize(
    ("days", "expected"),
    [(0.0, 1.0), (7.0 * math.log(2), 0.5), (7.0, math.exp(-1)), (14.0, math.exp(-2))],
)
def test_recency_decay(days: float, expected: float) -> None:
    assert recency_term(days) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("count", "expected"),
    [(0, 0.0), (1, math.log(2) / 5), (9, math.log(10) / 5), (10_000, 1.0)],
)
def test_frequency_term(count: int, expected: float) -> None:
    assert frequency_term(count) == pytest.approx(expected)


def test_relevance_uses_spec_weights() -> None:
    assert relevance(1.0, 0.0, 0) == pytest.approx(0.9)
    assert relevance(0.5, 7.0, 9) == pytest.approx(
        0.6 * 0.5 + 0.3 * math.exp(-1) + 0.1 * math.log(10) / 5
    )
    custom = RelevanceWeights(similarity=1.0, recency=0.0, frequency=0.0)
    assert relevance(0.42, 100.0, 100, custom) == pytest.approx(0.42)


def test_cosine_and_hybrid() -> None:
    assert cosine_similarity([1, 0], [1, 0]) == pytest.approx(1.0)
    assert cosine_similarity([1, 0], [0, 1]) == 0.0
    assert cosine_similarity([1, 0], [-1, 0]) == 0.0
    assert cosine_similarity([1, 0], [1, 0, 0]) == 0.0
    assert cosine_similarity([0, 0], [1, 0]) == 0.0
    assert hybrid_similarity(0.4, 0.8, 0.5) == pytest.approx(0.6)
    assert hybrid_similarity(0.4, None, 0.5) == 0.4
    assert hybrid_similarity(None, 0.8, 0.5) == 0.8
    assert hybrid_similarity(None, None, 0.5) == 0.0


def test_zero_similarity_never_retrieved_even_if_recent_and_frequent() -> None:
    hot = cand("hot", "今天天气不错，适合出门", days=0, count=500)
    result = retrieve("小明的猫叫什么", [hot], kind="group_memory", now=NOW, allowed_scopes={SCOPE})
    assert result.chosen == ()
    assert result.trace.dropped_by_similarity == ("hot",)
    # ... while the same recency/frequency bonus alone would clear the threshold.
    assert relevance(0.0, 0.0, 500) > RetrievalConfig().group_memory.threshold


def test_weak_overlap_with_a_recent_memory_is_gated_by_default() -> None:
    other_person = cand("red", "小红喜欢猫", days=0.5, count=30)
    result = retrieve(
        "小明喜欢吃什么", [other_person], kind="group_memory", now=NOW, allowed_scopes={SCOPE}
    )
    assert result.chosen == ()
    assert result.trace.dropped_by_similarity == ("red",)
    assert 0.0 < result.trace.candidates[0].similarity < 0.25


def test_similarity_gate_is_configurable() -> None:
    docs = [cand("a", "草莓蛋糕"), cand("b", "草莓味的牛奶和饼干还有巧克力和香蕉")]
    strict = RetrievalConfig(group_memory=BlockRetrievalConfig(min_similarity=0.9, threshold=0))
    result = retrieve(
        "草莓蛋糕", docs, kind="group_memory", now=NOW, allowed_scopes={SCOPE}, config=strict
    )
    assert result.ids == ("a",)
    assert "b" in result.trace.dropped_by_similarity


def test_recency_and_frequency_break_ties_between_equal_matches() -> None:
    old = cand("old", "阿米娅喜欢吃甜食", days=60)
    fresh = cand("fresh", "阿米娅喜欢吃甜食", days=1)
    used = cand("used", "阿米娅喜欢吃甜食", days=60, count=40)
    result = retrieve(
        "阿米娅喜欢吃什么", [old, used, fresh], kind="group_memory", now=NOW,
        allowed_scopes={SCOPE},
    )  # fmt: skip
    assert result.ids == ("fresh", "used", "old")


def test_threshold_drops_weak_old_matches() -> None:
    weak_old = cand("weak", "凯尔希说了很多关于源石病的话还有别的长长的内容内容", days=90)
    cfg = RetrievalConfig(group_memory=BlockRetrievalConfig(threshold=0.5, min_similarity=0.01))
    result = retrieve(
        "凯尔希今天在干嘛呢医生", [weak_old], kind="group_memory", now=NOW,
        allowed_scopes={SCOPE}, config=cfg,
    )  # fmt: skip
    assert result.chosen == ()
    assert result.trace.dropped_by_threshold == ("weak",)
    score = result.trace.candidates[0]
    assert 0 < score.score < 0.5


def test_top_k_and_char_cap() -> None:
    docs = [cand(f"m{i}", f"罗德岛的干员{i}号喜欢吃草莓" + "。" * (10 * i)) for i in range(6)]
    cfg = RetrievalConfig(group_memory=BlockRetrievalConfig(top_k=3, max_chars=60, threshold=0))
    result = retrieve(
        "罗德岛干员喜欢吃草莓", docs, kind="group_memory", now=NOW, allowed_scopes={SCOPE},
        config=cfg,
    )  # fmt: skip
    chosen_chars = sum(len(c.text) for c in result.chosen)
    assert chosen_chars <= 60
    assert len(result.chosen) <= 3
    trace = result.trace
    assert trace.chars == chosen_chars
    assert trace.dropped_by_cap, "long items must be dropped by the char cap"
    all_ids = set(trace.chosen_ids) | set(trace.dropped_by_cap) | set(trace.dropped_by_top_k)
    assert all_ids == {d.id for d in docs}


def test_top_k_limits_count() -> None:
    docs = [cand(f"m{i}", f"草莓蛋糕{i}") for i in range(5)]
    cfg = RetrievalConfig(group_memory=BlockRetrievalConfig(top_k=2, threshold=0))
    result = retrieve(
        "草莓蛋糕", docs, kind="group_memory", now=NOW, allowed_scopes={SCOPE}, config=cfg
    )
    assert len(result.chosen) == 2
    assert len(result.trace.dropped_by_top_k) == 3


def test_embeddings_can_retrieve_without_lexical_overlap() -> None:
    docs = [cand("pet", "他家养了一只橘色的小动物"), cand("food", "草莓蛋糕")]
    vectors = {"pet": [0.9, 0.1], "food": [0.0, 1.0]}
    result = retrieve(
        "猫", docs, kind="group_memory", now=NOW, allowed_scopes={SCOPE},
        query_embedding=[1.0, 0.0], embeddings=vectors,
    )  # fmt: skip
    assert result.ids == ("pet",)
    pet = next(c for c in result.trace.candidates if c.id == "pet")
    assert pet.bm25 == 0.0 and pet.embedding is not None and pet.embedding > 0.9


def test_retrieve_drops_out_of_scope_candidates() -> None:
    mine = cand("mine", "草莓蛋糕")
    theirs = cand("theirs", "草莓蛋糕", scope="group:1:200")
    result = retrieve(
        "草莓蛋糕", [mine, theirs], kind="group_memory", now=NOW, allowed_scopes={SCOPE}
    )
    assert result.ids == ("mine",)
    assert result.trace.dropped_by_scope == ("theirs",)
    as_dict = result.trace.to_dict()
    assert as_dict["chosen"] == ["mine"] and as_dict["candidates"][0]["id"] == "mine"


def test_last_access_time_overrides_creation_time() -> None:
    c = MemoryCandidate(
        "x", "t", SCOPE, "group_memory", created_at=NOW - 30 * DAY, last_access_at=NOW - DAY
    )
    assert c.days_since_access(NOW) == pytest.approx(1.0)
    assert c.days_since_access(NOW - 2 * DAY) == 0.0


def test_retrieval_config_defaults_and_validation() -> None:
    cfg = RetrievalConfig()
    assert (cfg.weights.similarity, cfg.weights.recency, cfg.weights.frequency) == (0.6, 0.3, 0.1)
    assert cfg.weights.recency_days == 7.0
    assert (cfg.bm25_k1, cfg.bm25_b) == (1.5, 0.75)
    for kind in BLOCK_KINDS:
        assert cfg.block(kind).top_k >= 1
    with pytest.raises(KeyError):
        cfg.block("weights")
    with pytest.raises(ValidationError):
        RetrievalConfig.model_validate({"group_memory": {"top_kk": 3}})
    with pytest.raises(ValidationError):
        RetrievalConfig.model_validate({"unknown": 1})
    tuned = RetrievalConfig.model_validate({"person_facts": {"top_k": 9}})
    assert tuned.person_facts.top_k == 9 and tuned.person_facts.max_chars == 360
    explicit = RetrievalConfig(person_facts=BlockRetrievalConfig(top_k=9))
    assert explicit.person_facts.max_chars == 360
