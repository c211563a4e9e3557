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

from typing import Any

from nonebot.adapters.onebot.v11 import Adapter, Message, MessageEvent, MessageSegment
from nonebot.adapters.onebot.v11.event import Event
from pydantic import ValidationError

ID_FIELDS = ("self_id", "message_id", "group_id", "user_id", "operator_id", "target_id")
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
MESSAGE_POST_TYPES = frozenset({"message"})  # NapCat's message_sent has only the base Event


class EventRefused(ValueError):
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


def parse_event(adapter: type[Adapter], json_data: dict[str, Any]) -> Event:
    """The event the stock adapter's `json_to_event` gives for a frame, built without a
    `TypeAdapter` per segment: its models in its order (most specific first), then, for
    anything but a message, its base `Event`. Raises `EventRefused` when none accepts the
    frame — and for a message no message model accepts: as a base `Event` it would only
    fail later, in NoneBot's command parsing, with a traceback."""
    data = dict(json_data)  # the models' before-validators write `original_message` into it
    message = built_message(json_data.get("message"))
    if message is not None:
        data["message"] = message
    post_type = str(json_data.get("post_type", ""))[:32]
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
