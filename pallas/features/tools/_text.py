"""Text helpers shared by the tool matchers: normalisation, Chinese numerals, one-line output.

The matchers compare a *compact* form of the message: NFKC (full-width digits, letters and
punctuation become ASCII), lower case, surrounding punctuation / spaces removed, and trailing
modal particles (吧 / 呀 / 啊 …) dropped, so that "帮我掷个骰子吧！" and "帮我掷个骰子" match alike.
"""

from __future__ import annotations

import functools
import re
import unicodedata

# Ordinary tool requests are short; longer messages are chatter that merely mentions a keyword.
MAX_REQUEST_CHARS = 200
MAX_CONTENT_CHARS = 300

# Parentheses and minus signs are kept: "(3+4)/2" and "-3+4" are expressions.
_EDGE_PUNCT = " \t\r\n,.!?~;:'\"`，。！？～；：、…·“”‘’[]【】<>《》—_"
_TRAILING_PARTICLES_RE = re.compile(r"(?:吧|呗|啊|呀|哇|呢|嘛|啦|哈|捏|喔|哦|咯|嘞|~|!|\?|\s)+$")
_WHITESPACE_RE = re.compile(r"\s+")

_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
              "七": 7, "八": 8, "九": 9}  # fmt: skip
CN_NUMBER = r"(?:\d{1,9}|[零〇一二两三四五六七八九十百]{1,6})"


def normalize(text: str, *, lower: bool = True) -> str:
    """NFKC, lower case (unless told not to), single spaces, surrounding punctuation stripped."""
    text = unicodedata.normalize("NFKC", text or "")
    if lower:
        text = text.lower()
    return _WHITESPACE_RE.sub(" ", text).strip(_EDGE_PUNCT)


@functools.lru_cache(maxsize=64)  # every tool's matcher asks it for the same message in turn
def compact_request(text: str, *, lower: bool = True) -> str:
    """`normalize` plus trailing modal particles dropped (吧 / 呀 / 啊 / ? …)."""
    text = normalize(text, lower=lower)
    while True:
        trimmed = _TRAILING_PARTICLES_RE.sub("", text).strip(_EDGE_PUNCT)
        if trimmed == text:
            return text
        text = trimmed


def parse_number(token: str) -> int | None:
    """ASCII digits or a simple Chinese numeral (一, 两, 十二, 二十, 三百) → int; else None."""
    if not token:
        return None
    if token.isascii():
        return int(token) if token.isdigit() else None
    return _parse_chinese(token)


def _parse_chinese(token: str) -> int | None:
    total, current = 0, 0
    for char in token:
        if char in _CN_DIGITS:
            current = current * 10 + _CN_DIGITS[char] if current else _CN_DIGITS[char]
        elif char == "十":
            total += (current or 1) * 10
            current = 0
        elif char == "百":
            total += (current or 1) * 100
            current = 0
        else:
            return None
    return total + current


def one_line(text: str, limit: int = MAX_CONTENT_CHARS) -> str:
    """Collapse whitespace to one line and cap at `limit` characters (with an ellipsis)."""
    text = _WHITESPACE_RE.sub(" ", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"
