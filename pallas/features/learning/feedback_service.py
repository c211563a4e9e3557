"""Negative feedback, wired: an admin's 「不可以」 on a bot line → blame that turn's sources.

`handle_negative_feedback` detects the signal (pure `detect_negative_feedback`), finds the
injection snapshot of the turn that produced the line, turns its section / message source
tokens into blamed sources by kind (`pair:` expression, `strategy:` semantic, `ambient:`
ambient, memory-like sections memory; anything else is kept as ignored in the trace), records
the outcome idempotently and invalidates the group's reply-path cache. The NoneBot matcher in
`packages/feedback` only converts the event, recalls the line when `recall_allowed` says so,
and stops the event from reaching the chat plugin.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from pallas.context import sections as S
from pallas.core.clock import Clock
from pallas.core.db.repositories.snapshots import SnapshotRepository
from pallas.core.learning_records import FeedbackOutcome
from pallas.core.records import StoredMessage
from pallas.core.state import StateStore
from pallas.features.learning.feedback_repository import FeedbackRepository, StoredFeedback
from pallas.features.learning.repository import LearningRepository

from .config import LearningConfig
from .group_store import bump_generation
from .injection_feedback import (
    InjectedSource,
    SourceKind,
    detect_negative_feedback,
    record_feedback,
    should_recall_bot_message,
)

log = logging.getLogger("pallas.learning.feedback")

_MEMORY_SECTIONS = frozenset({S.MEMORY, S.KNOWLEDGE, S.RELATIONSHIP, S.PERSON_FACTS, S.MID_TERM})
_PREFIX_KINDS = (
    ("pair:", SourceKind.EXPRESSION),
    ("strategy:", SourceKind.SEMANTIC),
    ("ambient:", SourceKind.AMBIENT),
    ("memory:", SourceKind.MEMORY),
)


def source_kind(token: str, section_id: str | None = None) -> str:
    """The blame kind of one snapshot token (unknown kinds carry no weight)."""
    for prefix, kind in _PREFIX_KINDS:
        if token.startswith(prefix):
            return kind.value
    if section_id in _MEMORY_SECTIONS:
        return SourceKind.MEMORY.value
    head = token.split(":", 1)[0]
    return head or "unknown"


def snapshot_sources(data: Mapping[str, Any]) -> list[InjectedSource]:
    """Every source a stored snapshot says was injected (sections first, then messages)."""
    sources: list[InjectedSource] = []
    for section in data.get("sections") or ():
        section_id = str(section.get("id") or "")
        tokens = [str(t) for t in section.get("source_tokens") or () if t]
        if not tokens and section_id in _MEMORY_SECTIONS:
            tokens = [f"{section_id}:{m}" for m in section.get("memory_ids") or ()]
        sources += [InjectedSource(source_kind(t, section_id), t) for t in tokens]
    for message in data.get("messages") or ():
        token = str(message.get("source_token") or "")
        if token:
            sources.append(InjectedSource(source_kind(token), token))
    return sources


def pair_key_of(token: str) -> tuple[int, int] | None:
    """(trigger id, response id) of a `pair:bot:group:trigger:response` token."""
    parts = token.split(":")
    if len(parts) != 5 or parts[0] != "pair":
        return None
    try:
        return int(parts[3]), int(parts[4])
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class FeedbackHandling:
    handled: bool  # a negative-feedback signal (the chat plugin must not answer it)
    reason: str  # detection reason, or recorded / duplicate / reactivated
    outcome: FeedbackOutcome | None = None
    created: bool = False
    turn_id: str = ""
    recall_message_id: int | None = None  # the rejected line, when recalling is configured


class FeedbackConfigView(Protocol):
    """What negative feedback reads of a group's config (`GroupConfig` is one)."""

    @property
    def learning(self) -> LearningConfig: ...

    @property
    def admins(self) -> Sequence[int]: ...  # may say 不可以 besides the group's admins


@dataclass(frozen=True, slots=True)
class FeedbackStores:
    """What negative feedback reads and writes (built once by `pallas.app`)."""

    learning: LearningRepository
    feedback: FeedbackRepository
    snapshots: SnapshotRepository
    state: StateStore
    clock: Clock
    group_config: Callable[[int], FeedbackConfigView]
    superusers: frozenset[int] = frozenset()


def admin_ids(stores: FeedbackStores, group_id: int) -> frozenset[int]:
    group = stores.group_config(group_id)
    learning: LearningConfig = group.learning
    return frozenset(stores.superusers) | set(learning.feedback_admin_ids) | set(group.admins)


async def _with_phrases(
    stores: FeedbackStores, bot_id: int, group_id: int, sources: Iterable[InjectedSource]
) -> list[InjectedSource]:
    """Blamed expression pairs carry their response text, so the phrase itself is blocked."""
    sources = list(sources)
    keys = [k for s in sources if s.kind == "expression" and (k := pair_key_of(s.source_id))]
    pairs = await stores.learning.pairs_by_keys(bot_id, group_id, keys)
    out = []
    for source in sources:
        key = pair_key_of(source.source_id) if source.kind == "expression" else None
        pair = pairs.get(key) if key else None
        out.append(
            InjectedSource(source.kind, source.source_id, pair.response_text) if pair else source
        )
    return out


async def handle_negative_feedback(
    stores: FeedbackStores, reply: StoredMessage, quoted: StoredMessage | None
) -> FeedbackHandling:
    config = stores.group_config(reply.group_id).learning
    # Outcomes decay on the app's clock (the one every reply turn reads), not the event's.
    reply = replace(reply, time=stores.clock.now())
    detection = detect_negative_feedback(
        reply,
        quoted,
        bot_id=reply.bot_id,
        admin_ids=admin_ids(stores, reply.group_id),
        negative_words=config.feedback_negative_words,
    )
    signal = detection.signal
    if signal is None:
        return FeedbackHandling(False, detection.reason)
    snapshot = await stores.snapshots.by_bot_message(
        signal.bot_id, signal.group_id, signal.bot_message_id
    )
    sources = snapshot_sources(snapshot.data) if snapshot is not None else []
    sources = await _with_phrases(stores, signal.bot_id, signal.group_id, sources)
    repo = stores.feedback
    existing = await repo.by_key(signal.key)
    record = record_feedback(
        signal,
        sources,
        existing=[existing.outcome] if existing is not None else [],
        weights=config.blame_weights.as_mapping(),
    )
    turn_id = snapshot.turn_id if snapshot is not None else ""
    if record.created:
        await repo.save(record.outcome, turn_id=turn_id)
        await bump_generation(stores.state, signal.group_id)
    log.info(
        "negative feedback %s on bot message %s in group %s by %s: %d blames, turn %s",
        record.reason,
        signal.bot_message_id,
        signal.group_id,
        signal.admin_id,
        len(record.outcome.blames),
        turn_id or "<no snapshot>",
    )
    return FeedbackHandling(
        handled=True,
        reason=record.reason,
        outcome=record.outcome,
        created=record.created,
        turn_id=turn_id,
        recall_message_id=signal.bot_message_id if config.feedback_recall else None,
    )


def recall_allowed(*, bot_role: str, quoted_time: float, now: float) -> bool:
    return should_recall_bot_message(bot_role=bot_role, message_age_seconds=now - quoted_time)


@dataclass(frozen=True, slots=True)
class UndoReport:
    undone: tuple[StoredFeedback, ...]
    reason: str  # undone | not_found | already_undone | no_target


async def undo_negative_feedback(
    stores: FeedbackStores,
    bot_id: int,
    group_id: int,
    *,
    bot_message_id: int | None = None,
    feedback_id: int | None = None,
) -> UndoReport:
    """Undo every active outcome on one bot line (or one outcome by id) of this group."""
    repo = stores.feedback
    if feedback_id is not None:
        found = await repo.by_id(bot_id, group_id, feedback_id)
        targets = [found] if found is not None else []
    elif bot_message_id is not None:
        targets = await repo.for_group(bot_id, group_id, bot_message_id=bot_message_id)
    else:
        return UndoReport((), "no_target")
    if not targets:
        return UndoReport((), "not_found")
    active = [t for t in targets if t.outcome.active]
    if not active:
        return UndoReport((), "already_undone")
    now = stores.clock.now()
    for item in active:
        await repo.set_undone(item.id, now)
    await bump_generation(stores.state, group_id)
    log.info("negative feedback undone in group %s: %s", group_id, [t.id for t in active])
    return UndoReport(tuple(active), "undone")
