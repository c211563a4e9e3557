"""OneBot v11 frames → NoneBot events: the stock adapter's parse, without its per-segment cost.

The stock `Adapter.json_to_event` validates the event with `type_validate_python(model, data)`,
and the event's `message` field validates each segment dict with another
`type_validate_python(MessageSegment, segment)` — a new pydantic `TypeAdapter`, its core
schema rebuilt, for every segment, twice per message (`message` and `original_message`): about
half of the parse. `parse_event` gives the same `Event` objects cheaper:

- a `message` that is a list of segment dicts (`type` a str, `data` a dict with str keys —
  what every OneBot implementation sends) is built into the adapter's `Message` directly:
  `MessageSegment(type, dict(data))` is what the validation produced (extra keys ignored, `data`
  copied shallowly); a malformed segment in the list is dropped and the rest kept (the stock
  validation refused the whole message); a CQ string is left to the models' validation;
- the adapter's event models for the frame are validated in its order with their own
  validator (`model.model_validate`, which is what a `TypeAdapter` of a `BaseModel` runs), then
  the base `Event` for anything but a message; a frame none accepts raises `EventRefused`, which
  the adapter logs as one rate-limited line (the stock parse logs an ERROR with a traceback,
  and turns a malformed message into a base `Event` that fails again, with another traceback,
  in NoneBot's command parsing);
- a text segment whose text is null is dropped, a non-string text becomes its string (NoneBot's
  own to-me check calls `.strip()` on it).

The caller's dict is not modified (the stock parse adds `original_message` to it).
`tests/unit/core/test_event_parse.py` compares both parses over a table of real and broken
frames. NoneBot itself is not patched: only Pallas's adapter uses this.
"""

from __future__ import annotations

import logging
import math
import time
from typing import Any

from nonebot.adapters.onebot.v11 import Adapter, Message, MessageEvent, MessageSegment
from nonebot.adapters.onebot.v11.event import Event
from pydantic import ValidationError

from pallas.core.errors import InvalidInput
from pallas.core.log_limit import LogLimiter, skipped_note
from pallas.core.storable import INT64_MAX, INT64_MIN, fits_int64

log = logging.getLogger("pallas.onebot")
# repaired messages: a few lines per kind of repair a minute, then a count
_REPAIRS = LogLimiter(per_window=5, window_s=60.0)

ID_FIELDS = ("self_id", "message_id", "group_id", "user_id", "operator_id", "target_id")
MAX_UNIX_TIME = 2**32  # QQ stamps seconds; past 2106 a time is garbage, not a date
_SENDER_INTS = frozenset({"user_id", "age"})
_SENDER_STRS = frozenset({"nickname", "sex", "card", "area", "level", "role", "title"})
MESSAGE_POST_TYPES = frozenset({"message"})  # NapCat's message_sent has only the base Event


class EventRefused(InvalidInput):
    """No event model accepts the frame: what the adapter logs in one line."""

    def __init__(self, post_type: str, ids: str, reason: str, *, field: str = "") -> None:
        super().__init__(f"{post_type} event ({ids}): {reason}")
        self.post_type = post_type
        self.ids = ids
        self.reason = reason
        self.field = field  # what was wrong ("type", "time", "message.0"…): the log's kind

    @property
    def kind(self) -> str:
        """What the log rate-limits by: the event type and the field at fault."""
        return f"{self.post_type[:16]}:{self.field or self.reason[:40]}"


def _segment(kind: str, data: dict[str, Any]) -> MessageSegment | None:
    """One well-formed segment; a text segment whose text is not a string keeps what it
    says (`str`), or is dropped when it is null (NoneBot's own checks call `.strip()`)."""
    if kind == "text" and not isinstance(data.get("text"), str):
        if data.get("text") is None:
            return None
        data = {**data, "text": str(data["text"])}
    return MessageSegment(type=kind, data=dict(data))


def built_message(segments: Any) -> Message | None:
    """A segment list as the adapter's `Message`: every well-formed segment (`type` a str,
    `data` a dict with str keys), the malformed ones dropped so the rest of the message is
    still recorded; None (the models' validation judges) for anything but a list."""
    if type(segments) is not list:
        return None
    built = []
    for segment in segments:
        if type(segment) is not dict:
            continue
        kind, data = segment.get("type"), segment.get("data")
        if type(kind) is not str or type(data) is not dict:
            continue
        if not all(type(key) is str for key in data):
            continue
        made = _segment(kind, data)
        if made is not None:
            built.append(made)
    return Message(built)


def _note_repair(post_type: str, frame: dict[str, Any], fields: list[str]) -> None:
    logged, skipped = _REPAIRS.allow(fields[0])  # by the first field: a few kinds, not combos
    if logged:
        log.warning("kept a OneBot %s event (%s) with its default for %s%s", post_type,
                    _ids(frame), ", ".join(fields), skipped_note(skipped))  # fmt: skip


def _ids(frame: dict[str, Any]) -> str:
    parts = [f"{key} {str(frame[key])[:24]}" for key in ("message_id", "group_id", "user_id")
             if key in frame]  # fmt: skip
    return ", ".join(parts) or "no ids"


def _reason(exc: ValidationError) -> str:
    errors = exc.errors()
    if not errors:
        return "invalid"
    where = ".".join(str(p) for p in errors[0]["loc"]) or "frame"
    return f"{where}: {errors[0]['msg']} ({exc.error_count()} problem(s))"


def _type_reason(frame: dict[str, Any]) -> str:
    fields = ("post_type", "message_type", "notice_type", "request_type", "meta_event_type",
              "sub_type")  # fmt: skip
    shown = ", ".join(f"{k}={str(frame[k])[:16]!r}" for k in fields if k in frame)
    return f"no event type for {shown or 'a frame without type fields'}"


def _check_id_range(event: Event, post_type: str, frame: dict[str, Any]) -> None:
    """QQ ids and message ids are 64-bit at most: a bigger one (what the models accept, and
    the database refuses) is a broken frame, refused here rather than at the insert."""
    for name in ID_FIELDS:
        value = getattr(event, name, None)
        if isinstance(value, int) and not INT64_MIN <= value <= INT64_MAX:
            raise EventRefused(
                post_type or "untyped", _ids(frame), f"{name} out of range", field=name
            )


def _unix_time(value: Any) -> int | None:
    """A QQ timestamp (seconds; an int, a whole float or a decimal string), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        value = int(value) if math.isfinite(value) else None
    elif isinstance(value, str):
        value = int(value.strip()) if value.strip().isdecimal() and len(value) < 16 else None
    return value if isinstance(value, int) and 0 <= value < MAX_UNIX_TIME else None


def _sender(value: Any, user_id: Any) -> dict[str, Any]:
    """The sender's fields of the right type; a sender that is not an object is the speaker."""
    if not isinstance(value, dict):
        return {"user_id": user_id} if fits_int64(user_id) else {}
    return {
        key: item
        for key, item in value.items()
        if (key in _SENDER_INTS and fits_int64(item)) or (key in _SENDER_STRS and
                                                           isinstance(item, str))
    }  # fmt: skip


def _anonymous(value: Any) -> dict[str, Any] | None:
    if not isinstance(value, dict):
        return None
    fits = (fits_int64(value.get("id")) and isinstance(value.get("name"), str)
            and isinstance(value.get("flag"), str))  # fmt: skip
    return value if fits else None


def repair_message(data: dict[str, Any], *, now: float | None = None) -> list[str]:
    """Keep a message whose only faults are fields no step needs as sent: a time that is not
    a QQ timestamp becomes the time it was read, a sender of the wrong shape keeps its fields
    of the right type, a bad font / raw message / sub-type / anonymous gets its default, a
    `message` that is no message is its raw CQ text (or empty). Changes `data` in place;
    returns the names of the repaired fields (the ids are not repaired: without them there is
    no line to keep)."""
    repaired = []
    kind = data.get("message_type")
    stamp = _unix_time(data.get("time"))
    if stamp is None:
        stamp = int(time.time() if now is None else now)
        repaired.append("time")
    data["time"] = stamp
    sender = _sender(data.get("sender"), data.get("user_id"))
    if sender != data.get("sender"):
        repaired.append("sender")
    data["sender"] = sender
    raw = data.get("raw_message")
    anonymous = data.get("anonymous")
    sub_type = "normal" if kind == "group" else "friend"
    as_sent: Any = raw if isinstance(raw, str) else []  # a `message` that is none: its raw text
    defaults: tuple[tuple[str, bool, Any], ...] = (
        ("sub_type", isinstance(data.get("sub_type"), str), sub_type),
        ("font", fits_int64(data.get("font")), 0),
        ("raw_message", isinstance(raw, str), ""),
        ("anonymous", anonymous is None or _anonymous(anonymous) is not None, None),
        ("message", isinstance(data.get("message"), (list, str)), as_sent),
    )  # fmt: skip
    for key, valid, default in defaults:
        if not valid:
            if key in data:
                repaired.append(key)
            data[key] = default
    for key, kind_ok in (("to_me", bool), ("reply", dict)):
        if key in data and not isinstance(data[key], kind_ok):
            del data[key]
            repaired.append(key)
    return repaired


def parse_event(adapter: type[Adapter], json_data: dict[str, Any]) -> Event:
    """The event the stock adapter's `json_to_event` gives for a frame, built without a
    `TypeAdapter` per segment: its models in its order (most specific first), then, for
    anything but a message, its base `Event`. Raises `EventRefused` when none accepts the
    frame — and for a message no message model accepts: as a base `Event` it would only
    fail later, in NoneBot's command parsing, with a traceback."""
    data = dict(json_data)  # the models' before-validators write `original_message` into it
    post_type = str(json_data.get("post_type", ""))[:32]
    if post_type in MESSAGE_POST_TYPES and data.get("message_type") in ("group", "private"):
        repaired = repair_message(data)
        if repaired:
            _note_repair(post_type, json_data, repaired)
    message = built_message(data.get("message"))
    if message is not None:
        data["message"] = message
    try:  # the adapter's type trie joins the type fields: a non-string one is a TypeError
        models = list(adapter.get_event_model(data))  # most specific first, down to `Event`
    except (TypeError, ValueError):
        raise EventRefused(
            post_type or "untyped", _ids(json_data), _type_reason(json_data), field="type"
        ) from None
    if post_type in MESSAGE_POST_TYPES:
        models = [m for m in models if issubclass(m, MessageEvent)]
    elif Event not in models:
        models.append(Event)
    first: ValidationError | None = None
    for model in models:
        try:
            event = model.model_validate(data)
        except ValidationError as exc:
            first = first or exc
            continue
        _check_id_range(event, post_type, json_data)
        return event
    if first is None:  # no model of that type (a message whose message_type is "notice")
        raise EventRefused(
            post_type or "untyped", _ids(json_data), _type_reason(json_data), field="type"
        )
    errors = first.errors()
    field = str(errors[0]["loc"][0]) if errors and errors[0]["loc"] else "frame"
    raise EventRefused(post_type or "untyped", _ids(json_data), _reason(first), field=field[:24])
