"""Forgetting one fact, the teaching cap, and undoing either: "忘掉我的血型", "撤销".

- `forget_one`: "忘掉我<某件事>" forgets the ONE live fact of the member that the words mean —
  chosen with the offline sentence encoder where one is loaded, plus the words and the concept
  table (`pick_fact`, pure) — and says which; two facts equally close are named back instead
  ("你是说「…」还是「…」？"). The row is soft-deleted as ``forget_one`` (kept, like every retired
  fact), and the consolidated profile is rebuilt without it (`MemoryService.forget_items`).
- `drop_oldest_unused`: at the teaching cap (`member_commands.MAX_TAUGHT_PER_USER`) a new
  fact is stored and the member's oldest taught fact that was never used (else the least
  recently used) is dropped as ``cap_drop`` — and the reply names it. Chosen over refusing:
  refusing made a member at the cap unable to teach anything until they forgot, and forgetting
  was all or nothing; the oldest unused fact is the one least likely to be missed, and naming it
  with "撤销" keeps the member in control.
- `undo`: "撤销" / "恢复" within `UNDO_WINDOW_S` brings back what the member's last forgetting,
  cap drop or correction chosen by meaning (``meaning:update``: the step most likely to pick
  the wrong fact) took away. Nothing to undo: None (the chat answers).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pallas.features.memory import MemoryItem, MemoryService, meaning_text
from pallas.features.memory_commands.corrections import shared
from pallas.features.memory_prompt import MAX_LISTED_FACTS, own_facts, said_to_subject
from pallas.providers.sentence_encoder import SentenceEncoder
from pallas.ranking import concept_similarity, fact_concepts, query_concepts

UNDO_WINDOW_S = 600.0
FORGET_ONE_REASON = "forget_one"
CAP_DROP_REASON = "cap_drop"
UNDOABLE = (FORGET_ONE_REASON, CAP_DROP_REASON)
UNDOABLE_PREFIXES = ("meaning:",)

# A fact is meant when the encoder, the words or the concepts say so; two within MARGIN: ask.
MIN_COS = 0.35
MIN_SHARED = 0.3
MIN_CONCEPT = 0.5
MARGIN = 0.05

REPLY_FORGOT_ONE = "好，「{fact}」这条我忘掉啦～说“撤销”可以找回来（{minutes} 分钟内）"
REPLY_WHICH_ONE = "你是说{options}？说得具体一点我再忘掉"
REPLY_NOT_FOUND = "我没找到关于你“{what}”的记忆哦，可以问我“你记得我什么”看看"
REPLY_RESTORED = "好，{facts}我又记起来啦～"
REPLY_CAP_DROPPED = (
    "{lead} 关于你的事我最多记 {cap} 条，最早教我、也没用上的「{old}」我先忘掉了"
    "（说“撤销”可以找回来）"
)


@dataclass(frozen=True, slots=True)
class Pick:
    """The fact meant (`item`), or the close ones to ask between (`ties`), or neither."""

    item: MemoryItem | None = None
    ties: tuple[MemoryItem, ...] = ()


def pick_fact(what: str, facts: Sequence[MemoryItem], cosines: Sequence[float] | None) -> Pick:
    """The one fact `what` ("血型", "养猫的事") means among `facts` (pure)."""
    asked = query_concepts(what)
    rows: list[tuple[float, MemoryItem]] = []
    for n, item in enumerate(facts):
        cos = cosines[n] if cosines is not None else 0.0
        words = shared(what, item.text)
        concept = concept_similarity(asked, fact_concepts(item.text)) or 0.0
        if cos < MIN_COS and words < MIN_SHARED and concept < MIN_CONCEPT:
            continue
        rows.append((cos + words + 0.5 * concept, item))
    rows.sort(key=lambda r: r[0], reverse=True)
    if not rows:
        return Pick()
    close = tuple(item for score, item in rows if rows[0][0] - score < MARGIN)
    return Pick(rows[0][1]) if len(close) == 1 else Pick(ties=close[:3])


async def forget_one(
    service: MemoryService, encoder: SentenceEncoder | None, user_id: int, scope: str, what: str
) -> str:
    facts = await own_facts(service, user_id, scope, MAX_LISTED_FACTS)
    if not facts:
        return REPLY_NOT_FOUND.format(what=what)
    cosines = None
    if encoder is not None:
        vectors = await encoder.encode([meaning_text(what), *(meaning_text(f.text) for f in facts)])
        cosines = [float(v) for v in vectors[1:] @ vectors[0]]
    pick = pick_fact(what, facts, cosines)
    if pick.ties:
        options = "还是".join(f"「{said_to_subject(i.text)}」" for i in pick.ties)
        return REPLY_WHICH_ONE.format(options=options)
    if pick.item is None:
        return REPLY_NOT_FOUND.format(what=what)
    gone = await service.forget_items([pick.item.id], scope=scope, reason=FORGET_ONE_REASON)
    if not gone:
        return REPLY_NOT_FOUND.format(what=what)
    minutes = int(UNDO_WINDOW_S // 60)
    return REPLY_FORGOT_ONE.format(fact=said_to_subject(gone[0].text), minutes=minutes)


async def undo(service: MemoryService, user_id: int, scope: str, now: float) -> str | None:
    """Bring back what the member's last undoable forgetting took; None: nothing to undo."""
    recent = await service.repo.recently_deleted(
        scope, user_id, reasons=UNDOABLE, reason_prefixes=UNDOABLE_PREFIXES,
        since=now - UNDO_WINDOW_S,
    )  # fmt: skip
    if not recent:
        return None
    last = recent[0].deleted_at
    batch = [i.id for i in recent if i.deleted_at == last]
    back = await service.restore_items(batch, scope=scope)
    if not back:
        return None
    return REPLY_RESTORED.format(facts="".join(f"「{said_to_subject(i.text)}」" for i in back))


async def drop_oldest_unused(
    service: MemoryService, scope: str, taught: Sequence[MemoryItem], keep: int
) -> MemoryItem | None:
    """At the cap: forget the oldest taught fact never used (else the least recently used)."""
    pool = [i for i in taught if i.id != keep]
    if not pool:
        return None
    oldest = min(pool, key=lambda i: (i.access_count > 0, i.last_access_at or 0.0, i.created_at,
                                      i.id))  # fmt: skip
    gone = await service.forget_items([oldest.id], scope=scope, reason=CAP_DROP_REASON)
    return gone[0] if gone else None
