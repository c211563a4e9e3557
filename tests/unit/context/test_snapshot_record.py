"""The typed `TurnSnapshot` writes the same JSON (keys and their order) as the dict the reply
path used to grow by hand, so `pallas context --json` and the console read it unchanged."""

from __future__ import annotations

import json
from dataclasses import replace

from pallas.context.snapshot import TurnSnapshot
from pallas.providers.client import CompletionResult, LLMError
from pallas.turn.contracts import AnswerRecord, ModelCall, snapshot_json

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
    snap = replace(snap, merge_wait={"waited": False})
    snap = replace(snap, request=[{"role": "user", "content": "hi!"}], vision={"attached": 0})
    snap = replace(snap, usage={"prompt_tokens": 3, "completion_tokens": 2, "latency_ms": 5.0})
    snap = replace(snap, response="你好", output_regex=[], bubbles=["你好"])
    snap = replace(snap, parse={"reason": "ok", "notes": []}, sent_message_ids=[42])
    snap = replace(snap, stage_ms={**snap.stage_ms, "total_local": 2.0})
    assert json.dumps(snap.to_dict(), ensure_ascii=False) == json.dumps(
        _by_hand(), ensure_ascii=False
    )


def test_unset_later_fields_are_left_out_and_extra_keys_come_last():
    snap = TurnSnapshot(**json.loads(json.dumps(BASE)))
    snap.extra["experiment"] = {"x": 1}
    data = snap.to_dict()
    assert "tool" not in data and "svars" not in data and "response" not in data
    assert list(data)[-1] == "experiment"


def test_the_reply_steps_records_complete_the_snapshot_in_the_stored_order():
    """`PreparedTurn.snapshot` + `ModelCall` + `AnswerRecord` → the same JSON, byte for byte."""
    prepared = replace(TurnSnapshot(**json.loads(json.dumps(BASE))), merge_wait={"waited": False})
    call = ModelCall(
        CompletionResult(
            ok=True, text="你好", prompt_tokens=3, completion_tokens=2, latency_ms=5.0
        ),
        request=[{"role": "user", "content": "hi!"}],
        vision={"attached": 0},
    )
    answer = AnswerRecord(
        output_regex=[],
        bubbles=["你好"],
        parse={"reason": "ok", "notes": []},
        sent_message_ids=[42],
        total_local_ms=2.0,
    )
    assert json.dumps(snapshot_json(prepared, call, answer), ensure_ascii=False) == json.dumps(
        _by_hand(), ensure_ascii=False
    )
    assert prepared.stage_ms == BASE["stage_ms"]  # the prepared record is left as it was


def test_an_error_or_silent_turn_stores_only_what_it_reached():
    prepared = TurnSnapshot(**json.loads(json.dumps(BASE)))
    failed = CompletionResult(ok=False, error=LLMError.TIMEOUT, latency_ms=3000.04)
    call = ModelCall(failed, request=[{"role": "user", "content": "hi"}], vision={})
    data = snapshot_json(prepared, call)
    assert list(data)[-3:] == ["vision", "usage", "response"]
    assert data["usage"] == {"prompt_tokens": 0, "completion_tokens": 0, "latency_ms": 3000.0}
    silent = AnswerRecord(output_regex=[], bubbles=[], parse={"reason": "empty", "notes": []})
    data = snapshot_json(prepared, replace(call, result=CompletionResult(ok=True)), silent)
    assert "sent_message_ids" not in data and "total_local" not in data["stage_ms"]
    assert list(data)[-3:] == ["output_regex", "bubbles", "parse"]
