"""The kept scoring form of a member's topics recalls exactly what scoring the rows afresh does.

`OldTopicsSource` scores a member's kept rows through `TopicCache.prepared` (candidates, scope
filter and BM25 index built when the rows change) instead of building candidates and an index
on every turn. For varied rows, queries, live summaries and configs, the prepared path must give
the same chosen topics in the same order with the same scores and the same trace as
`retrieve(query, topic_candidates(rows, exclude_text=...))`, and a changed row (a recall, a new
topic, another live summary) must be seen on the next turn.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

import pytest

from pallas.features.memory.config import BlockRetrievalConfig, RetrievalConfig
from pallas.features.session.repository import SessionTopic
from pallas.features.session.topic_cache import TopicCache, _Entry
from pallas.features.session.topic_index import KIND, topic_candidates
from pallas.ranking.scoring import RetrievalResult, retrieve, retrieve_prepared

NOW = 1_780_000_000.0
DAY = 86_400.0
BOT, GROUP, USER = 1, 2, 3
SCOPE = f"group:{BOT}:{GROUP}:user:{USER}"
KEY = (BOT, GROUP, USER, 200)

SUBJECTS = ["吉他", "F和弦", "减肥", "沙拉", "考研", "背单词", "猫", "明日方舟", "上海", "咖啡"]
VERBS = ["在学", "聊到", "抱怨", "想买", "最近在", "推荐了", "问起"]


def topics(n: int, seed: int) -> list[SessionTopic]:
    """A member's archived summaries, newest first: mixed ages and recall counts, a blank
    one, one of another scope (never recalled) and a repeated text."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        when = NOW - rng.uniform(0, 120) * DAY
        text = "，".join(
            f"用户{rng.choice(VERBS)}{rng.choice(SUBJECTS)}" for _ in range(rng.randint(1, 4))
        )
        rows.append(
            SessionTopic(
                bot_id=BOT,
                group_id=GROUP,
                user_id=USER,
                scope="group:1:999" if i % 11 == 5 else SCOPE,
                text="   " if i % 13 == 7 else text,
                first_turn_at=when - 600,
                last_turn_at=when,
                created_at=when,
                last_access_at=None if i % 3 else when + rng.uniform(0, 5) * DAY,
                access_count=rng.randrange(0, 12),
                row_id=1000 - i,
            )
        )
    if n > 4:
        rows[3] = replace(rows[3], text=rows[1].text)  # the same summary archived twice
    return rows


QUERIES = ["吉他F和弦还是按不响", "减肥晚饭吃沙拉", "考研背单词", "上海的咖啡", "哈哈哈", "猫"]
CONFIGS = {
    "default": RetrievalConfig(),
    "open_gate": RetrievalConfig(
        old_topics=BlockRetrievalConfig(top_k=6, max_chars=120, threshold=0.0, min_similarity=0)
    ),
    "bm25_params": RetrievalConfig(bm25_k1=0.9, bm25_b=0.3),
}


@dataclass(frozen=True)
class Case:
    query: str
    config: str
    size: int
    live: int  # which row's text is the live summary (-1: none)


CASES = [
    Case(q, c, size, live)
    for q in QUERIES
    for c in CONFIGS
    for size, live in ((1, -1), (12, 1), (200, -1), (200, 0))
]


def fresh(rows: list[SessionTopic], query: str, live_text: str, config: RetrievalConfig):
    """The old-topics scoring as it was: candidates and index built for this one turn."""
    return retrieve(
        query,
        topic_candidates(rows, exclude_text=live_text),
        kind=KIND,
        now=NOW,
        allowed_scopes={SCOPE},
        config=config,
    )


def kept(warm: TopicCache, rows: list[SessionTopic], query: str, live: str, config):
    prepared = warm.prepared(
        KEY, rows, exclude_text=live, allowed={SCOPE}, bm25=(config.bm25_k1, config.bm25_b)
    )
    return retrieve_prepared(query, prepared.candidates, kind=KIND, now=NOW, config=config)


def same(new: RetrievalResult, old: RetrievalResult) -> None:
    assert new.chosen == old.chosen
    assert new.trace == old.trace  # every score, every dropped-by list, in the same order
    assert new.trace.to_dict() == old.trace.to_dict()


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.config}-{c.size}-{c.live}-{c.query}")
def test_prepared_topics_recall_what_fresh_scoring_recalls(case: Case) -> None:
    rows = topics(case.size, seed=case.size + case.live)
    live = rows[case.live].text if case.live >= 0 else ""
    config = CONFIGS[case.config]
    warm = TopicCache()
    for _ in range(2):  # built on the first turn, reused on the second
        same(kept(warm, rows, case.query, live, config), fresh(rows, case.query, live, config))


def test_the_table_has_recalls_and_misses() -> None:
    chose = []
    for case in CASES:
        rows = topics(case.size, seed=case.size + case.live)
        live = rows[case.live].text if case.live >= 0 else ""
        chose.append(bool(fresh(rows, case.query, live, CONFIGS[case.config]).chosen))
    assert chose.count(True) >= 20 and chose.count(False) >= 5, chose


def test_unchanged_rows_reuse_the_prepared_form() -> None:
    rows, warm = topics(50, 1), TopicCache()
    first = warm.prepared(KEY, rows, exclude_text="", allowed={SCOPE}, bm25=(1.5, 0.75))
    again = warm.prepared(KEY, rows, exclude_text="", allowed={SCOPE}, bm25=(1.5, 0.75))
    assert again is first


def test_a_recall_is_scored_on_the_next_turn_with_the_same_index() -> None:
    rows, warm, config = topics(50, 2), TopicCache(), RetrievalConfig()
    warm._entries[KEY] = _Entry(None, NOW, rows)  # what `for_subject` keeps for the member
    query = "吉他F和弦还是按不响"
    before = warm.prepared(KEY, rows, exclude_text="", allowed={SCOPE}, bm25=(1.5, 0.75))
    chosen = {int(c.id.split(":")[1]) for c in kept(warm, rows, query, "", config).chosen}
    assert chosen
    warm.touched(KEY, chosen, NOW)  # the source's recall: counts + 1, last access now
    recalled = warm._entries[KEY].rows
    assert recalled is not rows
    after = warm.prepared(KEY, recalled, exclude_text="", allowed={SCOPE}, bm25=(1.5, 0.75))
    assert after is not before  # the candidates carry the new counts ...
    assert after.candidates.indexes[(1.5, 0.75)] is before.candidates.indexes[(1.5, 0.75)]
    same(kept(warm, recalled, query, "", config), fresh(recalled, query, "", config))
    new = {c.id: c.frequency for c in kept(warm, recalled, query, "", config).trace.candidates}
    old = {c.id: c.frequency for c in kept(warm, rows, query, "", config).trace.candidates}
    assert any(new[i] > old[i] for i in new)


def test_a_new_topic_and_a_new_live_summary_are_seen_on_the_next_turn() -> None:
    rows, warm, config = topics(30, 3), TopicCache(), RetrievalConfig()
    warm._entries[KEY] = _Entry(None, NOW, rows)  # what `for_subject` keeps for the member
    query = "周末去杭州爬山"
    assert not kept(warm, rows, query, "", config).chosen
    new = replace(rows[0], text="用户说周末要去杭州爬山", row_id=2000, access_count=0)
    warm.added(new, (9, NOW, "summary"))  # a summary archived a topic
    grown = warm._entries[KEY].rows
    assert grown[0] is new
    result = kept(warm, grown, query, "", config)
    assert [c.id for c in result.chosen] == ["topic:2000"]
    same(result, fresh(grown, query, "", config))
    # that topic is the live summary now: not recalled a second time
    same(kept(warm, grown, query, new.text, config), fresh(grown, query, new.text, config))
    assert not kept(warm, grown, query, new.text, config).chosen


def test_prepared_forms_are_bounded() -> None:
    warm = TopicCache(max_prepared=3)
    rows = topics(5, 4)
    for user in range(10):
        key = (BOT, GROUP, user, 200)
        warm.prepared(key, rows, exclude_text="", allowed={SCOPE}, bm25=(1.5, 0.75))
    assert len(warm._prepared) == 3
