"""Reading a OneBot v11 JSONL log for replay: decoding, validating, and the adapter's `to_me`."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pallas.cli.replay.report import ReplayProblem, ReplayTotals
from pallas.core.cq import normalise_segments
from pallas.onebot.convert import as_int

BOT_POST_TYPES = frozenset({"message", "message_sent"})


# --------------------------------------------------------------------------- adapter to_me


def _is_at(seg: Mapping[str, Any], user_id: int | None) -> bool:
    return (
        user_id is not None
        and seg.get("type") == "at"
        and str((seg.get("data") or {}).get("qq", "")) == str(user_id)
    )


def _lstrip_text_at(segs: list[dict[str, Any]], index: int) -> None:
    if index < len(segs) and segs[index]["type"] == "text":
        text = str(segs[index]["data"].get("text", "")).lstrip()
        if text:
            segs[index]["data"]["text"] = text
        else:
            del segs[index]


def adapter_to_me(
    segments: Sequence[Mapping[str, Any]],
    *,
    self_id: int,
    nicknames: Iterable[str],
    reply_author: int | None = None,
    reply_known: bool = True,
) -> bool:
    """`event.to_me` as the NoneBot OneBot v11 adapter computes it for a group message.

    Mirrors `_check_reply` (quoting a message whose sender is the bot), `_check_at_me` (@bot as
    the first or last segment) and `_check_nickname` (the first text segment starts with a
    nickname). `reply_known=False` stands for a quoted message older than the log: the adapter's
    `get_msg` would have found it, so the reply segment is removed, its author taken as not the
    bot.
    """
    segs: list[dict[str, Any]] = [
        {"type": str(s.get("type")), "data": dict(s.get("data") or {})} for s in segments
    ]
    to_me = False
    reply_index = next((i for i, s in enumerate(segs) if s["type"] == "reply"), None)
    if reply_index is not None and reply_known:
        if reply_author is not None and reply_author == self_id:
            to_me = True
        del segs[reply_index]
        if reply_index < len(segs) and _is_at(segs[reply_index], reply_author):
            del segs[reply_index]
        _lstrip_text_at(segs, reply_index)
    if not segs:
        segs.append({"type": "text", "data": {"text": ""}})
    if _is_at(segs[0], self_id):
        to_me = True
        segs.pop(0)
        _lstrip_text_at(segs, 0)
        if segs and _is_at(segs[0], self_id):
            segs.pop(0)
            _lstrip_text_at(segs, 0)
    elif segs:
        i = -1
        last = segs[i]
        blank = last["type"] == "text" and not str(last["data"].get("text", "")).strip()
        if blank and len(segs) >= 2:
            i -= 1
            last = segs[i]
        if _is_at(last, self_id):
            to_me = True
            del segs[i:]
    if not segs:
        segs.append({"type": "text", "data": {"text": ""}})
    names = [re.escape(n) for n in dict.fromkeys(n for n in nicknames if n)]
    if segs[0]["type"] == "text" and names:
        pattern = rf"^({'|'.join(names)})([\s,，]*|$)"
        if re.search(pattern, str(segs[0]["data"].get("text", "")), re.IGNORECASE):
            to_me = True
    return to_me


# --------------------------------------------------------------------------- parsing


@dataclass(slots=True)
class _Event:
    index: int  # position among the replayable events
    line: int
    time: float
    payload: dict[str, Any]
    group_id: int
    user_id: int
    message_id: int
    is_bot: bool
    segments: list[dict[str, Any]]
    name: str
    claimed: bool = False


def _decode(raw: str | bytes) -> str:
    return raw.decode("utf-8") if isinstance(raw, bytes) else raw


def _infer_self_id(objects: Iterable[Mapping[str, Any]]) -> int | None:
    for obj in objects:
        if (sid := as_int(obj.get("self_id"))) is not None:
            return sid
    return None


def _sender_name(payload: Mapping[str, Any], user_id: int) -> str:
    sender = payload.get("sender")
    if isinstance(sender, Mapping):
        for key in ("card", "nickname"):
            value = str(sender.get(key) or "").strip()
            if value:
                return value
    return str(user_id)


def _parse(
    lines: Iterable[str | bytes], self_id: int | None, totals: ReplayTotals
) -> tuple[list[_Event], list[ReplayProblem], int | None]:
    problems: list[ReplayProblem] = []
    objects = _read_objects(lines, totals, problems)
    bot_id = self_id if self_id is not None else _infer_self_id(o for _, o in objects)
    events: list[_Event] = []
    for number, obj in objects:
        post_type = obj.get("post_type")
        if post_type not in BOT_POST_TYPES:
            totals.ignored_events += 1
            continue
        problem = _message_problem(obj, bot_id)
        if problem is not None:
            problems.append(ReplayProblem(number, problem))
            continue
        assert bot_id is not None  # _message_problem checks it
        events.append(_make_event(len(events), number, obj, bot_id, problems))
    totals.malformed = len({p.line for p in problems if p.skipped})
    problems.sort(key=lambda p: p.line)
    return events, problems, bot_id


def _read_objects(
    lines: Iterable[str | bytes], totals: ReplayTotals, problems: list[ReplayProblem]
) -> list[tuple[int, dict[str, Any]]]:
    """Decode every line as a JSON object; bad lines become (skipped) problems."""
    objects: list[tuple[int, dict[str, Any]]] = []
    for number, raw in enumerate(lines, start=1):
        totals.lines += 1
        try:
            text = _decode(raw).strip()
        except UnicodeDecodeError as exc:
            problems.append(ReplayProblem(number, f"not UTF-8: {exc.reason}"))
            continue
        if not text:
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            problems.append(ReplayProblem(number, f"invalid JSON: {exc.msg} (col {exc.colno})"))
            continue
        if not isinstance(obj, dict):
            problems.append(ReplayProblem(number, f"expected an object, got {type(obj).__name__}"))
            continue
        objects.append((number, obj))
    return objects


def _make_event(
    index: int, number: int, obj: dict[str, Any], bot_id: int, problems: list[ReplayProblem]
) -> _Event:
    """A checked message event (see `_message_problem`) as an `_Event`."""
    post_type = obj.get("post_type")
    payload = {**obj, "self_id": bot_id}
    segments, seg_problems = normalise_segments(
        payload.get("message", payload.get("raw_message", ""))
    )
    if seg_problems:
        note = "; ".join(seg_problems) + " (kept as text)"
        problems.append(ReplayProblem(number, note, skipped=False))
    user_id = int(as_int(obj.get("user_id")) or 0)
    return _Event(
        index=index,
        line=number,
        time=float(obj["time"]),
        payload=payload,
        group_id=as_int(obj.get("group_id"), 0) or 0,
        user_id=user_id,
        message_id=int(as_int(obj.get("message_id")) or 0),
        is_bot=post_type == "message_sent" or user_id == bot_id,
        segments=segments,
        name=_sender_name(obj, user_id),
    )


def _message_problem(obj: Mapping[str, Any], bot_id: int | None) -> str | None:
    if bot_id is None:
        return "no self_id in the log and none given (--self-id)"
    missing = [k for k in ("user_id", "message_id") if as_int(obj.get(k)) is None]
    if missing:
        return f"message event without {' / '.join(missing)}"
    value = obj.get("time")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "message event without a numeric time"
    message_type = obj.get("message_type", "group")
    if message_type not in ("group", "private"):
        return f"unknown message_type {message_type!r}"
    if message_type == "group" and not as_int(obj.get("group_id")):
        return "group message without group_id"
    return None
