"""CQ-code text ⇄ OneBot message segments (the one parser), and segment placeholders.

OneBot v11 peers may send `message` as a segment array or as a CQ-code string; `raw_message` is
always a CQ string. Parsing never raises: a broken code (`[CQ:image,file=` without `]`) is kept
as literal text so nothing the member wrote is lost.
"""

from __future__ import annotations

import re
from typing import Any

_CQ_RE = re.compile(r"\[CQ:([A-Za-z0-9_.\-]+)((?:,[^\[\]]*)?)\]")

#: How a non-text segment reads as text (group timeline, stored message text). The one map:
#: `image` / `mface` / `at` are rendered by their callers (URL, sticker summary, name).
SEGMENT_PLACEHOLDERS: dict[str, str] = {
    "image": "[图片]",
    "face": "[表情]",
    "record": "[语音]",
    "video": "[视频]",
    "file": "[文件]",
    "json": "[卡片]",
    "xml": "[卡片]",
    "forward": "[聊天记录]",
    "node": "[聊天记录]",
    "poke": "[戳一戳]",
    "dice": "[骰子]",
    "rps": "[猜拳]",
    "music": "[音乐]",
    "share": "[链接]",
    "location": "[位置]",
    "contact": "[名片]",
    "markdown": "[消息]",
}


def unescape(text: str, *, in_param: bool = False) -> str:
    text = text.replace("&#91;", "[").replace("&#93;", "]")
    if in_param:
        text = text.replace("&#44;", ",")
    return text.replace("&amp;", "&")


def escape(text: str, *, in_param: bool = False) -> str:
    text = text.replace("&", "&amp;").replace("[", "&#91;").replace("]", "&#93;")
    return text.replace(",", "&#44;") if in_param else text


def _params(raw: str) -> dict[str, str]:
    data: dict[str, str] = {}
    for part in raw.split(",")[1:] if raw else []:
        key, sep, value = part.partition("=")
        if key:
            data[key.strip()] = unescape(value, in_param=True) if sep else ""
    return data


def parse_cq(message: str) -> list[dict[str, Any]]:
    """Parse a CQ-code string into segment dicts `{"type", "data"}`."""
    segments: list[dict[str, Any]] = []
    pos = 0
    for match in _CQ_RE.finditer(message):
        if match.start() > pos:
            segments.append(_text(message[pos : match.start()]))
        segments.append({"type": match.group(1), "data": _params(match.group(2))})
        pos = match.end()
    if pos < len(message):
        segments.append(_text(message[pos:]))
    return segments


def _text(raw: str) -> dict[str, Any]:
    return {"type": "text", "data": {"text": unescape(raw)}}


def to_cq(segments: list[dict[str, Any]]) -> str:
    """Render segments back to a CQ-code string (what `raw_message` looks like)."""
    out = []
    for seg in segments:
        if not isinstance(seg, dict):
            out.append(escape(str(seg)))
            continue
        kind = str(seg.get("type", ""))
        data = seg.get("data") or {}
        if kind == "text":
            out.append(escape(str(data.get("text", ""))))
            continue
        params = "".join(
            f",{k}={escape(str(v), in_param=True)}" for k, v in data.items() if v is not None
        )
        out.append(f"[CQ:{kind}{params}]")
    return "".join(out)


def normalise_segments(message: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """Accept a segment list or a CQ string; return clean segment dicts and problems found.

    Segments that are not `{"type": str, "data": dict}` are replaced by a text segment holding
    their JSON-ish repr so they are still stored, and reported in `problems`.
    """
    if isinstance(message, str):
        return parse_cq(message), []
    if not isinstance(message, list):
        return [], [f"message is {type(message).__name__}, expected list or str"]
    segments: list[dict[str, Any]] = []
    problems: list[str] = []
    for index, seg in enumerate(message):
        kind = seg.get("type") if isinstance(seg, dict) else None
        data = seg.get("data") if isinstance(seg, dict) else None
        if not isinstance(kind, str) or not kind or not isinstance(data, dict | None):
            problems.append(f"segment {index} malformed: {str(seg)[:80]!r}")
            segments.append({"type": "unknown", "data": {"raw": str(seg)[:500]}})
            continue
        segments.append({"type": kind, "data": dict(data or {})})
    return segments, problems
