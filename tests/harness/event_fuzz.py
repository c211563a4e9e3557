"""Seeded mutations of valid OneBot v11 events: what a broken or hostile implementation sends.

`fuzzed_events(seed, n, …)` starts from well-formed events (group messages with every common
segment type, private messages, notices, requests, meta events) and applies one to three
mutations each: a field set to a value of the wrong type or range, a field removed, a segment
replaced by something that is not a segment, a broken CQ string, a huge or control-character
text, a lone surrogate, NaN. The same seed gives the same events, so a failure is reproducible
(`i` is in the ids). Send them with `json.dumps` as it is (`ensure_ascii`): a lone surrogate
travels as its escape, as from a real peer (it cannot be sent as raw UTF-8).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Iterator
from typing import Any

HOSTILE_VALUES: tuple[Any, ...] = (
    None, "", "abc", "12abc", -1, 0, 2**70, 1.5, float("1e308"), True, [], {}, [1, "x"],
    {"a": {"b": None}}, "\u0000\u202e\ufffd", "😀" * 300, "[CQ:at,qq=", "x" * 20_000,
    # issue 44: what a hand-made table missed (the properties in
    # tests/integration/test_edge_properties.py generate these and more)
    "\ud800", "半\udfff截", "😀\ud83d", 2**64, -(2**70), "98765432109876543210123",
    float("nan"), float("inf"), float("-inf"), "1760000000", "\x00",
)  # fmt: skip

SEGMENT_TYPES = ("text", "at", "image", "reply", "face", "record", "json", "forward", "mface")


def _segment(rng: random.Random, i: int) -> dict[str, Any]:
    kind = rng.choice(SEGMENT_TYPES)
    data: dict[str, Any] = {
        "text": {"text": f"第{i}条 消息"},
        "at": {"qq": str(rng.choice([10_001, 20_002, "all"]))},
        "image": {"file": f"{i}.jpg", "url": f"http://127.0.0.1:9/{i}.jpg", "summary": "[图片]"},
        "reply": {"id": str(800_000 + i)},
        "face": {"id": str(rng.randint(0, 300))},
        "record": {"file": f"{i}.amr"},
        "json": {"data": '{"app":"com.tencent.miniapp","prompt":"[分享]"}'},
        "forward": {"id": f"fw{i}"},
        "mface": {"summary": "[表情]", "emoji_id": "x"},
    }[kind]
    return {"type": kind, "data": data}


def _base_event(rng: random.Random, i: int, self_id: int, group_id: int) -> dict[str, Any]:
    user = 30_000 + i % 97
    common = {"time": 1_760_000_000 + i, "self_id": self_id}
    roll = rng.random()
    if roll < 0.6:
        segments = [_segment(rng, i) for _ in range(rng.randint(1, 4))]
        return {
            **common, "post_type": "message", "message_type": "group", "sub_type": "normal",
            "message_id": 700_000 + i, "group_id": group_id, "user_id": user,
            "anonymous": None, "message": segments, "raw_message": f"第{i}条", "font": 0,
            "sender": {"user_id": user, "nickname": f"u{user}", "card": "", "role": "member"},
        }  # fmt: skip
    if roll < 0.7:
        return {
            **common, "post_type": "message", "message_type": "private", "sub_type": "friend",
            "message_id": 700_000 + i, "user_id": user, "message": f"私聊{i}",
            "raw_message": f"私聊{i}", "font": 0, "sender": {"user_id": user, "nickname": "p"},
        }  # fmt: skip
    if roll < 0.85:
        kind = rng.choice(["group_increase", "group_decrease", "group_recall", "notify"])
        return {
            **common, "post_type": "notice", "notice_type": kind, "sub_type": "poke",
            "group_id": group_id, "user_id": user, "operator_id": user,
            "message_id": 700_000 + i - 1, "target_id": self_id,
        }  # fmt: skip
    if roll < 0.93:
        return {
            **common, "post_type": "request", "request_type": rng.choice(["friend", "group"]),
            "sub_type": "add", "user_id": user, "group_id": group_id, "comment": "加我",
            "flag": f"f{i}",
        }  # fmt: skip
    return {**common, "post_type": "meta_event", "meta_event_type": "heartbeat",
            "status": {"online": True}, "interval": 5000}  # fmt: skip


def _paths(event: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every key / index path into the event (what a mutation may hit)."""
    if isinstance(event, dict):
        for key, value in event.items():
            yield (*prefix, key)
            yield from _paths(value, (*prefix, key))
    elif isinstance(event, list):
        for index, value in enumerate(event):
            yield (*prefix, index)
            yield from _paths(value, (*prefix, index))


def _parent(event: Any, path: tuple[Any, ...]) -> Any:
    node = event
    for step in path[:-1]:
        node = node[step]
    return node


def _set_wrong_value(rng: random.Random, event: dict[str, Any]) -> None:
    path = rng.choice(list(_paths(event)))
    _parent(event, path)[path[-1]] = copy.deepcopy(rng.choice(HOSTILE_VALUES))


def _drop_field(rng: random.Random, event: dict[str, Any]) -> None:
    paths = [p for p in _paths(event) if isinstance(_parent(event, p), dict)]
    path = rng.choice(paths)
    del _parent(event, path)[path[-1]]


def _break_segments(rng: random.Random, event: dict[str, Any]) -> None:
    event["message"] = rng.choice([
        [rng.choice(HOSTILE_VALUES), {"type": "text"}, {"data": {"text": "半截"}}],
        [{"type": "text", "data": {"text": "好的"}}, "not-a-seg", 42],
        "[CQ:image,file=[CQ:at,qq=[CQ:reply,id=] 尾巴 [CQ:face,id=9999999999999]",
        "&#91;CQ:at,qq=1&#93;[CQ:" + "a" * 5_000,
        [{"type": rng.choice(SEGMENT_TYPES), "data": rng.choice(HOSTILE_VALUES)}],
    ])  # fmt: skip


def _odd_types(rng: random.Random, event: dict[str, Any]) -> None:
    key = rng.choice(["post_type", "message_type", "sub_type", "notice_type", "meta_event_type"])
    event[key] = rng.choice(["message", "notice", "group", "", "unknown", None, 7])


MUTATIONS: tuple[Callable[[random.Random, dict[str, Any]], None], ...] = (
    _set_wrong_value, _set_wrong_value, _drop_field, _break_segments, _odd_types,
)  # fmt: skip


def fuzzed_events(seed: int, n: int, *, self_id: int, group_id: int) -> Iterator[dict[str, Any]]:
    rng = random.Random(seed)
    for i in range(n):
        event = _base_event(rng, i, self_id, group_id)
        for _ in range(rng.randint(1, 3)):
            rng.choice(MUTATIONS)(rng, event)
        yield event
