"""`pallas replay` runs the live cost guard: replayed LLM calls match what the bot would make."""

from __future__ import annotations

from pallas.config import GroupConfig
from tests.unit.cli.test_replay import ALICE, BOB, BOT, T0, at, bot_line, msg, run

QUIET = {"ambient": {"enabled": False}, "cooldown": {"chat_cooldown_s": 0}}


def config(**cost: object) -> GroupConfig:
    return GroupConfig.model_validate({"routing": QUIET, "cost": cost})


def spam(user: int, count: int, *, start: float = T0, gap: float = 20.0, mid: int = 100):
    return [msg(user, mid + i, start + i * gap, at(BOT), f"问题{i}") for i in range(count)]


def test_member_limit_caps_replayed_llm_calls() -> None:
    lines = spam(ALICE, 10, gap=5.0)  # 10 @s in 45 s: a flood; burst 3, one turn per 100 s
    report = run(lines, config=config(member={"burst": 3, "turns": 6, "window_s": 600}))
    totals = report.totals
    assert totals.llm_calls == 3
    assert totals.outcomes["cost_limited"] == 7
    assert totals.cost_refusals["member_rate_limited:notified"] == 1
    assert totals.cost_refusals["member_rate_limited"] == 6
    assert "cost guard refused      7" in report.format_totals()
    assert report.to_json()["totals"]["cost_refusals"]["member_rate_limited"] == 6
    refused = [r for r in report.rows if r.outcome == "cost_limited"]
    assert len(refused) == 7 and refused[0].reason == "member_rate_limited:notified"


def test_a_paced_conversation_is_not_a_flood() -> None:
    lines = spam(ALICE, 10, gap=25.0)  # each line 25 s after the bot's answer to the last
    limits = {"burst": 3, "turns": 6, "window_s": 600}
    assert run(lines, config=config(member=limits)).totals.llm_calls == 10
    ceiling = run(lines, config=config(member={**limits, "conversation_daily_turns": 4}))
    # one flood token to start, 4 paced turns, then the bucket alone (3 left, 0.25 per gap)
    assert ceiling.totals.llm_calls == 1 + 4 + 4
    assert ceiling.totals.cost_refusals == {"member_daily_ceiling:notified": 1}
    old = run(lines, config=config(member={**limits, "conversation_daily_turns": 0}))
    assert old.totals.llm_calls == 5  # pacing off: the bucket alone, as before


def test_the_rest_phrase_in_the_log_is_taken_as_the_guards_phrase() -> None:
    lines = spam(ALICE, 2, gap=1.0)
    lines.append(bot_line(900, T0 + 1.5, "你今天问得好多呀，歇会儿再聊～"))
    report = run(lines, config=config(member={"burst": 1}))
    assert report.totals.llm_calls == 1
    assert report.totals.bot_lines_as_answers == 1
    assert report.totals.bot_lines_fed_back == 0


def test_group_budget_in_calls_stops_llm_turns_for_the_day() -> None:
    lines = spam(ALICE, 3, gap=200.0) + spam(BOB, 3, start=T0 + 700, gap=200.0, mid=200)
    report = run(lines, config=config(budget={"chat_calls": 4, "step_pct": 0}))
    assert report.totals.llm_calls == 4
    assert report.totals.outcomes["cost_phrase"] == 2
    assert report.totals.cost_refusals["group_budget:phrase"] == 2


def test_without_limits_nothing_changes() -> None:
    report = run(spam(ALICE, 10, gap=120.0), config=config(enabled=False))
    assert report.totals.llm_calls == 10 and not report.totals.cost_refusals
