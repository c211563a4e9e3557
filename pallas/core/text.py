"""Plain-text primitives every layer shares: the one invisible-character set, the one
text-cleaning function (placeholders / CQ codes out, whitespace collapsed) and phrase keys.

Pure and cheap; no NoneBot, no database, no model.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Final

from pallas.core.cq import SEGMENT_PLACEHOLDERS

#: C0/C1 controls except \t and \n (a regex character-class body).
CONTROL_CHARS: Final = "\x00-\x08\x0b-\x1f\x7f-\x9f"
#: The one invisible-character set: soft hyphen, invisible fillers, zero-width and bidi
#: controls, Mongolian / variation selectors 1-15 (VS16 U+FE0F stays: emoji need it), BOM,
#: interlinear annotations, tag characters. A regex character-class body.
INVISIBLE_CHARS: Final = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0e\ufeff\uffa0\ufff0-\ufff8\U000e0000-\U000e007f"
)
#: U+200D joins emoji sequences (👨‍👩‍👧): text the bot sends keeps it.
EMOJI_JOINER: Final = "\u200d"

_CJK_CHAR = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]")
_INVISIBLE_RE = re.compile(f"[{CONTROL_CHARS}{INVISIBLE_CHARS}]")
_INVISIBLE_KEEP_JOINER_RE = re.compile(f"(?!{EMOJI_JOINER})[{CONTROL_CHARS}{INVISIBLE_CHARS}]")
_LINE_BREAKS = re.compile(r"[\r\n\t\x85\u2028\u2029]")
_WHITESPACE = re.compile(r"\s+")
_AT_TOKEN = re.compile(r"@[^\s@]+\s*")
_PLACEHOLDER_NAMES = sorted(
    {label[1:-1] for label in SEGMENT_PLACEHOLDERS.values()} | {"动画表情", "分享"},
    key=len,
    reverse=True,
)
#: CQ codes and media placeholders (`[图片]`, `[图片]`-like labels with a short suffix).
PLACEHOLDER_RE: Final = re.compile(
    r"\[CQ:[^\]]*\]|\[(?:" + "|".join(map(re.escape, _PLACEHOLDER_NAMES)) + r")[^\]\[]{0,8}\]"
)


def contains_cjk(text: str) -> bool:
    """True when `text` holds at least one CJK ideograph, kana or hangul character."""
    return _CJK_CHAR.search(text) is not None


def is_invisible(ch: str) -> bool:
    return bool(_INVISIBLE_RE.fullmatch(ch))


def strip_invisible(text: str, *, keep_emoji_joiner: bool = False) -> str:
    """Drop invisible and control characters (not \\n / \\t)."""
    pattern = _INVISIBLE_KEEP_JOINER_RE if keep_emoji_joiner else _INVISIBLE_RE
    return pattern.sub("", text)


def clean_text(text: str, *, strip_mentions: bool = False) -> str:
    """Plain one-line text: invisible characters, CQ codes, media placeholders and
    (optionally) `@name` tokens removed; line breaks and runs of whitespace become one space."""
    text = strip_invisible(_LINE_BREAKS.sub(" ", text or ""))
    text = PLACEHOLDER_RE.sub("", text)
    if strip_mentions:
        text = _AT_TOKEN.sub(" ", text)
    return _WHITESPACE.sub(" ", text).strip()


def content_chars(text: str) -> str:
    """Letters, digits and CJK only (punctuation, symbols, emoji and spaces removed)."""
    return "".join(ch for ch in text if unicodedata.category(ch)[0] in ("L", "N"))


@lru_cache(maxsize=65_536)
def match_key(text: str) -> str:
    """Case-folded content characters: the key used to compare phrases."""
    return content_chars(clean_text(text)).casefold()
