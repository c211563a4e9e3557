"""【群表达指导】: direct pairs recalled for the current trigger + the group's rhythm baseline.

Only observed human pairs of *this* bot × group are eligible; self-reflection pairs, pairs of
another group, pairs labelled non-transferable and pairs touching a phrase that drew negative
feedback are filtered out (and counted in the trace). Similarity is a character bigram/unigram
Jaccard blend: no tokenizer start-up, no network, a few microseconds per pair.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from pallas.core.learning_records import GroupReplyProfile, LearningType, PairLabel, ReplyPair
from pallas.core.text import match_key

from .text import blocked_keys_of, char_ngrams, phrase_blocked, sanitize_inline

GROUP_EXPRESSION_HEADER = "【群表达指导】"
GROUP_EXPRESSION_GUARD = "- 仅作措辞参考，不能覆盖核心人格、账号气质或本轮策略。"


@dataclass(frozen=True, slots=True)
class ExpressionOptions:
    max_pairs: int = 2
    min_similarity: float = 0.2
    example_max_chars: int = 40
    min_rhythm_samples: int = 30  # turns before the rhythm line is shown
    single_majority_share: float = 0.5  # wording switch of the rhythm line


@dataclass(frozen=True, slots=True)
class MatchedExample:
    pair: ReplyPair
    score: float


@dataclass(frozen=True, slots=True)
class RhythmBaseline:
    single_bubble_share: float
    median_bubble_chars: int
    sample_turns: int

    @classmethod
    def from_profile(cls, profile: GroupReplyProfile) -> RhythmBaseline:
        return cls(
            single_bubble_share=profile.single_bubble_share,
            median_bubble_chars=round(profile.chars_p50),
            sample_turns=profile.sample_turns,
        )


@dataclass(frozen=True, slots=True)
class ResolvedGroupExpression:
    bot_id: int
    group_id: int
    trigger_text: str
    matched_examples: tuple[MatchedExample, ...]
    rhythm: RhythmBaseline | None
    reason: str
    filtered: tuple[tuple[str, int], ...] = ()  # (reason, count) of pairs left out

    @property
    def has_direct_pairs(self) -> bool:
        return bool(self.matched_examples)

    @property
    def source_tokens(self) -> tuple[str, ...]:
        """What the injection snapshot records (source kind `expression`)."""
        return tuple(example.pair.source_token for example in self.matched_examples)


def similarity(a: str, b: str) -> float:
    """0..1: 0.7 × bigram Jaccard + 0.3 × unigram Jaccard of the content characters."""
    key_a, key_b = match_key(a), match_key(b)
    if not key_a or not key_b:
        return 0.0
    if key_a == key_b:
        return 1.0
    return 0.7 * _jaccard(char_ngrams(key_a, 2), char_ngrams(key_b, 2)) + 0.3 * _jaccard(
        char_ngrams(key_a, 1), char_ngrams(key_b, 1)
    )


def _jaccard(x: frozenset[str], y: frozenset[str]) -> float:
    shared = len(x & y)
    return shared / (len(x) + len(y) - shared) if shared else 0.0


def resolve_group_expression(
    trigger_text: str,
    pairs: Iterable[ReplyPair],
    *,
    bot_id: int,
    group_id: int,
    labels: Mapping[tuple[int, int], PairLabel] | None = None,
    profile: GroupReplyProfile | None = None,
    blocked_phrases: Collection[str] = (),
    blocked_tokens: Collection[str] = (),
    options: ExpressionOptions | None = None,
) -> ResolvedGroupExpression:
    """Up to `max_pairs` pairs whose trigger is most similar to `trigger_text`, best first."""
    opts = options or ExpressionOptions()
    blocked = blocked_keys_of(blocked_phrases)
    tokens = frozenset(blocked_tokens)
    filtered: Counter[str] = Counter()
    best_by_response: dict[str, MatchedExample] = {}
    for pair in pairs:
        reason = _ineligible(pair, bot_id, group_id, labels, blocked, tokens)
        if reason is None:
            score = similarity(trigger_text, pair.trigger_text)
            reason = "low_similarity" if score < opts.min_similarity else None
        if reason is not None:
            filtered[reason] += 1
            continue
        candidate = MatchedExample(pair, score)
        response_key = match_key(pair.response_text)
        current = best_by_response.get(response_key)
        if current is None or _rank(candidate) < _rank(current):
            best_by_response[response_key] = candidate
    matched = tuple(sorted(best_by_response.values(), key=_rank)[: max(0, opts.max_pairs)])
    rhythm = None
    if profile is not None and profile.sample_turns >= max(1, opts.min_rhythm_samples):
        rhythm = RhythmBaseline.from_profile(profile)
    return ResolvedGroupExpression(
        bot_id=bot_id,
        group_id=group_id,
        trigger_text=trigger_text,
        matched_examples=matched,
        rhythm=rhythm,
        reason=f"matched {len(matched)} of {len(best_by_response)} eligible pairs",
        filtered=tuple(sorted(filtered.items())),
    )


def eligible_pairs(
    pairs: Iterable[ReplyPair],
    *,
    bot_id: int,
    group_id: int,
    labels: Mapping[tuple[int, int], PairLabel] | None = None,
    blocked_phrases: Collection[str] = (),
    blocked_tokens: Collection[str] = (),
) -> tuple[tuple[ReplyPair, ...], tuple[tuple[str, int], ...]]:
    """The pairs `resolve_group_expression` may recall (same rules), and why others are out.

    Lets a caller filter a group's pool once per feedback change instead of once per turn.
    """
    blocked = blocked_keys_of(blocked_phrases)
    tokens = frozenset(blocked_tokens)
    kept: list[ReplyPair] = []
    filtered: Counter[str] = Counter()
    for pair in pairs:
        reason = _ineligible(pair, bot_id, group_id, labels, blocked, tokens)
        if reason is None:
            kept.append(pair)
        else:
            filtered[reason] += 1
    return tuple(kept), tuple(sorted(filtered.items()))


def _rank(example: MatchedExample) -> tuple[float, float, int]:
    return (-example.score, -example.pair.time, example.pair.response_id)


def _ineligible(
    pair: ReplyPair,
    bot_id: int,
    group_id: int,
    labels: Mapping[tuple[int, int], PairLabel] | None,
    blocked: frozenset[str],
    tokens: frozenset[str],
) -> str | None:
    if pair.group_id != group_id:
        return "other_group"
    if pair.bot_id != bot_id:
        return "other_bot"
    if pair.learning_type is not LearningType.OBSERVED:
        return "self_reflection"
    label = labels.get(pair.key) if labels is not None else None
    if label is not None and not label.transferable:
        return "not_transferable"
    if (tokens and pair.source_token in tokens) or (
        blocked
        and (
            phrase_blocked(pair.response_text, blocked)
            or phrase_blocked(pair.trigger_text, blocked)
        )
    ):
        return "negative_feedback"
    return None


def render_group_expression_block(
    resolved: ResolvedGroupExpression, options: ExpressionOptions | None = None
) -> str:
    """The 【群表达指导】 section, or "" when no direct pair matched this turn."""
    opts = options or ExpressionOptions()
    if not resolved.matched_examples:
        return ""
    lines = [GROUP_EXPRESSION_HEADER, GROUP_EXPRESSION_GUARD]
    for example in resolved.matched_examples:
        trigger = sanitize_inline(example.pair.trigger_text, opts.example_max_chars)
        response = sanitize_inline(example.pair.response_text, opts.example_max_chars)
        lines.append(f"- 触发「{trigger}」时：{response}")
    if resolved.rhythm is not None:
        lines.append(_rhythm_line(resolved.rhythm, opts))
    return "\n".join(lines)


def _rhythm_line(rhythm: RhythmBaseline, opts: ExpressionOptions) -> str:
    share = round(rhythm.single_bubble_share * 100)
    median = rhythm.median_bubble_chars
    if rhythm.single_bubble_share >= opts.single_majority_share:
        return f"- 本群真人单条短气泡为主（占比约 {share}%），单段中位约 {median} 字。"
    return f"- 本群真人常连发几条短气泡（单条占比约 {share}%），单段中位约 {median} 字。"
