"""The typed `TurnSnapshot` writes the same JSON (keys and their order) as the dict the reply
path used to grow by hand, so `pallas context --json` and the console read it unchanged."""

from __future__ import annotations

import json

from pallas.product.llm.context.snapshot import TurnSnapshot

BASE = {
    "decision": {"outcome": "reply", "reason": "rule_reply"},
    "sections": [{"id": "persona", "chars": 10, "tokens": 5}],
    "messages": [{"role": "user", "chars": 2}],
    "budget": {},
    "pipeline": [{"id": "persona", "status": "ok", "ms": 0.1}],
    "retrieval": {"traces": {}, "stage_ms": {}, "failed": []},
    "stage_ms": {"assemble": 1.0},
    "processor_traces": {},
    "request": [{"role": "user", "content": "hi"}],
    "warnings": [],
    "rules": {},
}


def _by_hand() -> dict:
    """The order chat_turn.py fills the snapshot dict in (issue 10 before the typed record)."""
    data = json.loads(json.dumps(BASE))
    data["merge_wait"] = {"waited": False}
    data["request"], data["vision"] = [{"role": "user", "content": "hi!"}], {"attached": 0}
    data["usage"] = {"prompt_tokens": 3, "completion_tokens": 2, "latency_ms": 5.0}
    data["response"] = "你好"
    data["output_regex"] = []
    data["bubbles"] = ["你好"]
    data["parse"] = {"reason": "ok", "notes": []}
    data["sent_message_ids"] = [42]
    data["stage_ms"]["total_local"] = 2.0
    return data


def test_typed_snapshot_writes_the_same_json_in_the_same_order():
    snap = TurnSnapshot(**json.loads(json.dumps(BASE)))
    assert json.dumps(snap.to_dict(), ensure_ascii=False) == json.dumps(BASE, ensure_ascii=False)
    snap.merge_wait = {"waited": False}
    snap.request, snap.vision = [{"role": "user", "content": "hi!"}], {"attached": 0}
    snap.usage = {"prompt_tokens": 3, "completion_tokens": 2, "latency_ms": 5.0}
    snap.response = "你好"
    snap.output_regex = []
    snap.bubbles = ["你好"]
    snap.parse = {"reason": "ok", "notes": []}
    snap.sent_message_ids = [42]
    snap.stage_ms["total_local"] = 2.0
    assert json.dumps(snap.to_dict(), ensure_ascii=False) == json.dumps(
        _by_hand(), ensure_ascii=False
    )


def test_unset_later_fields_are_left_out_and_extra_keys_come_last():
    snap = TurnSnapshot(**json.loads(json.dumps(BASE)))
    snap.extra["experiment"] = {"x": 1}
    data = snap.to_dict()
    assert "tool" not in data and "svars" not in data and "response" not in data
    assert list(data)[-1] == "experiment"
