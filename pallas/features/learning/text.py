"""Text helpers shared by the learning modules: noise filtering, blocked words, safe inlining.

Cleaning and phrase keys are the shared `pallas.core.text` ones (re-exported here).

Everything here is pure and cheap; nothing imports NoneBot, the database or a model.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from functools import lru_cache

from pallas.context.prompt_guard import cap_text
from pallas.context.prompt_guard import sanitize_inline as guard_sanitize_inline
from pallas.core.text import clean_text, content_chars, match_key

# Small default blocklist of aggressive / dirty words: such samples never enter any pool.
DEFAULT_BLOCKED_WORDS: tuple[str, ...] = (
    "傻逼",
    "煞笔",
    "傻b",
    "傻x",
    "沙比",
    "操你",
    "草你",
    "艹你",
    "草泥马",
    "你妈",
    "尼玛",
    "去死",
    "死全家",
    "脑残",
    "智障",
    "弱智",
    "废物",
    "贱人",
    "狗东西",
    "sb",
    "nmsl",
    "cnm",
    "wdnmd",
    "fuck",
)

DEFAULT_COMMAND_PREFIXES: tuple[str, ...] = ("/", "#", "／", "＃")

_URL = re.compile(r"(?:https?://|www\.)\S+", re.IGNORECASE)


# 【】 and 「」 in a sample become look-alikes that cannot close the quote it sits in
_QUOTE_MARKS = str.maketrans("【】「」", "〔〕“”")


def contains_blocked_word(text: str, blocked_words: Collection[str]) -> str | None:
    """The first blocked word found in `text` (ASCII words need word boundaries), else None."""
    lowered = clean_text(text).casefold()
    squeezed = lowered.replace(" ", "")
    for word in blocked_words:
        needle = word.casefold().strip()
        if not needle:
            continue
        if needle.isascii():
            if re.search(rf"(?<![a-z0-9]){re.escape(needle)}(?![a-z0-9])", lowered):
                return word
        elif needle in squeezed:
            return word
    return None


def noise_reason(
    text: str,
    *,
    max_chars: int,
    blocked_words: Collection[str] = DEFAULT_BLOCKED_WORDS,
    command_prefixes: Collection[str] = DEFAULT_COMMAND_PREFIXES,
) -> str | None:
    """Why `text` is unusable as a learning sample, or None when it is fine.

    Reasons: empty, command, url, punctuation_only, too_long, blocked.
    """
    cleaned = clean_text(text)
    if not cleaned:
        return "empty"
    if any(cleaned.startswith(prefix) for prefix in command_prefixes) and content_chars(
        cleaned[:2]
    ):
        return "command"
    if _URL.search(cleaned):
        return "url"
    if not content_chars(cleaned):
        return "punctuation_only"
    if len(cleaned) > max_chars:
        return "too_long"
    if contains_blocked_word(cleaned, blocked_words):
        return "blocked"
    return None


def sanitize_inline(text: str, max_chars: int = 60) -> str:
    """Make untrusted text safe to inline in a prompt line.

    Runs `prompt_guard.sanitize_inline` (invisible chars, look-alikes, fake 【…】 headers and role
    markers neutralised, one line), then also turns 「」 into “” so a sample cannot close the
    quote it is placed in, and caps at `max_chars` with an ellipsis.
    """
    text = guard_sanitize_inline(clean_text(text), max_chars=10_000)
    text = text.translate(_QUOTE_MARKS)
    return cap_text(text, max_chars)


@lru_cache(maxsize=65_536)
def char_ngrams(text: str, n: int = 2) -> frozenset[str]:
    """Character n-grams of the content characters (unigrams when the text is shorter than n)."""
    key = match_key(text)
    if len(key) < n:
        return frozenset({key}) if key else frozenset()
    return frozenset(key[i : i + n] for i in range(len(key) - n + 1))


def phrase_blocked(text: str, blocked_keys: Collection[str]) -> bool:
    """Whether `text` contains a blocked phrase (or is a ≥2-char piece of one).

    `blocked_keys` must already be `match_key`-normalised (see `blocked_keys_of`).
    """
    key = match_key(text)
    if not key:
        return False
    return any(
        blocked and (blocked in key or (len(key) >= 2 and key in blocked))
        for blocked in blocked_keys
    )


def blocked_keys_of(phrases: Collection[str]) -> frozenset[str]:
    return frozenset(k for k in (match_key(p) for p in phrases) if k)
