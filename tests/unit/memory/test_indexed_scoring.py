"""The inverted-index retrieval chooses exactly what scoring every candidate chose.

`reference_scoring.reference_retrieve` is the scoring as it was before `candidate_index`
(every candidate scored, full trace). For varied corpora, queries and configs the indexed
`retrieve` must give the same chosen items in the same order, the same scores for every
candidate that passed the gate, and the same dropped-by lists.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

from pallas.features.memory.config import BlockRetrievalConfig, RetrievalConfig
from pallas.ranking.scoring import (
    CandidateScore,
    MemoryCandidate,
    ScopedCache,
    candidate_index,
    retrieve,
)
from pallas.ranking.trace import TRACE_CANDIDATES, TRACE_IDS, RetrievalResult, RetrievalTrace
from tests.unit.memory.reference_scoring import reference_retrieve, scoring_only

NOW = 1_760_000_000.0
DAY = 86_400.0
SCOPE = "group:1:100"
OTHER = "group:1:200"

FACTS = ["喜欢", "讨厌", "在玩", "养了", "住在", "最近在学", "周末常去", "想买", "对花生过敏"]
THINGS = ["猫", "明日方舟", "火锅", "吉他", "上海", "日语", "爬山", "机械键盘", "咖啡", "原神"]
EXPANSIONS = ["", "", "宠物 动物 §pet", "食物 吃 §food", "运动 §sport", "城市 哪个区 §place"]


def corpus(n: int, seed: int) -> list[MemoryCandidate]:
    """Rows like the reply-turn benchmark's: members' facts, some with expansions, mixed ages."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        user = 10 + i % 7
        rows.append(
            MemoryCandidate(
                id=f"mem:{i}",
                text=f"群友{user}{rng.choice(FACTS)}{rng.choice(THINGS)}（记录{i}）",
                scope=OTHER if i % 23 == 0 else SCOPE,
                kind="person_facts",
                created_at=NOW - rng.uniform(0, 90) * DAY,
                last_access_at=None if i % 3 else NOW - rng.uniform(-1, 30) * DAY,  # skew
                access_count=rng.randrange(0, 40),
                subject_user_id=user,
                expansion=rng.choice(EXPANSIONS),
            )
        )
    rows.append(rows[5])  # a duplicate id: kept once, as before
    return rows


QUERIES = [
    "帕拉斯，今天吃什么，猫呢（45）？",
    "群友12喜欢什么",
    "我有什么东西不能吃",
    "周末做什么运动",
    "你住在哪个区",
    "记录17",
    "哈哈哈哈",
    "",
    "the cat and 咖啡 coffee",
    "明日方舟 原神 火锅 吉他 上海 日语",
]

# the query naming six things names instances of classes that some rows name another
# instance of ("对花生过敏" beside "火锅"): compared with the vetoes off (`scoring_only`)
CONFIGS = {
    "default": RetrievalConfig(),
    "no_concepts": RetrievalConfig(concept_weight=0.0),
    "open_gate": RetrievalConfig(
        person_facts=BlockRetrievalConfig(top_k=8, max_chars=120, threshold=0.0, min_similarity=0)
    ),
    "tight_cap": RetrievalConfig(person_facts=BlockRetrievalConfig(top_k=20, max_chars=60)),
    "bm25_params": RetrievalConfig(bm25_k1=0.9, bm25_b=0.3, concept_weight=0.5),
}


@dataclass(frozen=True)
class Case:
    query: str
    config: str
    size: int
    seed: int


CASES = [
    Case(q, c, size, seed)
    for q in QUERIES
    for c in CONFIGS
    for size, seed in ((40, 1), (600, 2))
    if size == 600 or c == "default"
]


def _same(new: RetrievalResult, old: RetrievalResult) -> None:
    assert new.ids == old.ids
    assert new.chosen == old.chosen
    n, o = new.trace, old.trace
    assert n.dropped_by_scope == o.dropped_by_scope
    # the same rows dropped by similarity; the order differs only for rows matched by their
    # cosine alone below the gate, which are not scored (issue #47, `score_candidates`)
    assert set(n.dropped_by_similarity) == set(o.dropped_by_similarity)
    if not any(c.embedding for c in o.candidates):
        assert n.dropped_by_similarity == o.dropped_by_similarity
    assert n.dropped_by_threshold == o.dropped_by_threshold
    assert n.dropped_by_top_k == o.dropped_by_top_k
    assert n.dropped_by_cap == o.dropped_by_cap
    assert n.chars == o.chars and n.query_tokens == o.query_tokens
    passed_new = [c for c in n.candidates if not c.gated]
    passed_old = [c for c in o.candidates if not c.gated]
    assert passed_new == passed_old  # identical scores, identical order
    gated_old = {c.id: c for c in o.candidates if c.gated}
    for c in n.candidates:  # every gated candidate scored is scored as before
        assert not c.gated or gated_old[c.id] == c
    skipped = set(gated_old) - {c.id for c in n.candidates}
    # not scored: nothing shared with the question, or only a cosine too low to pass the gate
    assert all(
        gated_old[i].similarity == 0 or (gated_old[i].bm25 == 0 and not gated_old[i].concept)
        for i in skipped
    )
    assert n.considered == len(o.candidates)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.config}-{c.size}-{c.query[:8]}")
def test_indexed_retrieval_matches_scoring_every_candidate(case: Case) -> None:
    rows = corpus(case.size, case.seed)
    kwargs = {
        "kind": "person_facts",
        "now": NOW,
        "allowed_scopes": {SCOPE},
        "config": scoring_only(CONFIGS[case.config]),
    }
    _same(retrieve(case.query, rows, **kwargs), reference_retrieve(case.query, rows, **kwargs))


@pytest.mark.parametrize("query", QUERIES[:6])
@pytest.mark.parametrize("mode", ["semantic_scores", "embeddings"])
def test_vector_scores_are_scored_even_without_a_shared_term(query: str, mode: str) -> None:
    rows = corpus(300, 3)
    rng = random.Random(9)
    vectors = {r.id: [rng.uniform(-1, 1) for _ in range(4)] for r in rows if rng.random() < 0.5}
    if mode == "semantic_scores":
        extra = {"semantic_scores": {i: abs(v[0]) for i, v in vectors.items()}}
    else:
        extra = {"query_embedding": [0.5, 0.1, -0.2, 0.3], "embeddings": vectors}
    kwargs = {"kind": "person_facts", "now": NOW, "allowed_scopes": {SCOPE}, **extra}
    new, old = retrieve(query, rows, **kwargs), reference_retrieve(query, rows, **kwargs)
    _same(new, old)
    assert new.chosen, "vector neighbours must be retrievable"


def test_stored_trace_is_bounded_and_keeps_full_counts() -> None:
    rows = corpus(600, 4)
    open_gate = CONFIGS["open_gate"]
    result = retrieve(
        "群友12喜欢什么",
        rows,
        kind="person_facts",
        now=NOW,
        allowed_scopes={SCOPE},
        config=open_gate,
    )
    stored = result.trace.to_dict()
    assert len(stored["candidates"]) <= TRACE_CANDIDATES + len(stored["chosen"])
    assert set(result.ids) <= {c["id"] for c in stored["candidates"]}
    assert stored["scored"] == result.trace.considered == 600 - 600 // 23 - 1
    assert stored["matched"] == len(result.trace.candidates)
    assert stored["dropped"]["similarity"] == len(result.trace.dropped_by_similarity)
    assert stored["dropped"]["scope"] == 600 // 23 + 1
    assert all(len(stored[f"dropped_by_{k}"]) <= TRACE_IDS for k in stored["dropped"])


@pytest.mark.parametrize("config", list(CONFIGS))
def test_one_candidate_tuple_reused_across_queries_and_scopes(config: str) -> None:
    """The memory service passes the same loaded tuple to every retrieval of a turn and of
    later turns: the remembered scope filter and index give the same results every time."""
    rows = tuple(corpus(500, 5))
    cache = ScopedCache(max_entries=2)
    for scopes in ({SCOPE}, {SCOPE, OTHER}, {OTHER}, {SCOPE}):
        for query in QUERIES:
            kwargs = {
                "kind": "person_facts",
                "now": NOW,
                "allowed_scopes": scopes,
                "config": scoring_only(CONFIGS[config]),
            }
            cached = retrieve(query, rows, scoped_cache=cache, **kwargs)
            _same(cached, reference_retrieve(query, list(rows), **kwargs))
            assert cached == retrieve(query, rows, **kwargs)  # uncached: the same, trace too
    assert len(cache) == 2  # bounded: the two latest (tuple, scopes) pairs


def test_scoped_cache_never_serves_another_tuple() -> None:
    """A new tuple with equal rows (a reload after a write) is filtered afresh, and the cache
    belongs to its owner: retrieval without one keeps nothing."""
    cache = ScopedCache(max_entries=4)
    first = tuple(corpus(50, 6))
    kwargs = {"kind": "person_facts", "now": NOW, "allowed_scopes": {SCOPE}}
    retrieve(QUERIES[0], first, scoped_cache=cache, **kwargs)
    changed = tuple(r for r in first if r.id != "mem:3")
    result = retrieve(QUERIES[0], changed, scoped_cache=cache, **kwargs)
    assert "mem:3" not in {c.id for c in result.trace.candidates} | set(
        result.trace.dropped_by_similarity
    )
    _same(result, reference_retrieve(QUERIES[0], list(changed), **kwargs))
    assert len(cache) == 2
    retrieve(QUERIES[0], tuple(corpus(50, 7)), **kwargs)
    assert len(cache) == 2


@pytest.mark.parametrize("query", QUERIES)
def test_per_query_scorers_equal_the_per_document_arithmetic(query: str) -> None:
    """`raw_scores` (each term's share per document computed once per index) and
    `concept_scorer` (per-query work done once) give bit-identical values to `doc_score` /
    `concept_similarity` for every candidate, on the first query and on the next."""
    from pallas.ranking.candidate_index import candidate_index
    from pallas.ranking.concepts import concept_scorer, concept_similarity, query_concepts
    from pallas.ranking.text import tokenize

    rows = corpus(300, 8)
    index = candidate_index([r.id for r in rows], [r.index_text for r in rows], 1.5, 0.75)
    terms = index.bm25.query_terms(tokenize(query))
    asked = query_concepts(query)
    concept = concept_scorer(asked)
    for _ in range(2):
        raw = index.raw_scores(terms)
        for pos, row in enumerate(rows):
            assert raw.get(pos, 0.0) == index.bm25.doc_score(row.id, terms)
            assert concept(index.concepts[pos]) == concept_similarity(asked, index.concepts[pos])
        assert set(raw) == index.matching(terms, ())
    assert concept_scorer(frozenset())(frozenset({"x"})) is None


@pytest.mark.parametrize("rows", [[], [r for r in corpus(60, 4) if r.scope == OTHER]])
def test_nothing_in_scope_scores_nothing_as_before(rows: list[MemoryCandidate]) -> None:
    kwargs = {"kind": "person_facts", "now": NOW, "allowed_scopes": {SCOPE}}
    new, old = retrieve(QUERIES[0], rows, **kwargs), reference_retrieve(QUERIES[0], rows, **kwargs)
    _same(new, old)
    assert new.trace == old.trace and new.trace.to_dict() == old.trace.to_dict()


@pytest.mark.parametrize(
    ("chosen", "shown_after_top"),
    [
        ((), []),
        (("c2", "c5"), []),  # chosen within the top: nothing more
        (("c2", "c13"), ["c13"]),  # chosen further down (an over-cap item skipped above it)
        (("c14", "c11"), ["c11", "c14"]),  # in rank order, not in chosen order
    ],
)
def test_stored_trace_shows_the_top_and_every_chosen_candidate(
    chosen: tuple[str, ...], shown_after_top: list[str]
) -> None:
    scores = tuple(
        CandidateScore(f"c{i}", 0.5, None, 0.5, 1.0, 0.0, 1.0 - i / 100, 10) for i in range(15)
    )
    trace = RetrievalTrace("person_facts", "q", ("q",), scores, chosen)
    shown = [c["id"] for c in trace.to_dict()["candidates"]]
    assert shown == [f"c{i}" for i in range(TRACE_CANDIDATES)] + shown_after_top
    assert trace.to_dict()["candidates"][0]["score"] == 1.0


@pytest.mark.parametrize(
    ("excluded", "expected"),
    [
        (set(), ["a", "b", "c", "d", "e"]),
        ({0, 1, 2, 3, 4}, []),
        ({2}, ["a", "b", "c", "d"]),  # position 2 holds "e": positions are not id order
        ({0, 4}, ["a", "b", "e"]),  # "d" and "c"
        ({1, 3}, ["c", "d", "e"]),  # the first two ids
    ],
)
def test_ids_except_lists_the_other_ids_sorted(excluded: set[int], expected: list[str]) -> None:
    index = candidate_index(["d", "a", "e", "b", "c"], ["x"] * 5, 1.2, 0.75)
    assert index.ids_except(excluded) == expected
