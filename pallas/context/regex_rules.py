"""Regex rules (the `regex` processor): pattern → replacement over messages or the answer.

Three levels, applied in this order so later levels win (they see the earlier results, and a
rule with the same `name` replaces the earlier one): global (`config/regex/*.toml`, files in
name order) → the persona pack (`[[regex]]`) → the group file (`[[context_rules.regex]]`).

Each rule: `pattern`, `replacement` (``$1`` / ``$<name>`` / ``$&`` or ``\\1`` / ``\\g<name>``
group references; `{{macros}}` in the literal parts are expanded), `flags` (``i m s x``),
`roles` (user / assistant / system; empty = all), a depth range counted from the newest
message (`min_depth` 0 = the current message; `max_depth = 4` = "the last 5 messages"), and
`stage`: ``request`` (what the model sees) or ``output`` (the model's answer, before it is
split into bubbles).

Patterns are compiled once per rule set (cached by content); a pattern that does not compile is
a validation error naming the rule, so the config loader rejects the file and keeps its last
good version. Matching uses the `regex` package's `timeout`: a catastrophic pattern costs about
`timeout_ms` per text and is then skipped for that text (reported in the trace); after
`MAX_TIMEOUTS` timeouts the rule is skipped until its config changes, so a ReDoS rule cannot
slow every turn.
"""

from __future__ import annotations

import logging
import re as std_re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import regex
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from pallas.context.macros import MacroEnv, expand

log = logging.getLogger("pallas.context.regex")

Stage = Literal["request", "output"]
Role = Literal["user", "assistant", "system"]
_FLAGS = {"i": regex.IGNORECASE, "m": regex.MULTILINE, "s": regex.DOTALL, "x": regex.VERBOSE}
_GROUP_REF = std_re.compile(r"\$(\d{1,2}|&|<([A-Za-z_]\w*)>)|\\(\d{1,2})|\\g<(\w+)>|\\\\")
DEFAULT_TIMEOUT_MS = 50
# A rule that timed out this many times is skipped until its config changes (logged once).
MAX_TIMEOUTS = 3
_timeouts: dict[tuple[str, str, str], int] = {}


class RegexRuleConfig(BaseModel):
    """One `[[regex]]` table (global file, persona pack) or `[[context_rules.regex]]`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=64)
    pattern: str = Field(min_length=1, max_length=2000)
    replacement: str = Field(default="", max_length=4000)
    flags: str = ""
    roles: tuple[Role, ...] = ()  # empty = every role
    min_depth: int = Field(default=0, ge=0)
    max_depth: int | None = Field(default=None, ge=0)  # None = unlimited
    stage: Stage = "request"
    enabled: bool = True

    @field_validator("flags")
    @classmethod
    def _flags(cls, value: str) -> str:
        bad = sorted(set(value) - set(_FLAGS) - {"g"})
        if bad:
            raise ValueError(f"unknown regex flag(s) {''.join(bad)!r}; use i, m, s, x")
        return value

    @model_validator(mode="after")
    def _compiles(self) -> RegexRuleConfig:
        if self.max_depth is not None and self.max_depth < self.min_depth:
            raise ValueError(f"rule {self.name!r}: max_depth < min_depth")
        try:
            _compile(self.pattern, self.flags)
        except regex.error as exc:
            raise ValueError(f"rule {self.name!r}: pattern does not compile: {exc}") from None
        return self


@lru_cache(maxsize=1024)
def _compile(pattern: str, flags: str) -> regex.Pattern[str]:
    value = 0
    for flag in flags:
        value |= _FLAGS.get(flag, 0)
    return regex.compile(pattern, value)


@dataclass(frozen=True, slots=True)
class CompiledRule:
    name: str
    origin: str  # "global:<file>" | "persona" | "group"
    pattern: regex.Pattern[str]
    template: tuple[str | int, ...]  # literal parts (macros unexpanded) and group refs
    roles: frozenset[str]
    min_depth: int
    max_depth: int | None
    stage: str

    def applies(self, role: str, depth: int) -> bool:
        if self.roles and role not in self.roles:
            return False
        return depth >= self.min_depth and (self.max_depth is None or depth <= self.max_depth)


def parse_template(replacement: str) -> tuple[str | int | tuple[str], ...]:
    """Split a replacement into literal text and group references (int index / (name,))."""
    parts: list[str | int | tuple[str]] = []
    last = 0
    for match in _GROUP_REF.finditer(replacement):
        parts.append(replacement[last : match.start()])
        last = match.end()
        token = match.group(0)
        if token == "\\\\":
            parts.append("\\")
        elif token == "$&":
            parts.append(0)
        elif match.group(4) and match.group(4).isdigit():
            parts.append(int(match.group(4)))
        elif match.group(2) or match.group(4):
            parts.append(((match.group(2) or match.group(4)),))
        else:
            parts.append(int(match.group(1) or match.group(3)))
    parts.append(replacement[last:])
    return tuple(p for p in parts if p != "")


def compile_rule(config: RegexRuleConfig, origin: str) -> CompiledRule:
    return CompiledRule(
        name=config.name,
        origin=origin,
        pattern=_compile(config.pattern, config.flags),
        template=parse_template(config.replacement),  # type: ignore[arg-type]
        roles=frozenset(config.roles),
        min_depth=config.min_depth,
        max_depth=config.max_depth,
        stage=config.stage,
    )


@dataclass(frozen=True, slots=True)
class RuleSet:
    """The effective, compiled rules of one group (later levels already win)."""

    rules: tuple[CompiledRule, ...] = ()
    timeout_ms: int = DEFAULT_TIMEOUT_MS

    def for_stage(self, stage: str) -> tuple[CompiledRule, ...]:
        return tuple(r for r in self.rules if r.stage == stage)


def merge_levels(
    levels: Iterable[tuple[str, Sequence[RegexRuleConfig]]],
) -> tuple[tuple[str, RegexRuleConfig], ...]:
    """Rules of all levels in order; a later rule with the same name replaces the earlier."""
    merged: dict[str, tuple[str, RegexRuleConfig]] = {}
    for origin, rules in levels:
        for rule in rules:
            merged.pop(rule.name, None)
            merged[rule.name] = (origin, rule)
    return tuple(v for v in merged.values() if v[1].enabled)


@lru_cache(maxsize=256)
def _build(items: tuple[tuple[str, RegexRuleConfig], ...], timeout_ms: int) -> RuleSet:
    return RuleSet(tuple(compile_rule(rule, origin) for origin, rule in items), timeout_ms)


def build_rule_set(
    levels: Iterable[tuple[str, Sequence[RegexRuleConfig]]],
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
) -> RuleSet:
    """Compiled once per distinct rule content (frozen configs hash by value)."""
    return _build(merge_levels(levels), timeout_ms)


@dataclass(frozen=True, slots=True)
class RuleHit:
    rule: str
    count: int = 0
    timed_out: bool = False


def _render(template: tuple[str | int | tuple[str], ...], env: MacroEnv | None, m) -> str:  # type: ignore[no-untyped-def]
    out: list[str] = []
    for part in template:
        if isinstance(part, str):
            out.append(expand(part, env))
        else:
            try:
                out.append(m.group(part[0] if isinstance(part, tuple) else part) or "")
            except (IndexError, regex.error):
                out.append("")
    return "".join(out)


def apply_rules(
    text: str,
    rules: Sequence[CompiledRule],
    *,
    role: str,
    depth: int,
    env: MacroEnv | None = None,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
) -> tuple[str, tuple[RuleHit, ...]]:
    """`text` with every applicable rule applied in order, and what each rule did."""
    hits: list[RuleHit] = []
    timeout = max(timeout_ms, 1) / 1000
    for rule in rules:
        if not rule.applies(role, depth):
            continue
        key = (rule.origin, rule.name, rule.pattern.pattern)
        if _timeouts.get(key, 0) >= MAX_TIMEOUTS:
            hits.append(RuleHit(rule.name, 0, True))
            continue
        try:
            text, count = rule.pattern.subn(
                lambda m, r=rule: _render(r.template, env, m), text, timeout=timeout
            )
        except TimeoutError:
            _timeouts[key] = strikes = _timeouts.get(key, 0) + 1
            if strikes == 1 or strikes == MAX_TIMEOUTS:
                log.error(
                    "regex rule %s (%s) timed out (%d/%d)%s",
                    rule.name,
                    rule.origin,
                    strikes,
                    MAX_TIMEOUTS,
                    "; skipped until its config changes" if strikes == MAX_TIMEOUTS else "",
                )
            hits.append(RuleHit(rule.name, 0, True))
            continue
        if count:
            hits.append(RuleHit(rule.name, count))
    return text, tuple(hits)
