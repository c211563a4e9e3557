"""Rebuild reply pairs (trigger → response) from the stored messages of one bot × group.

Two kinds of pair:
- quote: message B quotes message A (`B.reply_to == A.message_id`);
- adjacent: B directly follows A within `adjacency_gap_seconds`, from a different speaker,
  and B quotes nothing (a quoting message answers what it quotes, not its neighbour).

Human pairs (`observed`) never involve a bot on either side: they are the only source of the
expression guidance. Pairs where a member reacts to *this* bot's line are kept apart as
`self_reflection` (接话复盘) and never feed the expression guidance. Lines of other known bots
are excluded from both.

Every message gets at most one pair as a response, so pairs are unique by response id (and hence
by (trigger id, response id)); a quote beats an adjacency for the same response.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from pallas.core.learning_records import LearningType, PairKind, ReplyPair
from pallas.core.records import StoredMessage
from pallas.core.text import clean_text

from .text import DEFAULT_BLOCKED_WORDS, DEFAULT_COMMAND_PREFIXES, noise_reason


@dataclass(frozen=True, slots=True)
class PairOptions:
    adjacency_gap_seconds: float = 120.0
    max_chars: int = 80
    blocked_words: tuple[str, ...] = DEFAULT_BLOCKED_WORDS
    command_prefixes: tuple[str, ...] = DEFAULT_COMMAND_PREFIXES
    other_bot_ids: frozenset[int] = field(default_factory=frozenset)


@dataclass(frozen=True, slots=True)
class PairBuildResult:
    observed: tuple[ReplyPair, ...]
    self_reflection: tuple[ReplyPair, ...]
    skipped: tuple[tuple[str, int], ...]  # (reason, count), reason-sorted: the trace
    scanned: int  # messages of this bot × group considered
    last_row_id: int  # highest row id seen: where the cursor may move once all pairs are stored

    def skipped_count(self, reason: str) -> int:
        return dict(self.skipped).get(reason, 0)

    @property
    def all_pairs(self) -> tuple[ReplyPair, ...]:
        return tuple(sorted(self.observed + self.self_reflection, key=_pair_order))


def _pair_order(pair: ReplyPair) -> tuple[float, int, int]:
    return (pair.time, pair.response_row_id, pair.response_id)


@dataclass(frozen=True, slots=True)
class _Line:
    msg: StoredMessage
    text: str
    noise: str | None
    speaker: str  # "self" | "other_bot" | "human"


@dataclass(frozen=True, slots=True)
class _Index:
    lines: Sequence[_Line]
    by_id: dict[int, _Line]
    positions: dict[int, int]


def build_reply_pairs(
    messages: Iterable[StoredMessage],
    *,
    bot_id: int,
    group_id: int,
    after_row_id: int = 0,
    options: PairOptions | None = None,
) -> PairBuildResult:
    """Pairs whose response row id is greater than `after_row_id`.

    Pass a little history before the cursor too (e.g. the previous 200 rows): it is used as
    quote/adjacency triggers only, so a restart resumes without redoing stored pairs.
    """
    opts = options or PairOptions()
    lines = _prepare(messages, bot_id=bot_id, group_id=group_id, opts=opts)
    index = _Index(
        lines=lines,
        by_id={line.msg.message_id: line for line in lines},
        positions={line.msg.message_id: i for i, line in enumerate(lines)},
    )
    skipped: Counter[str] = Counter()
    observed: list[ReplyPair] = []
    reflection: list[ReplyPair] = []
    for position, line in enumerate(lines):
        if after_row_id > 0 and line.msg.row_id <= after_row_id:
            continue
        pair_or_reason = _pair_for(position, line, index, opts)
        if isinstance(pair_or_reason, str):
            skipped[pair_or_reason] += 1
        elif pair_or_reason.learning_type is LearningType.OBSERVED:
            observed.append(pair_or_reason)
        else:
            reflection.append(pair_or_reason)
    return PairBuildResult(
        observed=tuple(_dedupe(observed)),
        self_reflection=tuple(_dedupe(reflection)),
        skipped=tuple(sorted(skipped.items())),
        scanned=len(lines),
        last_row_id=max((line.msg.row_id for line in lines), default=after_row_id),
    )


def _prepare(
    messages: Iterable[StoredMessage], *, bot_id: int, group_id: int, opts: PairOptions
) -> list[_Line]:
    seen: set[tuple[int, int]] = set()
    lines: list[_Line] = []
    for msg in messages:
        # a group's lines, whichever account of the deployment stored them (ids are per
        # account); learned under `bot_id`, the group's collector
        if msg.group_id != group_id or (msg.bot_id, msg.message_id) in seen:
            continue
        seen.add((msg.bot_id, msg.message_id))
        if msg.bot_id != bot_id:
            msg = replace(msg, bot_id=bot_id)
        noise = noise_reason(
            msg.text,
            max_chars=opts.max_chars,
            blocked_words=opts.blocked_words,
            command_prefixes=opts.command_prefixes,
        )
        if msg.sent_by:  # another NoneBot plugin's send: neither the persona's nor a member's
            speaker = "other_bot"
        elif msg.user_id == bot_id:
            speaker = "self"
        elif msg.is_bot or msg.user_id in opts.other_bot_ids:  # another account's line
            speaker = "other_bot"
        else:
            speaker = "human"
        lines.append(_Line(msg, clean_text(msg.text), noise, speaker))
    lines.sort(key=lambda line: (line.msg.time, line.msg.row_id))
    return lines


def _pair_for(position: int, line: _Line, index: _Index, opts: PairOptions) -> ReplyPair | str:
    """The pair answered by `line`, or the reason there is none."""
    if line.speaker != "human":
        return "response_is_bot"
    if line.noise:
        return f"response_{line.noise}"
    if line.msg.reply_to is not None:
        trigger = index.by_id.get(line.msg.reply_to)
        if trigger is None:
            return "quote_target_missing"
        kind = PairKind.QUOTE
    else:
        if position == 0:
            return "no_previous_message"
        trigger = index.lines[position - 1]
        if line.msg.time - trigger.msg.time > opts.adjacency_gap_seconds:
            return "adjacent_gap_too_long"
        kind = PairKind.ADJACENT
    if trigger.msg.user_id == line.msg.user_id:
        return "same_speaker"
    if trigger.speaker == "other_bot":
        return "trigger_is_other_bot"
    if trigger.noise:
        return f"trigger_{trigger.noise}"
    is_self = trigger.speaker == "self"
    return ReplyPair(
        trigger_id=trigger.msg.message_id,
        response_id=line.msg.message_id,
        trigger_text=trigger.text,
        response_text=line.text,
        kind=kind,
        trigger_user=trigger.msg.user_id,
        response_user=line.msg.user_id,
        time=line.msg.time,
        learning_type=LearningType.SELF_REFLECTION if is_self else LearningType.OBSERVED,
        bot_id=line.msg.bot_id,
        group_id=line.msg.group_id,
        response_row_id=line.msg.row_id,
        context_text=_answered_line(trigger, index, opts) if is_self else "",
    )


def _answered_line(bot_line: _Line, index: _Index, opts: PairOptions) -> str:
    """The member line the bot's line was answering (quoted, else directly before it)."""
    candidate: _Line | None = None
    if bot_line.msg.reply_to is not None:
        candidate = index.by_id.get(bot_line.msg.reply_to)
    else:
        position = index.positions[bot_line.msg.message_id]
        if position > 0:
            previous = index.lines[position - 1]
            if bot_line.msg.time - previous.msg.time <= opts.adjacency_gap_seconds:
                candidate = previous
    if candidate is None or candidate.speaker != "human" or candidate.noise:
        return ""
    return candidate.text


def _dedupe(pairs: Iterable[ReplyPair]) -> list[ReplyPair]:
    """One pair per response (quote preferred), unique (trigger id, response id)."""
    best: dict[int, ReplyPair] = {}
    for pair in pairs:
        current = best.get(pair.response_id)
        if current is None or (current.kind is PairKind.ADJACENT and pair.kind is PairKind.QUOTE):
            best[pair.response_id] = pair
    return sorted(best.values(), key=_pair_order)
