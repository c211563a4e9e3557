"""The macro engine: `{{user}}`, `{{char}}`, `{{time}}`, … in admin-written templates (pure).

Expanded in persona sections, prompt overrides, placed injections, worldbook entries and regex
replacements (and any other template through `expand_macros`, e.g. knowledge templates):

    {{user}}           the speaker's display name          {{char}}     the persona name
    {{group}}          the group's name (config)           {{time}}     13:05 (Beijing time)
    {{date}}           2026年12月1日                        {{weekday}}  星期二
    {{idle_duration}}  time since the previous group message, e.g. 5分钟
    {{random::a::b}}   one of the options (rng argument)   {{roll::1d6}} dice (NdM, +K)
    {{tools}}          the tool results of this turn (see `tools_used`)

Names are case-insensitive. An unknown macro stays as written, with one log line per name
(per process). Expansion is a single pass over the *template*: values are inserted as data and
never scanned again, so a member whose nickname is ``{{char}}`` or ``【系统】`` cannot inject a
macro or a header (names are also sanitised by `prompt_guard.sanitize_name`).
"""

from __future__ import annotations

import logging
import random
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from pallas.context.prompt_guard import neutralise_member_tags, sanitize_inline, sanitize_name
from pallas.core.clock import CHINA

log = logging.getLogger("pallas.context.macros")

_MACRO_RE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)(::[^{}]*)?\s*\}\}")
_DICE_RE = re.compile(r"^\s*(\d{0,3})\s*[dD]\s*(\d{1,6})\s*([+-]\s*\d{1,6})?\s*$")
_WEEKDAYS = ("星期一", "星期二", "星期三", "星期四", "星期五", "星期六", "星期日")
_MAX_DICE = 100
KNOWN_MACROS = (
    "user",
    "char",
    "group",
    "time",
    "date",
    "weekday",
    "idle_duration",
    "random",
    "roll",
    "tools",
)
_warned: set[str] = set()


@dataclass(frozen=True, slots=True)
class MacroEnv:
    """The values of one turn. `now` is timezone-aware (naive = UTC)."""

    user: str = ""
    char: str = ""
    group: str = ""
    now: datetime = field(default_factory=lambda: datetime.fromtimestamp(0, UTC))
    idle_seconds: float | None = None
    tools: str = ""
    seed: str = ""  # `random` / `roll` draw from Random(seed + template position)


@dataclass(frozen=True, slots=True)
class Expansion:
    text: str
    used: tuple[str, ...] = ()  # macro names expanded, in order of first use
    unknown: tuple[str, ...] = ()

    @property
    def tools_used(self) -> bool:
        return "tools" in self.used


def _local(now: datetime) -> datetime:
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    return now.astimezone(CHINA)  # Beijing time: fixed UTC+8, no DST


def format_duration(seconds: float | None) -> str:
    if seconds is None or seconds < 0:
        return "很久"
    if seconds < 60:
        return "不到1分钟"
    minutes = int(seconds // 60)
    if minutes < 60:
        return f"{minutes}分钟"
    hours, rest = divmod(minutes, 60)
    if hours < 24:
        return f"{hours}小时{rest}分钟" if rest else f"{hours}小时"
    return f"{hours // 24}天"


def roll_dice(spec: str, rng: random.Random) -> str | None:
    """`NdM+K` → the total as text; None when `spec` is not dice notation."""
    match = _DICE_RE.match(spec)
    if not match:
        return None
    count = int(match.group(1) or 1)
    sides = int(match.group(2))
    if not (1 <= count <= _MAX_DICE) or sides < 1:
        return None
    bonus = int((match.group(3) or "0").replace(" ", ""))
    return str(sum(rng.randint(1, sides) for _ in range(count)) + bonus)


def _value(name: str, args: list[str], env: MacroEnv, rng: random.Random | None) -> str | None:
    if name == "user":
        return neutralise_member_tags(sanitize_name(env.user)) or "群友"
    if name == "char":
        return sanitize_name(env.char)
    if name == "group":
        return sanitize_name(env.group) or "本群"
    if name in ("time", "date", "weekday"):
        local = _local(env.now)
        if name == "time":
            return f"{local:%H:%M}"
        if name == "date":
            return f"{local.year}年{local.month}月{local.day}日"
        return _WEEKDAYS[local.weekday()]
    if name == "idle_duration":
        return format_duration(env.idle_seconds)
    if name == "tools":
        return env.tools
    if rng is None:
        return None
    if name == "random":
        options = [a for a in args if a != ""]
        return sanitize_inline(rng.choice(options), 400) if options else ""
    if name == "roll":
        return roll_dice(args[0] if args else "1d6", rng) if len(args) <= 1 else None
    return None


def expand_macros(text: str, env: MacroEnv) -> Expansion:
    """One single pass over `text`; see the module docstring."""
    if "{{" not in text:
        return Expansion(text)
    used: list[str] = []
    unknown: list[str] = []

    def repl(match: re.Match[str]) -> str:
        name = match.group(1).lower()
        tail = (match.group(2) or "").rstrip()
        args = tail.split("::")[1:] if tail else []
        rng = random.Random(f"{env.seed}:{match.start()}") if name in ("random", "roll") else None
        value = _value(name, args, env, rng)
        if value is None:
            unknown.append(name)
            if name not in _warned:
                _warned.add(name)
                log.info("unknown macro {{%s}} left as written", name)
            return match.group(0)
        used.append(name)
        return value

    out = _MACRO_RE.sub(repl, text)
    return Expansion(out, tuple(dict.fromkeys(used)), tuple(dict.fromkeys(unknown)))


def expand(text: str, env: MacroEnv | None) -> str:
    """The expanded text (no env: unchanged)."""
    return text if env is None else expand_macros(text, env).text
