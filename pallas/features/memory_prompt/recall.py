"""A member's memory question answered locally: "你记得我是做哪行的吗" → "记得呀：你是做设计的".

Only the asker's own live facts in this group are read (by user id, never another member's).
A fact answers when it covers the question's concepts (`concepts`: "哪行" asks for a job, and
"做设计的" is one) or shares most of its words; when none does, or two facts tie, None is
returned and the chat answers the question with the member's facts in its context.
"""

from __future__ import annotations

import re

from pallas.features.memory import PERSON_FACTS, RELATIONSHIP, MemoryItem, MemoryService
from pallas.ranking import concept_similarity, fact_concepts, normalize_text, query_concepts

RECALL_HEADER = "我记得你："
RECALL_MAX_ITEMS = 8
RECALL_ITEM_CHARS = 40
ANSWER_PREFIX = "记得呀："
QUESTION_FACTS_LIMIT = 100
MAX_LISTED_FACTS = 500  # every fact of a member: far above the teaching cap (extraction adds)
# A fact answers when it covers this share of what the question asks (concepts or bigrams).
MIN_MATCH = 0.34

_QUESTION_WORDS = re.compile(
    r"你|还|记得|记住|知道|吗|嘛|呢|吧|么|[?？。!！~～\s]|什么|啥|哪|谁|几|多少|怎么|是不是|不是"
)
_CJK_RUN = re.compile(r"[\u4e00-\u9fff]{2,}")


def second_person(text: str) -> str:
    """A stored fact as said to its subject: "TA喜欢猫" → "喜欢猫"."""
    body = text.strip()
    if body.upper().startswith("TA"):
        body = body[2:]
    body = body.replace("TA", "你").strip(" ，,。")
    return body[:RECALL_ITEM_CHARS]


def said_to_subject(text: str) -> str:
    """A stored fact said back to its subject: "TA是做设计的" → "你是做设计的"."""
    return text.strip().replace("TA", "你").strip(" ，,。")[:RECALL_ITEM_CHARS]


async def own_facts(
    service: MemoryService, user_id: int, scope: str, limit: int
) -> list[MemoryItem]:
    """The member's live person facts and relationship notes in `scope`, theirs only."""
    items: list[MemoryItem] = []
    for kind in (PERSON_FACTS, RELATIONSHIP):
        items.extend(
            await service.repo.list_items(
                scopes=[scope], kind=kind, subject_user_id=user_id, limit=limit
            )
        )
    return [i for i in items if i.subject_user_id == user_id and i.scope == scope]


async def answer_question(
    service: MemoryService, user_id: int, scope: str, question: str
) -> str | None:
    """ "记得呀：…" with the one fact that answers `question`, or None (the chat answers)."""
    facts = await own_facts(service, user_id, scope, QUESTION_FACTS_LIMIT)
    best = best_answer(question, [f.text for f in facts])
    return None if best is None else ANSWER_PREFIX + said_to_subject(best)


def best_answer(question: str, facts: list[str]) -> str | None:
    """The fact that answers the question (pure), None when none does or two tie."""
    asked = query_concepts(question)
    wanted = _bigrams(question)
    scored = sorted(
        ((_match(asked, wanted, fact), fact) for fact in facts), key=lambda p: p[0], reverse=True
    )
    if not scored or scored[0][0] < MIN_MATCH:
        return None
    if len(scored) > 1 and scored[1][0] == scored[0][0]:
        return None  # two facts answer equally: the model, with both in context, chooses
    return scored[0][1]


def _match(asked: frozenset[str], wanted: frozenset[str], fact: str) -> float:
    by_concept = concept_similarity(asked, fact_concepts(fact)) or 0.0
    by_words = len(wanted & _bigrams(fact)) / len(wanted) if wanted else 0.0
    return max(by_concept, by_words)


def _bigrams(text: str) -> frozenset[str]:
    body = _QUESTION_WORDS.sub(" ", normalize_text(text).replace("ta", " "))
    grams = (run[i : i + 2] for run in _CJK_RUN.findall(body) for i in range(len(run) - 1))
    return frozenset(g for g in grams if "我" not in g)
