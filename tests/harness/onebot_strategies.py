"""Hypothesis strategies for OneBot v11 frames: kept messages, droppable faults, hostile input.

Three kinds of frame, so that each property can say what must happen to it:

- `kept_messages`: a group message a member really sent, with a marker text segment. It must be
  stored exactly once, whatever else it holds: any Unicode (lone surrogates, NUL, controls, CQ
  codes inside text, bidi marks, a long text) and *droppable faults* — a quoted message id or
  an @ target out of every integer range, a time that is NaN, negative, a word or 2**70, a
  sender of the wrong shape, a malformed segment beside the marker, extra fields.
- `hostile_frames`: anything else a broken or hostile implementation may send: events of
  every post type with any field replaced by any JSON value (ints far past 64 bits, floats,
  NaN / Infinity, numbers as strings, lists, objects nested deep), fields missing, frames that
  are not objects. Each may be refused, never at the cost of the connection.

Frames are JSON text as a peer sends them (`json.dumps`, so a lone surrogate travels as its
`\\udXXX` escape and NaN as the bare `NaN` that Python's json and most JS encoders emit).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

# every Unicode category, surrogates (Cs) and controls (Cc) included
any_char = st.characters(codec=None, exclude_categories=())
any_text = st.text(any_char, max_size=40)
odd_text = st.one_of(
    any_text,
    st.sampled_from(
        [
            "\ud800",
            "a\udfffb",
            "\x00",
            "前\x00后",
            "\u202e\ufeff\u200b",
            "[CQ:at,qq=all]",
            "[CQ:reply,id=99999999999999999999999]",
            "&#91;CQ:image,file=x&#93;",
            "😀\ud83d",
            "\r\n\t\x7f\x1b[31m",
        ]
    ),
)
long_text = st.integers(min_value=2_000, max_value=60_000).map(lambda n: "长" * n)

EDGE_INTS = (
    0, -1, 1, 2**31 - 1, 2**31, 2**32, 2**53 + 1, 2**63 - 1, 2**63, -(2**63) - 1, 2**64,
    10**20, -(10**22), 2**70,
)  # fmt: skip
any_int = st.one_of(st.sampled_from(EDGE_INTS), st.integers(min_value=-(2**72), max_value=2**72))
any_float = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([math.nan, math.inf, -math.inf, 1e308, -0.0, 1.5]),
)
scalar = st.one_of(
    st.none(),
    st.booleans(),
    any_int,
    any_float,
    odd_text,
    any_int.map(str),  # numbers as strings
    any_float.map(str),
)
any_json = st.recursive(
    scalar,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
deep = st.integers(min_value=5, max_value=40).map(lambda n: json.loads("[" * n + "]" * n))

SEGMENT_KINDS = ("text", "at", "image", "reply", "face", "record", "json", "forward", "mface")


def _segment_data(kind: str, value: Any) -> dict[str, Any]:
    return {
        "text": {"text": value},
        "at": {"qq": value},
        "image": {"file": "a.jpg", "url": value},
        "reply": {"id": value},
        "face": {"id": value},
        "record": {"file": value},
        "json": {"data": value},
        "forward": {"id": value},
        "mface": {"summary": value, "emoji_id": value},
    }[kind]


odd_segment = st.one_of(
    st.builds(
        lambda kind, value: {"type": kind, "data": _segment_data(kind, value)},
        st.sampled_from(SEGMENT_KINDS),
        st.one_of(scalar, any_json),
    ),
    st.builds(lambda v: {"type": "text", "data": {"text": v}}, long_text),
    any_json,  # not a segment at all: dropped, the rest of the message kept
)


@dataclass(frozen=True)
class Kept:
    """A message that must be stored once: its frame, its id and the marker it carries."""

    message_id: int
    marker: str
    frame: dict[str, Any]


@st.composite
def kept_messages(
    draw: st.DrawFn, *, self_id: int, group_id: int, message_id: int, marker: str
) -> Kept:
    """A member's group message with `marker` in a text segment, and droppable faults around."""
    user = draw(st.integers(min_value=10_000, max_value=2**40))
    before = draw(st.lists(odd_segment, max_size=3))
    after = draw(st.lists(odd_segment, max_size=2))
    marked = {"type": "text", "data": {"text": draw(odd_text) + marker + draw(odd_text)}}
    frame: dict[str, Any] = {
        "time": draw(st.one_of(st.just(1_760_000_000), any_int, any_float, odd_text)),
        "self_id": self_id,
        "post_type": "message",
        "message_type": "group",
        "sub_type": draw(st.sampled_from(["normal", "anonymous", "notice", "", "x"])),
        "message_id": message_id,
        "group_id": group_id,
        "user_id": user,
        "anonymous": None,
        "message": [*before, marked, *after],
        "raw_message": draw(st.one_of(odd_text, scalar)),
        "font": draw(st.one_of(st.just(0), scalar)),
        "sender": draw(
            st.one_of(
                st.fixed_dictionaries(
                    {
                        "user_id": st.just(user),
                        "nickname": odd_text,
                        "card": odd_text,
                        "role": st.sampled_from(["member", "admin", "owner", "", "王"]),
                    }
                ),
                any_json,
            )
        ),
    }
    extra = draw(st.dictionaries(st.sampled_from(["extra", "x_x", "message_seq", "real_id"]),
                                 any_json, max_size=2))  # fmt: skip
    frame.update(extra)
    return Kept(message_id, marker, frame)


def _base(post_type: str, self_id: int, group_id: int) -> dict[str, Any]:
    common = {"time": 1_760_000_000, "self_id": self_id, "post_type": post_type}
    if post_type == "message":
        return {**common, "message_type": "private", "sub_type": "friend", "message_id": 5,
                "user_id": 10_009, "message": "私聊", "raw_message": "私聊", "font": 0,
                "sender": {"user_id": 10_009, "nickname": "p"}}  # fmt: skip
    if post_type == "notice":
        return {**common, "notice_type": "group_recall", "group_id": group_id,
                "user_id": 10_009, "operator_id": 10_009, "message_id": 5}  # fmt: skip
    if post_type == "request":
        return {**common, "request_type": "group", "sub_type": "add", "user_id": 10_009,
                "group_id": group_id, "comment": "加我", "flag": "f"}  # fmt: skip
    if post_type == "message_sent":
        return {**common, "message_type": "group", "sub_type": "normal", "message_id": 6,
                "group_id": group_id, "user_id": self_id, "message": [], "raw_message": "",
                "font": 0, "sender": {"user_id": self_id}}  # fmt: skip
    return {**common, "meta_event_type": "heartbeat", "status": {"online": True},
            "interval": 5000}  # fmt: skip


@st.composite
def hostile_frames(draw: st.DrawFn, *, self_id: int, group_id: int) -> str:
    """Any frame a broken or hostile implementation may send (see the module doc)."""
    kind = draw(st.sampled_from(["message", "notice", "request", "meta_event", "message_sent"]))
    frame = _base(kind, self_id, group_id)
    for key in draw(st.lists(st.sampled_from(sorted(frame)), max_size=3)):
        frame[key] = draw(st.one_of(scalar, any_json, deep))
    for key in draw(st.lists(st.sampled_from(sorted(frame)), max_size=2)):
        frame.pop(key, None)
    if draw(st.booleans()):
        frame["message"] = draw(st.lists(odd_segment, max_size=4))
    whole = draw(
        st.one_of(
            st.just(frame),
            st.just(frame),
            st.just(frame),
            any_json,
            deep,
        )
    )
    return json.dumps(whole)


def frame_text(frame: dict[str, Any]) -> str:
    return json.dumps(frame)


__all__ = ["Kept", "any_json", "frame_text", "hostile_frames", "kept_messages", "odd_text"]
