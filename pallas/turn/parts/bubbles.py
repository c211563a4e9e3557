"""Model output → what the group sees: bubbles, an optional sticker, or silence.

`parse_reply` never lets raw model artefacts reach the group:

- `<think>…</think>` (also `<thinking>` / `<reasoning>`) is removed; an unterminated opening
  tag drops everything after it, an orphan closing tag drops everything before it;
- chat-template tokens (`<|im_end|>`) and CQ codes are removed (a reply is plain text);
- role prefixes (`帕拉斯：`, `assistant:`), a leading self-@ (`@帕拉斯`, `[CQ:at,qq=<bot>]`),
  list bullets/numbering and `**bold**` markers are stripped per line;
- a line that is `PASS` alone means silence when it comes first (anything after it is the
  model explaining itself); a later `PASS` line is just dropped;
- a `[表情:名字]` marker is taken out and returned as `sticker`;
- session-variable tags (`<svar …/>`, also the neutralised `〈svar` / `＜svar` forms) are removed;
- JSON / stack traces / `null` and other garbage → silence;
- the rest is split into bubbles: one per line, long lines split at sentence ends (never
  inside a URL or an emoji sequence), too many lines merged pairwise (shortest pair first)
  down to `max_segments`, and an over-long reply cut at a sentence end.

`bubble_delay` gives the human-like pause before each bubble.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from pallas.core.text import strip_invisible
from pallas.features.svars import strip_svar_tags

DEFAULT_SPEAKER_NAMES = ("帕拉斯", "牛牛", "Pallas")
SENTENCE_END = "。！？!?～~…"
_CUT_AFTER = SENTENCE_END + "，,；;、 "

_THINK_BLOCK_RE = re.compile(r"<(think|thinking|reasoning)>.*?</\1\s*>", re.I | re.S)
_THINK_OPEN_RE = re.compile(r"<(think|thinking|reasoning)>", re.I)
_THINK_CLOSE_RE = re.compile(r"</(think|thinking|reasoning)\s*>", re.I)
_TEMPLATE_TOKEN_RE = re.compile(r"<\|[^|\n]{0,40}\|>|<｜[^｜\n]{0,40}｜>")
_CQ_RE = re.compile(r"\[CQ:[^\]]*\]")
_STICKER_RE = re.compile(r"\[(?:表情|sticker)\s*[:：]\s*([^\]\n]{1,32}?)\s*\]", re.I)
_PASS_RE = re.compile(r"[\s\"'“”‘’「」`*\[(（【]*PASS[\s\"'“”‘’「」`*\])）】。.!！]*", re.I)
_BULLET_RE = re.compile(r"^(?:[-*•·]\s+|\d{1,2}[.、)）]\s*)")
_URL_RE = re.compile(r"https?://[^\s，。！？、；]+", re.I)
_GARBAGE_LINE_RE = re.compile(
    r"^(null|none|undefined|nan|\[object object\]|error|traceback.*|<!doctype.*|<html.*)$", re.I
)


class UniformRng(Protocol):
    def uniform(self, a: float, b: float) -> float: ...


@dataclass(frozen=True, slots=True)
class ParsedReply:
    bubbles: tuple[str, ...]
    sticker: str | None = None
    reason: str = "ok"  # "ok" | "pass" | "empty" | "garbage" | "think_only"
    notes: tuple[str, ...] = ()  # what was cleaned: "think", "role_prefix", "self_at", …

    @property
    def silent(self) -> bool:
        return not self.bubbles and self.sticker is None


def _strip_think(text: str, notes: list[str]) -> str:
    cleaned = _THINK_BLOCK_RE.sub("", text)
    closes = list(_THINK_CLOSE_RE.finditer(cleaned))
    if closes:  # reasoning streamed without its opening tag
        cleaned = cleaned[closes[-1].end() :]
    opened = _THINK_OPEN_RE.search(cleaned)
    if opened:  # unterminated: the rest is reasoning
        cleaned = cleaned[: opened.start()]
    if cleaned != text:
        notes.append("think")
    return cleaned


def _line_prefix_re(names: Iterable[str]) -> tuple[re.Pattern[str], re.Pattern[str]]:
    alts = "|".join(re.escape(n) for n in dict.fromkeys(names) if n)
    role = re.compile(rf"^(?:{alts}|assistant|bot|ai|助手|回复)\s*[:：]\s*", re.I)
    at = re.compile(rf"^@(?:{alts})(?:\s+|$)", re.I) if alts else re.compile(r"^(?!)")
    return role, at


def _clean_line(line: str, role: re.Pattern[str], at: re.Pattern[str], notes: list[str]) -> str:
    line = line.strip()
    for _ in range(3):
        before = line
        if role.match(line):
            line, _n = role.subn("", line, count=1)
            notes.append("role_prefix")
        if at.match(line):
            line, _n = at.subn("", line, count=1)
            notes.append("self_at")
        line = _BULLET_RE.sub("", line).strip()
        if line == before:
            break
    line = line.replace("**", "")
    if len(line) >= 2 and (line[0], line[-1]) in {('"', '"'), ("“", "”"), ("「", "」")}:
        line = line[1:-1].strip()
    return line


def _is_garbage(text: str) -> bool:
    stripped = text.strip()
    if _GARBAGE_LINE_RE.match(stripped) or "Traceback (most recent call last)" in stripped:
        return True
    if stripped[:1] in "{[" and stripped[-1:] in "}]":
        try:
            json.loads(stripped)
            return True
        except ValueError:
            return False
    meaningful = sum(1 for ch in stripped if ch.isalnum() or unicodedata.category(ch) == "So")
    return meaningful == 0 and len(stripped) > 8


def _safe_cut(text: str, pos: int) -> int:
    """Move a cut position left until it is not inside a URL or an emoji/grapheme sequence."""
    for url in _URL_RE.finditer(text):
        if url.start() < pos < url.end():
            pos = url.start()
    joiners = {"\u200d", "\ufe0f", "\ufe0e", "\u20e3"}
    while 0 < pos < len(text) and (
        text[pos] in joiners
        or text[pos - 1] == "\u200d"
        or unicodedata.category(text[pos]) in ("Mn", "Me")
        or 0x1F3FB <= ord(text[pos]) <= 0x1F3FF
    ):
        pos -= 1
    return pos


def _sentences(line: str) -> list[str]:
    """Split after runs of sentence-ending punctuation, never inside a URL."""
    protected = [(m.start(), m.end()) for m in _URL_RE.finditer(line)]
    pieces, start, i = [], 0, 0
    while i < len(line):
        if line[i] in SENTENCE_END and not any(a <= i < b for a, b in protected):
            while i + 1 < len(line) and line[i + 1] in SENTENCE_END:
                i += 1
            pieces.append(line[start : i + 1].strip())
            start = i + 1
        i += 1
    pieces.append(line[start:].strip())
    return [p for p in pieces if p]


def _hard_split(text: str, limit: int) -> list[str]:
    out = []
    while len(text) > limit:
        window = text[:limit]
        cut = max(window.rfind(ch) for ch in _CUT_AFTER) + 1
        cut = _safe_cut(text, cut if cut > limit // 3 else limit)
        if cut <= 0:
            cut = limit
        out.append(text[:cut].strip())
        text = text[cut:].strip()
    return [p for p in [*out, text] if p]


def _split_line(line: str, max_chars: int) -> list[str]:
    if len(line) <= max_chars:
        return [line]
    hard = max(max_chars * 3, 60)
    pieces: list[str] = []
    for sentence in _sentences(line):
        pieces.extend(_hard_split(sentence, hard) if len(sentence) > hard else [sentence])
    packed: list[str] = []
    for piece in pieces:  # greedily re-pack short sentences up to max_chars
        if packed and len(packed[-1]) + len(piece) <= max_chars:
            packed[-1] += piece
        else:
            packed.append(piece)
    return packed


def _join(a: str, b: str) -> str:
    return f"{a}{b}" if a[-1:] in _CUT_AFTER else f"{a} {b}"


def split_bubbles(lines: Sequence[str], max_segments: int, max_chars: int) -> tuple[str, ...]:
    """Lines → at most `max_segments` bubbles of roughly `max_chars` (see module doc)."""
    bubbles = [p for line in lines if line.strip() for p in _split_line(line.strip(), max_chars)]
    while len(bubbles) > max(max_segments, 1):
        i = min(range(len(bubbles) - 1), key=lambda k: len(bubbles[k]) + len(bubbles[k + 1]))
        bubbles[i : i + 2] = [_join(bubbles[i], bubbles[i + 1])]
    return tuple(bubbles)


def _cap_total(bubbles: tuple[str, ...], total_cap: int) -> tuple[tuple[str, ...], bool]:
    if sum(len(b) for b in bubbles) <= total_cap:
        return bubbles, False
    out: list[str] = []
    room = total_cap
    for bubble in bubbles:
        if len(bubble) <= room:
            out.append(bubble)
            room -= len(bubble)
            continue
        head = bubble[:room]
        ends = [head.rfind(ch) for ch in SENTENCE_END]
        cut = max(ends) + 1 if max(ends) >= room // 3 else _safe_cut(bubble, room)
        if bubble[:cut].strip():
            out.append(bubble[:cut].strip() + ("" if bubble[cut - 1] in SENTENCE_END else "…"))
        break
    return tuple(out), True


def parse_reply(
    raw: str | None,
    *,
    max_segments: int = 3,
    max_chars: int = 18,
    speaker_names: Sequence[str] = DEFAULT_SPEAKER_NAMES,
    bot_id: int | None = None,
    total_cap: int | None = None,
) -> ParsedReply:
    """Parse one completion. `total_cap` defaults to 3 × max_segments × max_chars (≥ 120)."""
    notes: list[str] = []
    text = strip_invisible(
        (raw or "").replace("\r\n", "\n").replace("\r", "\n"), keep_emoji_joiner=True
    )
    had_text = bool(text.strip())
    text = _strip_think(text, notes)
    if (stripped := strip_svar_tags(text)) != text:
        text = stripped
        notes.append("svar")
    if had_text and not text.strip() and "think" in notes:
        return ParsedReply((), None, "think_only", tuple(notes))
    if bot_id is not None:
        text = re.sub(rf"\[CQ:at,qq={bot_id}(?:,[^\]]*)?\]\s*", "", text)
    if _CQ_RE.search(text) or _TEMPLATE_TOKEN_RE.search(text):
        notes.append("markup")
        text = _TEMPLATE_TOKEN_RE.sub("", _CQ_RE.sub("", text))
    sticker = None
    if match := _STICKER_RE.search(text):
        sticker = match.group(1).strip()
        text = _STICKER_RE.sub("", text)
        notes.append("sticker")
    role, at = _line_prefix_re(speaker_names)
    lines = [_clean_line(line, role, at, notes) for line in text.split("\n")]
    lines = [line for line in lines if line]
    if lines and _PASS_RE.fullmatch(lines[0]):
        return ParsedReply((), None, "pass", tuple(notes))
    lines = [line for line in lines if not _PASS_RE.fullmatch(line)]
    if not lines:
        return ParsedReply((), sticker, "ok" if sticker else "empty", tuple(dict.fromkeys(notes)))
    if _is_garbage("\n".join(lines)) or all(_is_garbage(line) for line in lines):
        return ParsedReply((), None, "garbage", tuple(dict.fromkeys(notes)))
    bubbles = split_bubbles(lines, max_segments, max_chars)
    cap = total_cap or max(3 * max_segments * max_chars, 120)
    bubbles, capped = _cap_total(bubbles, cap)
    if capped:
        notes.append("truncated")
    return ParsedReply(bubbles, sticker, "ok", tuple(dict.fromkeys(notes)))


def bubble_delay(text: str, rng: UniformRng) -> float:
    """Pause before sending `text`: 0.8 s + 0.04 s/char, ±35 %, clamped to 0.5–3.5 s."""
    base = 0.8 + 0.04 * len(text)
    return min(3.5, max(0.5, base * (1.0 + rng.uniform(-0.35, 0.35))))
