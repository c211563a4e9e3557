"""Refused frames are counted by kind and kept, capped, in a file `pallas replay` can read."""

from __future__ import annotations

import json
from pathlib import Path

from pallas.onebot import refused as refused_module
from pallas.onebot.refused import RefusedFrames


def test_a_refused_event_is_kept_as_sent_with_why(tmp_path: Path) -> None:
    keeper = RefusedFrames(tmp_path / "refused", clock=lambda: 1_760_000_000.0)
    event = {"post_type": "message", "message_type": "group", "user_id": 2**70, "x": "\ud800"}
    keeper.keep("event:message:user_id", "message event: user_id out of range", event)
    keeper.keep("frame:not_json", "not_json", b"{not json\n\xff")
    keeper.close()
    lines = (tmp_path / "refused" / "frames.jsonl").read_text(encoding="utf-8").splitlines()
    first, second = (json.loads(line) for line in lines)
    assert first["user_id"] == 2**70 and first["post_type"] == "message"  # replayable as sent
    assert first["_pallas_refused"] == {
        "kind": "event:message:user_id",
        "reason": "message event: user_id out of range",
        "at": 1_760_000_000.0,
    }
    assert second["raw"] == "{not json\n\ufffd"
    assert keeper.counts == {"event:message:user_id": 1, "frame:not_json": 1}


def test_a_flood_is_counted_not_stored_whole(tmp_path: Path) -> None:
    keeper = RefusedFrames(tmp_path)
    for i in range(refused_module.KEPT_PER_MINUTE + 50):
        keeper.keep("frame:too_deep", "too_deep", f"[[[{i}")
    keeper.close()
    lines = (tmp_path / "frames.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == refused_module.KEPT_PER_MINUTE
    assert keeper.counts["frame:too_deep"] == refused_module.KEPT_PER_MINUTE + 50
    assert keeper.summary() == f"frame:too_deep {refused_module.KEPT_PER_MINUTE + 50}"


def test_without_a_folder_only_counts() -> None:
    keeper = RefusedFrames(None)
    keeper.keep("frame:too_large", "too_large", "x")
    assert keeper.counts["frame:too_large"] == 1 and keeper.path is None


def test_an_unwritable_folder_stops_keeping_and_keeps_counting(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    keeper = RefusedFrames(blocker / "refused")
    keeper.keep("frame:not_json", "not_json", "x")
    keeper.keep("frame:not_json", "not_json", "y")
    assert keeper.path is None and keeper.counts["frame:not_json"] == 2
