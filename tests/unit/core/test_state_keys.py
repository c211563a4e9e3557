"""StateStore keys keep their shapes (a Redis shared across versions relies on them)."""

from __future__ import annotations

import pytest

from pallas.core import state_keys as k


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        (k.merge_parked(1, 2, 3), "merge:1:2:3"),
        (k.merge_lines(1, 2, 3), "lines:1:2:3"),
        (k.freshness("latest", 1, 2, 3), "fresh:latest:1:2:3"),
        (k.bot_reply(1, 2, 9), "botreply:1:2:9"),
        (k.bot_reply_index(1), "botreply-index:1"),
        (k.upload(1, 2, 3), "upload:1:2:3"),
        (k.sticker_sent(1, 2, 9), "sticker:sent:1:2:9"),
        (k.learning_generation(1, 2), "learning:gen:1:2"),
        (k.memory_extraction("lock", 1, 2), "memory:extract:lock:1:2"),
        (k.worldbook_state(1, 2), "worldbook:state:1:2"),
        (k.worldbook_turn(1, 2), "worldbook:turn:1:2"),
        (k.session_summary("lock", 1, 2, 3), "session_summary:lock:1:2:3"),
    ],
)
def test_key_shapes(key: str, expected: str) -> None:
    assert key == expected


def test_every_key_belongs_to_a_registered_namespace_and_prefixes_are_unique() -> None:
    prefixes = [n.prefix for n in k.NAMESPACES]
    assert len(prefixes) == len(set(prefixes))
    built = [
        k.merge_parked(1, 2, 3),
        k.freshness("answered", 1, 2, 3),
        k.bot_reply_index(1),
        k.sticker_sent(1, 2, 3),
        k.memory_extraction("pending", 1, 2),
        k.session_summary("x", 1, 2, 3),
    ]
    for key in built:
        assert any(key.startswith(prefix + ":") for prefix in prefixes), key
