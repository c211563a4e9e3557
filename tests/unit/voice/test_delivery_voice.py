"""A spoken reply goes out as its `record` segment alone; when the implementation refuses the
record, the bubble's text goes out instead and the turn is still delivered."""

from __future__ import annotations

import random
from typing import Any

from pallas.core.clock import FakeClock
from pallas.core.sending import Target
from pallas.core.state import MemoryStateStore
from pallas.features.voice import record_segment
from pallas.turn.parts.delivery import DeliveryPlan, deliver
from tests.harness.fake_tts import sine_wav


class Sender:
    def __init__(self, refuse_records: bool = False) -> None:
        self.sent: list[list[dict[str, Any]]] = []
        self.refuse_records = refuse_records

    async def send(self, target: Target, segments: list[dict[str, Any]]) -> int | None:
        if self.refuse_records and segments[0]["type"] == "record":
            return None
        self.sent.append(segments)
        return 100 + len(self.sent)


async def no_wait(_seconds: float) -> None:
    return None


async def _deliver(plan: DeliveryPlan, sender: Sender) -> Any:
    store = MemoryStateStore(FakeClock())
    return await deliver(plan, sender, store, rng=random.Random(0), sleep=no_wait)


async def test_a_spoken_reply_is_one_record_segment() -> None:
    sender = Sender()
    voice = record_segment(sine_wav(0.3))
    result = await _deliver(DeliveryPlan(1, Target.group(2), ("好哦",), voice=voice), sender)
    assert sender.sent == [[voice]]
    assert (result.complete, result.reason, result.delivered_texts) == (
        True, "delivered_voice", ("好哦",))  # fmt: skip


async def test_a_refused_record_falls_back_to_the_text() -> None:
    sender = Sender(refuse_records=True)
    plan = DeliveryPlan(1, Target.group(2), ("好哦",), voice=record_segment(sine_wav(0.3)))
    result = await _deliver(plan, sender)
    assert sender.sent == [[{"type": "text", "data": {"text": "好哦"}}]]
    assert (result.complete, result.reason) == (True, "delivered_text:voice_send_failed")


async def test_without_voice_nothing_changes() -> None:
    sender = Sender()
    result = await _deliver(DeliveryPlan(1, Target.group(2), ("好哦", "再见")), sender)
    assert [s[0]["type"] for s in sender.sent] == ["text", "text"]
    assert result.reason == "delivered"
