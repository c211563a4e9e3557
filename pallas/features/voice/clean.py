"""Text a voice can carry (pure): what is cleaned before synthesis, and how numbers are read.

`clean_for_speech` removes what would be read out as noise or not at all: CQ codes, `[表情:…]`
markers, 【…】 blocks, links, emoji and kaomoji symbols, markdown marks; it folds runs of
punctuation. `chinese_reading` spells numbers, dates, times, percentages and capital-letter
acronyms the Chinese way, for providers that read digits badly (GPT-SoVITS); the others get the
cleaned text as is (they read "2024年5月1日" well themselves).
"""

from __future__ import annotations

import re

_CQ = re.compile(r"\[CQ:[^\]]*\]")
_STICKER = re.compile(r"\[表情[:：][^\]]*\]")
_BLOCK = re.compile(r"【[^【】]*】")
_URL = re.compile(r"(?:https?://|www\.)\S+", re.IGNORECASE)
# emoji, pictographs, dingbats, variation selectors, joiners, regional flags, kaomoji symbols
_EMOJI = re.compile(
    "[\U0001f000-\U0001faff\U00002600-\U000027bf\U0001f1e6-\U0001f1ff\U0000fe00-\U0000fe0f"
    "\U0000200d\U000020e3\U00002b00-\U00002bff\U00002300-\U000023ff\U000025a0-\U000025ff"
    "\U00003030\U0000303d\U00003297\U00003299\U0000ff3e\U000000b4\U00000e51\U0000ff65"
    "\U000002d8-\U000002dd\U00002661-\U00002667\U00002605\U00002606]"
)
_MARKDOWN = re.compile(r"[*_`#>~|]+")
# a bracketed run with no CJK ideograph, letter or digit in it: a kaomoji like (｀・ω・´)
_KAOMOJI = re.compile(r"[(（][^()（）\u4e00-\u9fffA-Za-z0-9]{0,12}[)）]")
_SPACES = re.compile(r"[ \t\u3000]+")
_REPEATED_PUNCT = re.compile(r"([，。！？!?,.…~～、])\1+")


def clean_for_speech(text: str) -> str:
    """The text with what no voice carries removed; "" when nothing speakable is left."""
    text = _CQ.sub("", text)
    text = _STICKER.sub("", text)
    text = _BLOCK.sub("", text)
    text = _URL.sub("", text)
    text = _EMOJI.sub("", text)
    text = _MARKDOWN.sub("", text)
    text = _KAOMOJI.sub("", text)
    text = text.replace("\r", "\n")
    text = "，".join(line.strip() for line in text.split("\n") if line.strip())
    text = _SPACES.sub(" ", text)
    text = _REPEATED_PUNCT.sub(r"\1", text)
    text = text.strip(" ，,、")
    if not any(ch.isalnum() for ch in text):
        return ""
    return text


_DIGITS = "零一二三四五六七八九"
_UNITS = ("", "十", "百", "千")
_BIG = ("", "万", "亿", "万亿")


def _four(n: int) -> str:
    """0 < n < 10000, the way a number inside a bigger one is read."""
    out, zero = "", False
    for power in (3, 2, 1, 0):
        digit = n // 10**power % 10
        if digit == 0:
            zero = bool(out)
            continue
        if zero:
            out += "零"
            zero = False
        out += _DIGITS[digit] + _UNITS[power]
    return out


def integer_reading(n: int) -> str:
    """123 → 一百二十三, 10 → 十, 10005 → 一万零五, -3 → 负三."""
    if n < 0:
        return "负" + integer_reading(-n)
    if n == 0:
        return "零"
    groups: list[int] = []
    while n:
        groups.append(n % 10_000)
        n //= 10_000
    if len(groups) > len(_BIG):
        return "".join(_DIGITS[int(d)] for d in str(n))
    out, pending_zero = "", False
    for index in range(len(groups) - 1, -1, -1):
        group = groups[index]
        if group == 0:
            pending_zero = bool(out)
            continue
        if out and (pending_zero or group < 1000):
            out += "零"
        out += _four(group) + _BIG[index]
        pending_zero = False
    if out.startswith("一十"):
        out = out[1:]
    return out


def digits_reading(text: str) -> str:
    """Digit by digit (years, phone numbers, decimals): 2024 → 二零二四."""
    return "".join(_DIGITS[int(d)] for d in text)


_LETTERS = {
    "A": "诶", "B": "比", "C": "西", "D": "迪", "E": "伊", "F": "艾弗", "G": "吉", "H": "艾尺",
    "I": "艾", "J": "杰", "K": "开", "L": "艾勒", "M": "艾姆", "N": "艾恩", "O": "欧", "P": "屁",
    "Q": "吉吾", "R": "艾儿", "S": "艾丝", "T": "提", "U": "优", "V": "维", "W": "达布留",
    "X": "艾克斯", "Y": "吾艾", "Z": "贼德",
}  # fmt: skip

_DATE = re.compile(r"(\d{4})[-/.年](\d{1,2})[-/.月](\d{1,2})日?")
_TIME = re.compile(r"(?<!\d)(\d{1,2})[:：](\d{2})(?!\d)")
_PERCENT = re.compile(r"(\d+(?:\.\d+)?)[%％]")
_DECIMAL = re.compile(r"(\d+)\.(\d+)")
_YEAR = re.compile(r"(\d{4})年")
# phone numbers, QQ numbers, codes: digit by digit (an amount has a measure word after it)
_LONG = re.compile(r"\d{7,}(?![元块万亿人个次岁年])")
_NUMBER = re.compile(r"\d+")
_ACRONYM = re.compile(r"(?<![A-Za-z])[A-Z]{2,5}(?![A-Za-z])")


def _decimal(whole: str, frac: str) -> str:
    return integer_reading(int(whole)) + "点" + digits_reading(frac)


def _number(text: str) -> str:
    match = _DECIMAL.fullmatch(text)
    if match:
        return _decimal(match.group(1), match.group(2))
    return integer_reading(int(text))


def chinese_reading(text: str) -> str:
    """Numbers, dates, times, percentages and acronyms spelled in Chinese characters."""
    text = _DATE.sub(
        lambda m: (
            f"{digits_reading(m.group(1))}年{integer_reading(int(m.group(2)))}月"
            f"{integer_reading(int(m.group(3)))}日"
        ),
        text,
    )
    text = _YEAR.sub(lambda m: digits_reading(m.group(1)) + "年", text)

    def _clock(m: re.Match[str]) -> str:
        hours, minutes = int(m.group(1)), int(m.group(2))
        if hours > 24 or minutes > 59:
            return m.group(0)
        spoken = integer_reading(hours) + "点"
        if minutes:
            spoken += ("零" if minutes < 10 else "") + integer_reading(minutes) + "分"
        return spoken

    text = _TIME.sub(_clock, text)
    text = _PERCENT.sub(lambda m: "百分之" + _number(m.group(1)), text)
    text = _DECIMAL.sub(lambda m: _decimal(m.group(1), m.group(2)), text)
    text = _LONG.sub(lambda m: digits_reading(m.group(0)), text)
    text = _NUMBER.sub(lambda m: integer_reading(int(m.group(0))), text)
    text = _ACRONYM.sub(lambda m: "".join(_LETTERS[ch] for ch in m.group(0)), text)
    return text


__all__ = ["chinese_reading", "clean_for_speech", "digits_reading", "integer_reading"]
