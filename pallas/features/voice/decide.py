"""Whether the bot speaks (pure): the command, a reply, and the budget, each with a reason.

Inputs in, a frozen `VoiceDecision` out; randomness is passed in as `roll` (a float in [0, 1)),
today's counters as numbers. The reasons are what the route log, `/pallas why` and the tests
show, so they stay stable.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from pallas.features.voice.clean import clean_for_speech
from pallas.features.voice.config import VoiceConfig


@dataclass(frozen=True, slots=True)
class VoiceDecision:
    speak: bool
    reason: str
    text: str = ""  # the cleaned text to synthesise (when speak)


@dataclass(frozen=True, slots=True)
class VoiceUsage:
    """Today's counters: the group's characters and calls, the member's commands."""

    chars: int = 0
    calls: int = 0
    member_commands: int = 0


# a separator after 说 is required: "牛牛说的对" / "牛牛说过" talk about the bot, not to it
_SAY = re.compile(r"^\s*(?:{names})\s*说[\s:：,，]+(?P<text>.+)$", re.DOTALL)


def parse_speak_command(text: str, names: Iterable[str]) -> str | None:
    """ "牛牛说 你好" → "你好"; None when the line is no speak command for one of `names`."""
    alternatives = "|".join(re.escape(n) for n in sorted(set(names), key=len, reverse=True) if n)
    if not alternatives:
        return None
    match = re.match(_SAY.pattern.format(names=alternatives), text, re.DOTALL)
    if match is None:
        return None
    said = match.group("text").strip()
    return said or None


_CODE = re.compile(r"```|`[^`]+`|[{};]\s*$|^\s*(def|class|import|function|SELECT)\b", re.M | re.I)
_LINK = re.compile(r"(?:https?://|www\.)\S+|\b[a-z0-9-]+\.(?:com|cn|net|org|io)\b", re.I)
_LIST = re.compile(r"^\s*(?:[-*•]|\d+[.)、])\s+", re.M)


def unspeakable(text: str, max_chars: int) -> str | None:
    """Why `text` must not be spoken (long, code, a link, a list, nothing left), or None."""
    if _CODE.search(text):
        return "code"
    if _LINK.search(text):
        return "link"
    if len(_LIST.findall(text)) >= 2:
        return "list"
    cleaned = clean_for_speech(text)
    if not cleaned:
        return "nothing_to_say"
    if len(cleaned) > max_chars:
        return "too_long"
    return None


def over_budget(config: VoiceConfig, usage: VoiceUsage, chars: int) -> str | None:
    """ "budget_calls" / "budget_chars" when this synthesis would pass a daily budget."""
    if config.daily_calls and usage.calls + 1 > config.daily_calls:
        return "budget_calls"
    if config.daily_chars and usage.chars + chars > config.daily_chars:
        return "budget_chars"
    return None


def contains_blocked(text: str, words: Iterable[str]) -> str | None:
    lowered = "".join(text.lower().split())
    return next((w for w in words if w and w.lower() in lowered), None)


def decide_command(
    config: VoiceConfig,
    said: str,
    usage: VoiceUsage,
    *,
    is_admin: bool,
    has_provider: bool,
) -> VoiceDecision:
    """Whether "<名字>说 …" is spoken. Guard checks (leaks, fake structure) are the caller's:
    they need the persona."""
    command = config.command
    if not config.enabled or not command.enabled:
        return VoiceDecision(False, "voice_off")
    if not has_provider:
        return VoiceDecision(False, "no_provider")
    if command.who == "admins" and not is_admin:
        return VoiceDecision(False, "admins_only")
    blocked = contains_blocked(said, command.blocked_words)
    if blocked:
        return VoiceDecision(False, "blocked_word")
    why = unspeakable(said, command.max_chars)
    if why:
        return VoiceDecision(False, why)
    if command.member_daily and not is_admin and usage.member_commands >= command.member_daily:
        return VoiceDecision(False, "member_limit")
    cleaned = clean_for_speech(said)
    budget = over_budget(config, usage, len(cleaned))
    if budget:
        return VoiceDecision(False, budget, cleaned)
    return VoiceDecision(True, "command", cleaned)


def decide_reply(
    config: VoiceConfig,
    bubbles: tuple[str, ...],
    usage: VoiceUsage,
    *,
    to_voice: bool,
    roll: float,
    has_provider: bool,
) -> VoiceDecision:
    """Whether the persona's reply is spoken: only a one-bubble short reply, to a voice message
    (`reply_to_voice`) or by chance (`reply_probability`), within the budget."""
    if not config.enabled:
        return VoiceDecision(False, "voice_off")
    if to_voice and config.reply_to_voice:
        reason = "reply_to_voice"
    elif roll < config.reply_probability:
        reason = "reply_chance"
    else:
        return VoiceDecision(False, "not_chosen")
    if not has_provider:
        return VoiceDecision(False, "no_provider")
    if len(bubbles) != 1:
        return VoiceDecision(False, "several_bubbles")
    why = unspeakable(bubbles[0], config.reply_max_chars)
    if why:
        return VoiceDecision(False, why)
    cleaned = clean_for_speech(bubbles[0])
    budget = over_budget(config, usage, len(cleaned))
    if budget:
        return VoiceDecision(False, budget, cleaned)
    return VoiceDecision(True, reason, cleaned)


__all__ = [
    "VoiceDecision",
    "VoiceUsage",
    "contains_blocked",
    "decide_command",
    "decide_reply",
    "over_budget",
    "parse_speak_command",
    "unspeakable",
]
