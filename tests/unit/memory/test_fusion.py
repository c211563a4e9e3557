"""How the encoder's cosine is fused with BM25 and the concept table (issue #47): a paraphrase
finds its fact through the cosine, a word shared by chance no longer wins, and with vectors the
concept table is a small bonus beside the cosine (`concept_weight_with_vectors`,
`scoring.concept_bonus`), never a score that passes the gate on its own."""

from __future__ import annotations

import pytest

from pallas.features.memory.config import RetrievalConfig
from pallas.ranking import BlockRetrievalConfig, MemoryCandidate, retrieve
from pallas.ranking.scoring import concept_bonus

SCOPE = "group:1:2"
NOW = 1_780_000_000.0
FACTS = {
    "mem:1": "TA养了一只八哥叫黑豆",
    "mem:2": "TA在一家火锅店当厨师",
    "mem:3": "TA叫人起床从来不用闹钟",
}
OPEN = BlockRetrievalConfig(top_k=10, max_chars=10_000, threshold=0.0, min_similarity=0.0)
CONFIG = RetrievalConfig(person_facts=OPEN)


def ranked(question: str, cosines: dict[str, float] | None) -> list[str]:
    candidates = [
        MemoryCandidate(id=ref, text=text, scope=SCOPE, kind="person_facts", created_at=NOW)
        for ref, text in FACTS.items()
    ]
    config = CONFIG  # with vectors, the concept weight the memory service uses then
    if cosines is not None:
        config = CONFIG.model_copy(update={"concept_weight": CONFIG.concept_weight_with_vectors})
    result = retrieve(question, candidates, kind="person_facts", now=NOW, allowed_scopes={SCOPE},
                      config=config, semantic_scores=cosines)  # fmt: skip
    return [c.id for c in result.chosen]


@pytest.mark.parametrize(
    ("question", "cosines", "first"),
    [
        # a paraphrase sharing no word: only the cosine finds the job
        ("我是做哪一行的？", {"mem:1": 0.2, "mem:2": 0.55, "mem:3": 0.25}, "mem:2"),
        # "叫" shared by chance with two facts: the cosine decides which is about the bird
        ("我养的鸟叫什么？", {"mem:1": 0.6, "mem:2": 0.1, "mem:3": 0.3}, "mem:1"),
        ("我叫什么鸟来着", {"mem:1": 0.5, "mem:2": 0.1, "mem:3": 0.2}, "mem:1"),
    ],
)
def test_the_cosine_orders_what_words_alone_cannot(
    question: str, cosines: dict[str, float], first: str
) -> None:
    assert ranked(question, cosines)[0] == first


def test_with_cosines_equal_the_words_decide() -> None:
    flat = dict.fromkeys(FACTS, 0.3)
    assert ranked("我在火锅店干嘛", flat)[0] == "mem:2"


def test_the_defaults_are_the_measured_ones() -> None:
    config = RetrievalConfig()
    assert (config.embedding_weight, config.concept_weight_with_vectors) == (0.7, 0.5)
    assert (config.concept_bonus_with_vectors, config.concept_min_cosine) == (0.1, 0.25)
    assert config.concept_weight == 0.8  # without vectors: as before


@pytest.mark.parametrize("question", ["我是做哪一行的？", "我叫什么鸟来着"])
def test_the_cosine_carries_weight_over_the_words(question: str) -> None:
    """The same question with the cosines pointing elsewhere ranks elsewhere: the fused
    score follows the encoder, not only the words and the concept table."""
    toward = {ref: (0.9 if ref == "mem:3" else 0.05) for ref in FACTS}
    assert ranked(question, toward)[0] == "mem:3"
    assert ranked(question, None)[0] != "mem:3"


WITH_VECTORS = RetrievalConfig().model_copy(update={"concept_weight": 0.5})


@pytest.mark.parametrize(
    ("sim", "concept", "vectors", "cosine", "expected"),
    [
        (0.3, None, True, 0.4, 0.3),  # the question names no class: nothing to add
        (0.3, 0.5, True, 0.4, 0.35),  # with vectors: 0.1 × the share added
        (0.3, 1.0, True, 0.4, 0.5),  # ... and raised to 0.5 × the share: the cosine agrees
        (0.3, 1.0, True, 0.25, 0.5),  # ... at the floor, still
        (0.1, 1.0, True, 0.15, 0.2),  # the encoder calls it unrelated: the bonus only
        (0.2, 1.0, True, None, 0.5),  # no vector for this row yet: as without vectors
        (0.95, 1.0, True, 0.9, 1.0),  # capped at 1
        (0.1, 1.0, False, None, 0.5),  # without vectors: raised to weight × share
        (0.9, 1.0, False, None, 0.9),  # ... never lowered
        (0.3, 0.0, False, None, 0.3),
    ],
)
def test_concept_evidence_with_and_without_vectors(
    sim: float, concept: float | None, vectors: bool, cosine: float | None, expected: float
) -> None:
    got = concept_bonus(sim, concept, WITH_VECTORS, vectors=vectors, cosine=cosine)
    assert got == pytest.approx(expected)


@pytest.mark.parametrize(
    ("sim", "concept", "vectors", "cosine", "expected"),
    [
        (0.3, 1.0, True, 0.4, 0.4),  # the bonus, never the raise: it names its value
        (0.3, 0.5, True, 0.4, 0.35),
        (0.1, 1.0, False, None, 0.5),  # without vectors the class is the only judge still
    ],
)
def test_a_yes_or_no_question_gets_the_class_bonus_only(
    sim: float, concept: float | None, vectors: bool, cosine: float | None, expected: float
) -> None:
    got = concept_bonus(sim, concept, WITH_VECTORS, vectors=vectors, cosine=cosine, bonus_only=True)
    assert got == pytest.approx(expected)


FACTS_OF_ONE = {"mem:1": "TA周末在学滑板", "mem:2": "TA对花生过敏", "mem:3": "TA养了一只八哥叫黑豆"}


def gated(question: str, cosines: dict[str, float] | None) -> list[str]:
    """The person-facts block as the product gates it (0.35), with the service's swap."""
    candidates = [
        MemoryCandidate(id=ref, text=text, scope=SCOPE, kind="person_facts", created_at=NOW)
        for ref, text in FACTS_OF_ONE.items()
    ]
    config = RetrievalConfig()
    if cosines is not None:
        config = config.model_copy(update={"concept_weight": config.concept_weight_with_vectors})
    result = retrieve(question, candidates, kind="person_facts", now=NOW, allowed_scopes={SCOPE},
                      config=config, semantic_scores=cosines)  # fmt: skip
    return [c.id for c in result.chosen]


@pytest.mark.parametrize(
    ("question", "cosines", "chosen"),
    [
        # the encoder finds skateboarding unrelated to a football team: a class match (sport)
        # alone no longer recalls it for a question about something never said
        ("我喜欢哪个足球队？", {"mem:1": 0.15, "mem:2": 0.1, "mem:3": 0.1}, []),
        # no vectors (encoder off or loading): the concept table alone still recalls it …
        ("我喜欢什么运动？", None, ["mem:1"]),
        # … but not for a question naming another sport (`match_instance`: 足球 ≠ 滑板)
        ("我喜欢哪个足球队？", None, []),
        # a restriction the encoder finds only loosely related (its real cosine): the class
        # match still recalls it — what the concept table is for
        ("我有什么东西不能吃？", {"mem:1": 0.1, "mem:2": 0.32, "mem:3": 0.1}, ["mem:2"]),
        ("我有什么东西不能吃？", None, ["mem:2"]),
    ],
)
def test_a_class_match_alone_recalls_a_fact_unless_the_encoder_calls_it_unrelated(
    question: str, cosines: dict[str, float] | None, chosen: list[str]
) -> None:
    assert gated(question, cosines) == chosen
