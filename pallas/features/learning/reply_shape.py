"""Group reply profile (how members of this group actually type) and the per-turn shape policy.

`build_reply_profile` turns the group's human messages into bubble statistics: a *turn* is a run
of consecutive messages by one speaker, each within `turn_gap_seconds` of the previous one; each
message of the run is a bubble. `decide_reply_shape` maps the profile (or the defaults, before
there are enough turns) to a `ReplyShapePolicy`, rendered every turn as 【回复形状与输出契约】.
The block constrains only segments, length, line breaks and the output contract, never attitude.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from pallas.core.learning_records import GroupReplyProfile
from pallas.core.records import StoredMessage
from pallas.core.text import clean_text

from .text import DEFAULT_COMMAND_PREFIXES


class Rhythm(StrEnum):
    SINGLE = "single"  # one bubble per turn dominates
    BURST = "burst"  # several short bubbles per turn dominate
    MIXED = "mixed"


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (q in 0..100); 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = (len(ordered) - 1) * min(100.0, max(0.0, q)) / 100.0
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def build_reply_profile(
    messages: Iterable[StoredMessage],
    *,
    bot_id: int,
    group_id: int,
    turn_gap_seconds: float = 20.0,
    other_bot_ids: frozenset[int] = frozenset(),
    max_bubble_chars: int = 200,
) -> GroupReplyProfile:
    """Bubble statistics of this group's human messages (bots' lines only break turns)."""
    turns: list[list[int]] = []  # chars per bubble, per turn
    last_user: int | None = None
    last_time = 0.0
    seen: set[int] = set()
    ordered = sorted(messages, key=lambda m: (m.time, m.row_id))
    for msg in ordered:
        if msg.bot_id != bot_id or msg.group_id != group_id or msg.message_id in seen:
            continue
        seen.add(msg.message_id)
        if msg.is_bot or msg.user_id == bot_id or msg.user_id in other_bot_ids:
            last_user = None
            continue
        text = clean_text(msg.text)
        if not text or text.startswith(DEFAULT_COMMAND_PREFIXES):
            continue
        chars = min(len(text), max_bubble_chars)
        if msg.user_id == last_user and msg.time - last_time <= turn_gap_seconds:
            turns[-1].append(chars)
        else:
            turns.append([chars])
        last_user, last_time = msg.user_id, msg.time
    counts = [float(len(turn)) for turn in turns]
    sizes = [float(c) for turn in turns for c in turn]
    return GroupReplyProfile(
        bot_id=bot_id,
        group_id=group_id,
        sample_turns=len(turns),
        sample_bubbles=len(sizes),
        bubbles_p50=percentile(counts, 50),
        bubbles_p90=percentile(counts, 90),
        chars_p50=percentile(sizes, 50),
        chars_p90=percentile(sizes, 90),
        single_bubble_share=(sum(1 for c in counts if c == 1) / len(counts)) if counts else 0.0,
    )


@dataclass(frozen=True, slots=True)
class ShapeBounds:
    min_segments: int
    max_segments: int
    min_chars: int
    max_chars: int


@dataclass(frozen=True, slots=True)
class ShapeOptions:
    casual: ShapeBounds = field(default_factory=lambda: ShapeBounds(1, 3, 4, 18))
    non_casual: ShapeBounds = field(default_factory=lambda: ShapeBounds(1, 2, 8, 80))
    tool: ShapeBounds = field(default_factory=lambda: ShapeBounds(1, 2, 8, 160))
    min_samples: int = 30  # turns before the learned profile is trusted
    hard_max_segments: int = 3
    casual_max_chars_clamp: tuple[int, int] = (8, 30)
    non_casual_max_chars_clamp: tuple[int, int] = (40, 120)
    non_casual_chars_factor: float = 3.0  # non-casual bubbles may run this × the group's p90
    single_share_for_single: float = 0.7
    single_share_for_burst: float = 0.4


@dataclass(frozen=True, slots=True)
class ReplyShapePolicy:
    max_segments: int
    recommended_segments: int
    min_chars: int
    max_chars: int
    rhythm: Rhythm
    casual: bool
    reason: str
    learned: bool = False
    tool: bool = False


def _clamp(value: float, low: int, high: int) -> int:
    return int(min(high, max(low, value)))


def rhythm_of(profile: GroupReplyProfile, options: ShapeOptions) -> Rhythm:
    if profile.single_bubble_share >= options.single_share_for_single:
        return Rhythm.SINGLE
    if profile.single_bubble_share <= options.single_share_for_burst:
        return Rhythm.BURST
    return Rhythm.MIXED


def is_profile_trusted(profile: GroupReplyProfile | None, options: ShapeOptions) -> bool:
    return profile is not None and profile.sample_turns >= max(1, options.min_samples)


def decide_reply_shape(
    profile: GroupReplyProfile | None,
    *,
    casual: bool,
    tool: bool = False,
    options: ShapeOptions | None = None,
) -> ReplyShapePolicy:
    """The shape contract of this turn: defaults until the group profile has enough turns."""
    opts = options or ShapeOptions()
    base = opts.tool if tool else (opts.casual if casual else opts.non_casual)
    mode = "tool" if tool else ("casual" if casual else "non_casual")
    if profile is None or not is_profile_trusted(profile, opts):
        samples = 0 if profile is None else profile.sample_turns
        return ReplyShapePolicy(
            max_segments=base.max_segments,
            recommended_segments=base.min_segments,
            min_chars=base.min_chars,
            max_chars=base.max_chars,
            rhythm=Rhythm.MIXED if casual and not tool else Rhythm.SINGLE,
            casual=casual,
            reason=f"{mode}_defaults: {samples} turns < min_samples {opts.min_samples}",
            tool=tool,
        )
    return _learned_shape(profile, base, mode, casual=casual, tool=tool, opts=opts)


def _learned_shape(
    profile: GroupReplyProfile,
    base: ShapeBounds,
    mode: str,
    *,
    casual: bool,
    tool: bool,
    opts: ShapeOptions,
) -> ReplyShapePolicy:
    rhythm = rhythm_of(profile, opts)
    hard_max = max(1, opts.hard_max_segments)
    max_segments = _clamp(math.ceil(profile.bubbles_p90), 1, hard_max)
    if tool:
        max_segments = min(max_segments, base.max_segments)
        min_chars, max_chars = base.min_chars, base.max_chars
    elif casual:
        low, high = opts.casual_max_chars_clamp
        max_chars = _clamp(math.ceil(profile.chars_p90), low, high)
        min_chars = _clamp(round(profile.chars_p50 / 2), 1, base.min_chars)
    else:
        low, high = opts.non_casual_max_chars_clamp
        max_chars = _clamp(math.ceil(profile.chars_p90 * opts.non_casual_chars_factor), low, high)
        min_chars = base.min_chars
    if rhythm is Rhythm.SINGLE:
        recommended = 1
    elif rhythm is Rhythm.BURST:
        recommended = max(2, round(profile.bubbles_p50))
    else:
        recommended = round(profile.bubbles_p50)
    recommended = _clamp(recommended, 1, max_segments)
    return ReplyShapePolicy(
        max_segments=max_segments,
        recommended_segments=recommended,
        min_chars=min(min_chars, max_chars),
        max_chars=max_chars,
        rhythm=rhythm,
        casual=casual,
        reason=(
            f"{mode}_learned: {profile.sample_turns} turns, bubbles p50/p90 "
            f"{profile.bubbles_p50:g}/{profile.bubbles_p90:g}, chars p50/p90 "
            f"{profile.chars_p50:g}/{profile.chars_p90:g}, single {profile.single_bubble_share:.0%}"
        ),
        learned=True,
        tool=tool,
    )


REPLY_SHAPE_HEADER = "【回复形状与输出契约】"


def render_reply_shape_block(policy: ReplyShapePolicy) -> str:
    """The 【回复形状与输出契约】 system-prompt section (injected every turn)."""
    lines = [
        REPLY_SHAPE_HEADER,
        f"- 最多 {policy.max_segments} 段；推荐 {policy.recommended_segments} 段，"
        f"节奏偏 {policy.rhythm.value}。",
        f"- 每段约 {policy.min_chars}–{policy.max_chars} 字。",
        "- 一段一行：每个气泡单独占一行，不要编号，不要加引号或说话人前缀。",
        "- 这轮不想接话就只输出 PASS（单独一行，不带任何其他内容）。",
    ]
    return "\n".join(lines)
