"""OneBot v11 frames → NoneBot events: the stock adapter's parse, without its per-segment cost.

The stock `Adapter.json_to_event` validates the event with `type_validate_python(model, data)`,
and the event's `message` field validates each segment dict with another
`type_validate_python(MessageSegment, segment)` — a new pydantic `TypeAdapter`, its core
schema rebuilt, for every segment, twice per message (`message` and `original_message`): about
half of the parse. `parse_event` gives the same `Event` objects cheaper:

- a `message` that is a list of well-formed segment dicts (`type` a str, `data` a dict with str
  keys — what every OneBot implementation sends) is built into the adapter's `Message` directly:
  `MessageSegment(type, dict(data))` is what the validation produced (extra keys ignored, `data`
  copied shallowly); anything else (a CQ string, a malformed segment) is left for the stock
  validation, which builds or refuses it as before;
- the adapter's first (most specific) event model for the frame is validated with its own
  validator (`model.model_validate`, which is what a `TypeAdapter` of a `BaseModel` runs); a
  frame it refuses goes to the stock parse as it came (its fallbacks down to the base `Event`,
  its log lines, its refusal).

The caller's dict is not modified (the stock parse adds `original_message` to it).
`tests/unit/core/test_event_parse.py` compares both parses over a table of real and broken
frames. NoneBot itself is not patched: only Pallas's adapter uses this.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nonebot.adapters.onebot.v11 import Adapter, Message, MessageSegment
from nonebot.adapters.onebot.v11.event import Event


def built_message(segments: Any) -> Message | None:
    """`segments` as the adapter's `Message`, or None when the stock validation must judge."""
    if type(segments) is not list:
        return None
    built = []
    for segment in segments:
        if type(segment) is not dict:
            return None
        kind, data = segment.get("type"), segment.get("data")
        if type(kind) is not str or type(data) is not dict:
            return None
        if not all(type(key) is str for key in data):
            return None
        built.append(MessageSegment(type=kind, data=dict(data)))
    return Message(built)


def parse_event(
    adapter: type[Adapter],
    json_data: dict[str, Any],
    stock: Callable[[dict[str, Any]], Event | None],
) -> Event | None:
    """What `stock(json_data)` — the adapter's own `json_to_event` — returns for an event
    frame, built without a `TypeAdapter` per segment. A frame the adapter's first (most
    specific) event model refuses is handed to `stock` itself, untouched: its fallbacks (down
    to the base `Event`, which keeps the raw dicts), its log lines, its refusal."""
    data = dict(json_data)  # the models' before-validators write `original_message` into it
    message = built_message(json_data.get("message"))
    if message is not None:
        data["message"] = message
    model = next(iter(adapter.get_event_model(data)), None)
    if model is None:
        return stock(json_data)
    try:
        return model.model_validate(data)
    except Exception:  # malformed: the stock parse tries its fallbacks, logs and decides
        return stock(json_data)


__all__ = ["built_message", "parse_event"]
