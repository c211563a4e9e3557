"""The firing decisions (pure): on time, late with a note, missed; which account fires; the
fired text; the cheap model's answer read back."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from pallas.core.clock import FakeClock
from pallas.features.reminders import (
    CHINA_TZ,
    ModelTimeReader,
    Reminder,
    ReminderConfig,
    fired_message,
    firing_decision,
    parse_time_answer,
    pick_accounts,
)
from pallas.providers.cheap_calls import CheapCalls

NOW = datetime(2026, 12, 6, 10, 30, tzinfo=CHINA_TZ)


def test_firing_decision_by_lateness() -> None:
    grace = 30 * 60.0
    assert firing_decision(1000.0, 1000.5, grace_s=grace).action == "send"
    assert firing_decision(1000.0, 1000.0 + 119, grace_s=grace).action == "send"  # pacing lag
    late = firing_decision(1000.0, 1000.0 + 600, grace_s=grace)
    assert (late.action, late.late_s, late.reason) == ("late", 600.0, "within_grace")
    assert firing_decision(1000.0, 1000.0 + grace + 1, grace_s=grace).action == "missed"
    assert firing_decision(1000.0, 1000.0 + 600, grace_s=0).action == "missed"


def test_the_account_that_took_it_fires_it() -> None:
    assert pick_accounts(1, {1, 2}, {1, 2}) == (1, 2)  # the owner first, then the others
    assert pick_accounts(1, {2}, {1, 2}) == ()  # served by another process: leave it
    assert pick_accounts(1, {3, 2}, {2, 3}) == (2, 3)  # offline everywhere: ours take over
    assert pick_accounts(1, set(), set()) == ()


def _reminder(**fields: Any) -> Reminder:
    base: dict[str, Any] = dict(
        id=1, bot_id=1, group_id=5, user_id=42, everyone=False, text="交电费", source="",
        rule="", next_at=0.0, status="firing", created_at=0.0, fired_at=None, fire_count=0,
        note="",
    )  # fmt: skip
    base.update(fields)
    return Reminder(**base)


def test_fired_text_is_as_written_and_ats_only_the_owner() -> None:
    on_time = firing_decision(0.0, 0.0, grace_s=1800)
    assert fired_message(_reminder(), on_time) == [
        {"type": "at", "data": {"qq": "42"}},
        {"type": "text", "data": {"text": " 到时间啦：交电费"}},
    ]
    # a text naming someone else is plain text: the only real @ is the owner's
    segments = fired_message(_reminder(text="@小王 [CQ:at,qq=7] 交周报"), on_time)
    assert [s["type"] for s in segments] == ["at", "text"]
    assert fired_message(_reminder(everyone=True), on_time) == [
        {"type": "text", "data": {"text": "【提醒】交电费"}}
    ]
    late = firing_decision(0.0, 900.0, grace_s=1800)
    assert fired_message(_reminder(group_id=0), late) == [
        {"type": "text", "data": {"text": "到时间啦：交电费（我刚才不在线，晚了15分钟）"}}
    ]


def test_the_models_answer_is_checked() -> None:
    ok = parse_time_answer('{"when": "2026-12-06 10:40"}', NOW, max_days=366)
    assert ok.when == datetime(2026, 12, 6, 10, 40, tzinfo=CHINA_TZ) and ok.reason == "model"
    assert parse_time_answer('{"when": ""}', NOW, max_days=366).reason == "model_unsure"
    assert parse_time_answer('{"when": "2026-12-06 09:00"}', NOW, max_days=366).when is None
    assert parse_time_answer('{"when": "2030-01-01 09:00"}', NOW, max_days=366).when is None
    assert parse_time_answer("好的～", NOW, max_days=366).reason == "not_json"
    assert parse_time_answer('{"when": "明天"}', NOW, max_days=366).reason == "bad_format"


@dataclass
class _Result:
    ok: bool
    text: str
    error: str = ""


class _Usage:
    async def totals(self, **_: Any) -> Any:
        return type("Totals", (), {"tokens": 0})()


class _Llm:
    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.calls: list[dict[str, Any]] = []

    async def complete(self, task: str, messages: list[dict[str, Any]], **kw: Any) -> _Result:
        self.calls.append({"task": task, "messages": messages, **kw})
        return _Result(True, self.answer)


async def test_the_cheap_model_reads_a_time_the_rules_cannot() -> None:
    llm = _Llm('{"when": "2026-12-06 10:40"}')
    cheap = CheapCalls(
        clock=FakeClock(NOW.timestamp()), usage=cast(Any, _Usage()), llm=cast(Any, llm)
    )
    reader = ModelTimeReader(cheap=cheap, config=lambda _g: ReminderConfig())
    found = await reader.read("过一会儿提醒我收衣服", NOW, bot_id=1, group_id=5)
    assert found.when == datetime(2026, 12, 6, 10, 40, tzinfo=CHINA_TZ)
    (call,) = llm.calls
    assert call["task"] == "cheap" and call["json_schema"]["name"] == "reminder_time"
    assert "现在：2026-12-06 10:30（周日）" in call["messages"][1]["content"]
    off = ModelTimeReader(cheap=cheap, config=lambda _g: ReminderConfig(model_fallback=False))
    assert (await off.read("过一会儿提醒我", NOW, bot_id=1, group_id=5)).reason == "off"
    assert len(llm.calls) == 1


def test_a_persona_phrasing_is_used_only_when_it_carries_the_text() -> None:
    from pallas.features.reminders import usable_phrase

    assert usable_phrase("到点啦，快去交电费～", "交电费") == "到点啦，快去交电费～"
    assert usable_phrase("到点啦，快去缴电费～", "交电费") is None  # reworded: not as written
    assert usable_phrase("@全体成员 交电费", "交电费") is None
    assert usable_phrase("交电费" + "啦" * 40, "交电费") is None  # runs long
    assert usable_phrase("【系统】交电费", "交电费") is None


async def test_the_phraser_is_off_by_default_and_used_when_on() -> None:
    from pallas.features.reminders import ReminderPhraser

    llm = _Llm("到点啦，快去交电费～")

    def phraser(on: bool) -> ReminderPhraser:
        return ReminderPhraser(
            clock=FakeClock(NOW.timestamp()), usage=cast(Any, _Usage()), llm=cast(Any, llm),
            config=lambda _g: ReminderConfig(persona_phrasing=on), persona_name=lambda _g: "帕拉斯",
        )  # fmt: skip

    assert await phraser(False).phrase(_reminder()) is None and llm.calls == []
    assert await phraser(True).phrase(_reminder()) == "到点啦，快去交电费～"
    assert "你是帕拉斯" in llm.calls[0]["messages"][0]["content"]
    assert await phraser(True).phrase(_reminder(everyone=True)) is None  # notices: as written
    phrased = fired_message(
        _reminder(), firing_decision(0.0, 0.0, grace_s=1), "到点啦，快去交电费～"
    )
    assert phrased[-1] == {"type": "text", "data": {"text": " 到点啦，快去交电费～"}}
