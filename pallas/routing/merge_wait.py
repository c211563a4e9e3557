"""Whether an addressed message waits the merge window before its LLM request.

The merge window (`[chat] merge_window_s`) folds a member's quick follow-up lines into the same
turn. Waiting it on every message costs every reply its full length, so the window is waited
only when the message looks unfinished:

    bare_address     "@牛牛" / "牛牛" with nothing else (the question is coming)
    trailing_comma   ends with ， , 、 ： ; — the sentence goes on
    ellipsis         ends with … / ... / 。。。
    connective       a dangling 然后 / 还有 / 而且 / 因为 … or a lone opener (我想问 / 请问 …)
    awaits_picture   "这是啥" / "看看这个" without a picture (QQ users send the picture next)
    burst            the member sent ≥ `burst_min_lines` lines within `burst_window_s`, and one
                     of their earlier ones read unfinished ("我跟你说，" … "@牛牛 我昨天…")

A complete question or request (`complete_question`: "@牛牛 你知道番茄炒蛋怎么做吗") is never
held by the burst rule: in a busy group nearly every member has sent a line in the last few
seconds, and waiting the window for all of them made the busiest groups the slowest. Only the
asker's own lines count, and whether they read as finished — never the group's pace.
Everything else (`complete`) goes to the model at once. `mode = "always"` restores the old
behaviour (wait on every turn); a zero window never waits (`window_off`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from pallas.routing.text_signals import is_incomplete, is_question, is_request, meaningful_length

_COMMA_TAIL = tuple("，,、：:；;")
_ELLIPSIS_RE = re.compile(r"(?:…+|\.{2,}|。{2,}|～{2,}|~{2,})$")
_DEICTIC_RE = re.compile(
    r"^(?:这|这个|这张图|这张|这图|这些)(?:是|叫|是个|又是)?(?:啥|什么|谁|哪个|哪里|怎么样|咋样)"
    r"\S{0,3}$|"
    r"^(?:你)?(?:看看|看下|看一下|瞅瞅|帮我看看|帮我看下)(?:这个|这张图|这张|这图|这|图)\S{0,2}$"
)
_DEICTIC_MAX_CHARS = 12
_QUESTION_MIN_CHARS = 4  # "啥？" alone may still be the start of something


class MergeWaitConfig(BaseModel):
    """`[chat.merge_wait]`: when the merge window is actually waited."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["smart", "always"] = "smart"  # always: wait on every turn (old behaviour)
    burst_window_s: float = Field(default=4.0, ge=0, le=60)
    burst_min_lines: int = Field(default=2, ge=2, le=20)  # this line included


@dataclass(frozen=True, slots=True)
class MergeWaitDecision:
    wait_s: float
    reason: str

    @property
    def waits(self) -> bool:
        return self.wait_s > 0

    def to_log_dict(self) -> dict[str, object]:
        return {"wait_s": self.wait_s, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class OwnLine:
    """One of the member's own recent lines: when it arrived and whether it read finished."""

    at: float
    finished: bool = True


def lines_in_window(lines: Iterable[OwnLine], *, now: float, window_s: float) -> list[OwnLine]:
    """The member's lines that arrived within the last `window_s` (this one included)."""
    return [line for line in lines if 0 <= now - line.at <= window_s]


def reads_as_complete_question(text: str) -> bool:
    """A question or request that stands on its own ("你知道番茄炒蛋怎么做吗", "推荐部电影")."""
    plain = text.strip()
    if meaningful_length(plain) < _QUESTION_MIN_CHARS:
        return False
    return (is_question(plain) or is_request(plain)) and unfinished_reason(plain) is None


def unfinished_reason(text: str, *, has_picture: bool = False) -> str | None:
    """Why `text` (the content, @bot and alias removed) looks unfinished; None when complete."""
    plain = text.strip()
    if not plain:
        return None if has_picture else "bare_address"
    if plain.endswith(_COMMA_TAIL):
        return "trailing_comma"
    if _ELLIPSIS_RE.search(plain):
        return "ellipsis"
    if is_incomplete(plain):
        return "connective"
    if not has_picture and len(plain) <= _DEICTIC_MAX_CHARS and _DEICTIC_RE.search(plain):
        return "awaits_picture"
    return None


def needs_merge_wait(
    text: str,
    *,
    window_s: float,
    config: MergeWaitConfig,
    has_picture: bool = False,
    recent_lines: Iterable[OwnLine] = (),
    now: float = 0.0,
) -> MergeWaitDecision:
    """Wait `window_s` or not (0), with the reason. Pure: the member's own lines are given."""
    if window_s <= 0:
        return MergeWaitDecision(0.0, "window_off")
    if config.mode == "always":
        return MergeWaitDecision(window_s, "always")
    reason = unfinished_reason(text, has_picture=has_picture)
    if reason is not None:
        return MergeWaitDecision(window_s, reason)
    if reads_as_complete_question(text):
        return MergeWaitDecision(0.0, "complete_question")
    burst = lines_in_window(recent_lines, now=now, window_s=config.burst_window_s)
    if len(burst) >= config.burst_min_lines and not all(line.finished for line in burst):
        return MergeWaitDecision(window_s, "burst")
    return MergeWaitDecision(0.0, "complete")
