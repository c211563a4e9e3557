"""Issue 13 targets on the labelled transcripts (benchmarks/transcripts/make_real_groups.py).

Nobody addresses the bot in most of these logs: the bot must stay out of ads, announcements,
member-to-member threads and member-only questions even with the ambient / PASS dice turned all
the way up, never answer a question with a phrase, stay at ≤ 1 unprompted utterance per 100
messages with the defaults, and still answer every @ and every name-then-comma address.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pallas.cli.replay import replay_events
from pallas.config import GroupConfig
from pallas.routing import RoutingConfig
from pallas.routing.config import AmbientConfig, LowEngagementConfig, SocialFitConfig
from pallas.routing.text_signals import is_question
from tests.unit.cli.test_replay import Configs, Personas

TRANSCRIPTS = Path(__file__).resolve().parents[3] / "benchmarks" / "transcripts"
NAMES = ("campus_group", "game_group")
NEVER = frozenset({"ad", "announce", "thread", "member_q", "poll"})
SPEAKS = frozenset({"reply", "quote", "follow_up", "tool", "pass_phrase"})

# every die turned up: an ambient roll on every eligible message, a phrase on every PASS
DICE_UP = GroupConfig(
    routing=RoutingConfig(
        ambient=AmbientConfig(rate=1.0, cooldown_s=0, budget=1000),
        low_engagement=LowEngagementConfig(probability_steps=((0, 1.0),)),
        social=SocialFitConfig(daily_unprompted_cap=1000),
    )
)


def _replay(name: str, config: GroupConfig, seed: int = 0) -> tuple[Any, dict[str, str]]:
    lines = (TRANSCRIPTS / f"{name}.jsonl").read_bytes().splitlines()
    labels = json.loads((TRANSCRIPTS / f"{name}.labels.json").read_text(encoding="utf-8"))
    return replay_events(lines, Configs(config), Personas(), seed), labels


def _final_rows(report: Any) -> dict[int, Any]:
    """The last routed row per member message (a retried @ counts by its last decision)."""
    rows: dict[int, Any] = {}
    for row in report.rows:
        if row.kind in ("message", "retry"):
            rows[row.message_id] = row
    return rows


@pytest.mark.parametrize("name", NAMES)
def test_no_unprompted_word_to_ads_announcements_threads_or_member_questions(name: str) -> None:
    report, labels = _replay(name, DICE_UP)
    rows = _final_rows(report)
    assert len(rows) == len(labels)
    bad = [
        (labels[str(mid)], row.text, row.outcome, row.phrase)
        for mid, row in rows.items()
        if labels[str(mid)] in NEVER
        and row.outcome in SPEAKS
        and not (row.record or {}).get("addressed")
    ]
    assert bad == []


@pytest.mark.parametrize("name", NAMES)
def test_a_question_never_gets_a_phrase(name: str) -> None:
    report, _ = _replay(name, DICE_UP)
    phrased = [row.text for row in _final_rows(report).values() if row.outcome == "pass_phrase"]
    assert phrased, "the dice are up: some good news / venting / surprise gets a phrase"
    assert [t for t in phrased if is_question(t)] == []


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("seed", range(4))
def test_defaults_stay_under_one_unprompted_per_100_and_answer_every_address(
    name: str, seed: int
) -> None:
    report, labels = _replay(name, GroupConfig(), seed)
    totals = report.totals
    assert totals.unprompted_per_100 <= 1.0, totals.unprompted
    rows = _final_rows(report)
    for mid, row in rows.items():
        kind = labels[str(mid)]
        if kind == "address":
            assert row.outcome in SPEAKS - {"pass_phrase"}, row.text
        elif kind == "mention":  # third person: never taken as an address
            assert not (row.record or {}).get("addressed"), row.text


def test_totals_print_unprompted_per_100_and_per_day() -> None:
    report, _ = _replay("campus_group", DICE_UP)
    text = report.format_totals()
    line = next(line for line in text.splitlines() if line.startswith("unprompted"))
    assert "per 100 messages" in line and "per day (2 days)" in line
    data = report.totals.to_json()
    assert data["days"] == 2
    assert data["unprompted"] == sum(data["unprompted_reasons"].values()) > 0
    assert all(key.count(":") == 2 for key in data["unprompted_reasons"])
