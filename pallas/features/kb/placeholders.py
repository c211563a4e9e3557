"""Pure parsing and activation of knowledge placeholders.

    【kb】 / 【knowledge】                          defaults from `[kb]`
    【kb::库名::数量::最低分::模式::参数】          any field may be left empty

Modes: `always` (every turn), `gate` (only when the message contains one of the keywords in
参数, separated by `|` or `,`), `turn` (every N-th reply turn of the group, N = 参数, counting
from the first), `static` (the named entries in 参数 — file stems / keys — no retrieval).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pallas.features.kb.config import KnowledgePlaceholderConfig

PLACEHOLDER_RE = re.compile(r"【(?:kb|knowledge)(?:::[^】\n]{0,200})?】", re.IGNORECASE)
MODES = ("always", "gate", "turn", "static")
_SPLIT = re.compile(r"[|,，、/]+")


@dataclass(frozen=True, slots=True)
class KbPlaceholder:
    raw: str
    pool: str
    count: int
    min_score: float
    mode: str
    param: str = ""
    error: str = ""

    @property
    def terms(self) -> tuple[str, ...]:
        return tuple(t.strip() for t in _SPLIT.split(self.param) if t.strip())


@dataclass(frozen=True, slots=True)
class Activation:
    active: bool
    reason: str


def parse_placeholder(raw: str, config: KnowledgePlaceholderConfig) -> KbPlaceholder:
    inner = raw[1:-1]
    fields = inner.split("::")[1:]
    fields += [""] * (5 - len(fields))
    pool, count, score, mode, param = (f.strip() for f in fields[:5])
    if len(fields) > 5:  # a `::` inside the parameter
        param = "::".join(f.strip() for f in fields[4:])
    error = ""
    try:
        n = int(count) if count else config.default_count
    except ValueError:
        n, error = config.default_count, "bad_count"
    try:
        min_score = float(score) if score else config.default_min_score
    except ValueError:
        min_score, error = config.default_min_score, "bad_min_score"
    mode = (mode or "always").lower()
    if mode not in MODES:
        mode, error = "always", f"unknown_mode:{mode}"
    return KbPlaceholder(
        raw=raw,
        pool=pool or config.default_pool,
        count=max(1, min(n, 20)),
        min_score=max(0.0, min_score),
        mode=mode,
        param=param,
        error=error,
    )


def find_placeholders(text: str) -> list[str]:
    return [m.group(0) for m in PLACEHOLDER_RE.finditer(text)]


def decide_activation(ph: KbPlaceholder, *, query: str, turn_index: int) -> Activation:
    """Whether this placeholder retrieves anything on this turn."""
    if ph.mode == "always":
        return Activation(True, "always")
    if ph.mode == "static":
        return Activation(True, "static")
    if ph.mode == "gate":
        terms = ph.terms
        if not terms:
            return Activation(False, "gate_without_keywords")
        low = query.casefold()
        hit = next((t for t in terms if t.casefold() in low), None)
        return Activation(hit is not None, f"gate_hit:{hit}" if hit else "gate_miss")
    try:
        every = max(1, int(ph.param or "1"))
    except ValueError:
        every = 1
    if turn_index <= 0:
        return Activation(False, "turn_unknown")
    active = (turn_index - 1) % every == 0
    return Activation(active, f"turn_{turn_index}_every_{every}")
