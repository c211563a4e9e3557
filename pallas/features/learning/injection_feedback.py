"""Negative feedback: an admin answers a bot line with 「不可以」 → blame what that turn injected.

Flow for the wiring layer:
1. `detect_negative_feedback(reply, quoted, ...)` on every group message that quotes something;
2. on a signal, load that bot message's injection snapshot and call `record_feedback(...)` with
   the stored outcomes of the same key (idempotent: one outcome per bot × group × bot message ×
   admin); store the returned outcome when `created`;
3. before building ambient excerpts / expression pools / strategies, call `blocked_phrases` and
   `blocked_tokens` over the stored outcomes and filter with them;
4. `undo_feedback` when an admin takes it back; `should_recall_bot_message` for the recall.

Penalties decay with a half-life (30 days by default): penalty(now) = Σ |weight| · 0.5^(age/T).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum

from pallas.core.learning_records import Blame, FeedbackKey, FeedbackOutcome
from pallas.core.records import StoredMessage
from pallas.core.text import clean_text, match_key


class SourceKind(StrEnum):
    AMBIENT = "ambient"  # 群环境摘录 / timeline lines
    EXPRESSION = "expression"  # 群表达指导 direct pairs
    SEMANTIC = "semantic"  # behaviour strategies (真人接话参考 / 接话复盘)
    MEMORY = "memory"  # memory / knowledge items
    BOT_LINE = "bot_line"  # the rejected bot line itself


DEFAULT_BLAME_WEIGHTS: Mapping[str, float] = {
    SourceKind.AMBIENT.value: -1.0,
    SourceKind.EXPRESSION.value: -3.0,
    SourceKind.SEMANTIC.value: -2.0,
    SourceKind.MEMORY.value: -1.0,
    SourceKind.BOT_LINE.value: -1.0,
}
DEFAULT_NEGATIVE_WORDS: tuple[str, ...] = ("不可以",)


@dataclass(frozen=True, slots=True)
class InjectedSource:
    """One entry of a turn's injection snapshot: what was injected, from where."""

    kind: str
    source_id: str
    phrase: str = ""  # the injected text, when the snapshot has it (used to block phrases)


@dataclass(frozen=True, slots=True)
class FeedbackSignal:
    bot_id: int
    group_id: int
    bot_message_id: int
    admin_id: int
    word: str
    time: float
    bot_text: str = ""

    @property
    def key(self) -> FeedbackKey:
        return (self.bot_id, self.group_id, self.bot_message_id, self.admin_id)


@dataclass(frozen=True, slots=True)
class FeedbackDetection:
    signal: FeedbackSignal | None
    reason: str


def detect_negative_feedback(
    reply: StoredMessage,
    quoted: StoredMessage | None,
    *,
    bot_id: int,
    admin_ids: Collection[int] = (),
    negative_words: Collection[str] = DEFAULT_NEGATIVE_WORDS,
    max_extra_chars: int = 4,
) -> FeedbackDetection:
    """Whether `reply` is an admin's negative word quoting one of this bot's messages.

    Admin = group owner/admin role, or a configured admin id (superuser). The text must be the
    word itself, optionally with a few extra chars around it (「牛牛不可以！」); questions
    (「为什么不可以？」) do not count.
    """
    if reply.reply_to is None:
        return FeedbackDetection(None, "not_a_reply")
    if quoted is None or quoted.message_id != reply.reply_to:
        return FeedbackDetection(None, "quoted_message_unknown")
    if (reply.bot_id, reply.group_id) != (quoted.bot_id, quoted.group_id) or reply.bot_id != bot_id:
        return FeedbackDetection(None, "other_bot_or_group")
    if quoted.sent_by or not (quoted.is_bot or quoted.user_id == bot_id):
        return FeedbackDetection(None, "quoted_not_bot")
    if reply.role not in ("owner", "admin") and reply.user_id not in admin_ids:
        return FeedbackDetection(None, "not_admin")
    word = matched_negative_word(reply.text, negative_words, max_extra_chars=max_extra_chars)
    if word is None:
        return FeedbackDetection(None, "no_negative_word")
    signal = FeedbackSignal(
        bot_id=bot_id,
        group_id=reply.group_id,
        bot_message_id=quoted.message_id,
        admin_id=reply.user_id,
        word=word,
        time=reply.time,
        bot_text=clean_text(quoted.text),
    )
    return FeedbackDetection(signal, "negative_feedback")


def matched_negative_word(
    text: str, negative_words: Collection[str], *, max_extra_chars: int = 4
) -> str | None:
    cleaned = clean_text(text)
    if "?" in cleaned or "？" in cleaned:
        return None
    key = match_key(cleaned)
    for word in negative_words:
        word_key = match_key(word)
        if not word_key or not key:
            continue
        near_edge = key.startswith(word_key) or key.endswith(word_key)
        if key == word_key or (near_edge and len(key) - len(word_key) <= max_extra_chars):
            return word
    return None


def attribute_blame(
    sources: Iterable[InjectedSource | tuple[str, str] | tuple[str, str, str]],
    weights: Mapping[str, float] = DEFAULT_BLAME_WEIGHTS,
) -> tuple[tuple[Blame, ...], tuple[str, ...]]:
    """Blames for the snapshot sources with a weight; kinds without one are returned as ignored."""
    blames: dict[tuple[str, str], Blame] = {}
    ignored: list[str] = []
    for raw in sources:
        source = raw if isinstance(raw, InjectedSource) else InjectedSource(*raw)
        weight = weights.get(source.kind)
        if weight is None or weight == 0:
            ignored.append(source.kind)
            continue
        blames.setdefault(
            (source.kind, source.source_id),
            Blame(source.kind, source.source_id, -abs(weight), source.phrase),
        )
    return tuple(blames.values()), tuple(sorted(set(ignored)))


@dataclass(frozen=True, slots=True)
class FeedbackRecord:
    outcome: FeedbackOutcome
    created: bool  # False: already recorded, nothing to store
    reason: str  # recorded | duplicate | reactivated


def record_feedback(
    signal: FeedbackSignal,
    snapshot: Iterable[InjectedSource | tuple[str, str] | tuple[str, str, str]],
    *,
    existing: Iterable[FeedbackOutcome] = (),
    weights: Mapping[str, float] = DEFAULT_BLAME_WEIGHTS,
) -> FeedbackRecord:
    """The outcome for `signal`; the same admin rejecting the same line again is a no-op."""
    previous = next((o for o in existing if o.key == signal.key), None)
    if previous is not None and previous.active:
        return FeedbackRecord(previous, created=False, reason="duplicate")
    sources = list(snapshot)
    if signal.bot_text and SourceKind.BOT_LINE.value in weights:
        sources.append(
            InjectedSource(SourceKind.BOT_LINE, str(signal.bot_message_id), signal.bot_text)
        )
    blames, ignored = attribute_blame(sources, weights)
    outcome = FeedbackOutcome(
        bot_id=signal.bot_id,
        group_id=signal.group_id,
        bot_message_id=signal.bot_message_id,
        admin_id=signal.admin_id,
        created_at=signal.time,
        word=signal.word,
        blames=blames,
        bot_text=signal.bot_text,
        ignored_sources=ignored,
    )
    if previous is not None:
        return FeedbackRecord(outcome, created=True, reason="reactivated")
    return FeedbackRecord(outcome, created=True, reason="recorded")


@dataclass(frozen=True, slots=True)
class UndoResult:
    outcome: FeedbackOutcome | None
    reason: str  # undone | not_found | already_undone


def undo_feedback(
    outcomes: Iterable[FeedbackOutcome], key: FeedbackKey, *, now: float
) -> UndoResult:
    found = next((o for o in outcomes if o.key == key), None)
    if found is None:
        return UndoResult(None, "not_found")
    if not found.active:
        return UndoResult(found, "already_undone")
    return UndoResult(replace(found, undone_at=now), "undone")


def source_penalties(
    outcomes: Iterable[FeedbackOutcome], *, now: float, half_life_days: float = 30.0
) -> dict[tuple[str, str], float]:
    """Decayed penalty per (kind, source id), summed over active outcomes."""
    totals: dict[tuple[str, str], float] = defaultdict(float)
    for outcome in outcomes:
        factor = outcome.decay(now, half_life_days)
        if factor <= 0:
            continue
        for blame in outcome.blames:
            totals[(blame.kind, blame.source_id)] += abs(blame.weight) * factor
    return dict(totals)


def phrase_penalties(
    outcomes: Iterable[FeedbackOutcome], *, now: float, half_life_days: float = 30.0
) -> dict[str, float]:
    """Decayed penalty per blamed phrase (keyed by the first spelling seen)."""
    spelled: dict[str, str] = {}
    totals: dict[str, float] = defaultdict(float)
    for outcome in outcomes:
        factor = outcome.decay(now, half_life_days)
        if factor <= 0:
            continue
        for blame in outcome.blames:
            key = match_key(blame.phrase)
            if key:
                spelled.setdefault(key, blame.phrase)
                totals[spelled[key]] += abs(blame.weight) * factor
    return dict(totals)


def blocked_phrases(
    outcomes: Iterable[FeedbackOutcome],
    *,
    now: float,
    threshold: float = 0.5,
    half_life_days: float = 30.0,
) -> frozenset[str]:
    """Phrases whose decayed penalty is still ≥ threshold: never inject them again."""
    penalties = phrase_penalties(outcomes, now=now, half_life_days=half_life_days)
    return frozenset(phrase for phrase, value in penalties.items() if value >= threshold)


def blocked_tokens(
    outcomes: Iterable[FeedbackOutcome],
    *,
    now: float,
    threshold: float = 0.5,
    half_life_days: float = 30.0,
) -> frozenset[str]:
    """Source ids / tokens whose decayed penalty is still ≥ threshold."""
    penalties = source_penalties(outcomes, now=now, half_life_days=half_life_days)
    return frozenset(source_id for (_, source_id), value in penalties.items() if value >= threshold)


def should_recall_bot_message(
    *, bot_role: str, message_age_seconds: float, self_recall_window_seconds: float = 120.0
) -> bool:
    """QQ lets a member recall its own line for 2 minutes; group admins/owners at any time."""
    return bot_role in ("owner", "admin") or message_age_seconds <= self_recall_window_seconds
