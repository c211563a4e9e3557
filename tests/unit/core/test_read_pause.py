"""While an @ holds the loop, event frames wait before parsing; API responses never do."""

from __future__ import annotations

import json

import pytest

from pallas.onebot.adapter import _is_event_frame

EVENT = {"post_type": "message", "message_type": "group", "raw_message": 'say "echo" please'}
RESPONSE = {"status": "ok", "retcode": 0, "data": {"post_type": "message"}, "echo": "17"}


@pytest.mark.parametrize(
    ("frame", "is_event"),
    [
        (json.dumps(EVENT), True),  # the word echo in a member's text is escaped: \"echo\"
        (json.dumps(EVENT).encode(), True),
        (json.dumps(RESPONSE), False),  # get_msg's data may carry a post_type of its own
        (json.dumps(RESPONSE).encode(), False),
        (json.dumps({"post_type": "meta_event", "meta_event_type": "heartbeat"}), True),
    ],
)
def test_event_frames_and_api_responses_are_told_apart(frame: str | bytes, is_event: bool) -> None:
    assert _is_event_frame(frame) is is_event
