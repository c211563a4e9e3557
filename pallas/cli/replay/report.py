"""Replay report values and their rendering: the decision table, the totals, JSON output."""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from pallas.routing import RouteOutcome

# Times are shown in China Standard Time, the time zone QQ groups live in.
DISPLAY_TZ = timezone(timedelta(hours=8), "UTC+8")

OUTCOME_ORDER = (
    RouteOutcome.REPLY,
    RouteOutcome.QUOTE,
    RouteOutcome.FOLLOW_UP,
    RouteOutcome.TOOL,
    RouteOutcome.PASS_PHRASE,
    RouteOutcome.PASS_SILENT,
    RouteOutcome.SKIP,
    RouteOutcome.ACCUMULATE,
    RouteOutcome.DEFER,
    RouteOutcome.MERGE,
)
LLM_OUTCOMES = frozenset(
    {RouteOutcome.REPLY, RouteOutcome.QUOTE, RouteOutcome.FOLLOW_UP, RouteOutcome.TOOL}
)


# --------------------------------------------------------------------------- report values


@dataclass(frozen=True, slots=True)
class ReplayProblem:
    line: int
    message: str
    skipped: bool = True  # False: a warning, the line was still replayed

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@dataclass(slots=True)
class ReplayRow:
    """One line of the decision table.

    kind: `message` (a member message routed), `retry` (an accumulated @ routed again after the
    cooldown), `bot` (one of the bot's own lines from the file), `sent` (a simulated answer).
    """

    kind: str
    line: int | None
    time: float
    group_id: int
    user_id: int
    name: str
    message_id: int
    text: str
    trigger: str = ""
    gate: str = ""
    score: int | None = None
    outcome: str = ""
    reason: str = ""
    phrase: str | None = None
    accumulated: int = 0
    record: dict[str, Any] | None = None  # RouteResult.to_log_dict() for routed rows

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "kind": self.kind,
            "line": self.line,
            "time": self.time,
            "group": self.group_id,
            "user": self.user_id,
            "name": self.name,
            "message_id": self.message_id,
            "text": self.text,
            "trigger": self.trigger,
            "gate": self.gate,
            "score": self.score,
            "outcome": self.outcome,
            "reason": self.reason,
            "phrase": self.phrase,
            "accumulated": self.accumulated,
        }
        if self.record is not None:
            data["decision"] = self.record
        return data


@dataclass(slots=True)
class ReplayTotals:
    lines: int = 0
    malformed: int = 0
    ignored_events: int = 0  # notices, meta events, requests
    messages: int = 0  # member messages routed (each counted once, by final outcome)
    bot_lines: int = 0  # the bot's own messages in the file
    bot_lines_as_answers: int = 0  # taken as the delivery of a replayed LLM turn / phrase
    bot_lines_fed_back: int = 0  # fed back without a matching replayed decision
    simulated_replies: int = 0  # synthetic deliveries (no bot line in the file answered)
    retries: int = 0  # accumulated @ messages routed again after the cooldown
    folded_into_turns: int = 0  # pending messages drained into an LLM turn
    outcomes: Counter[str] = field(default_factory=Counter)
    skip_reasons: Counter[str] = field(default_factory=Counter)
    cost_refusals: Counter[str] = field(default_factory=Counter)  # cost guard reason → turns
    # unaddressed LLM turns and phrases, by "<trigger>:<stake or reason>:<llm|phrase>"
    unprompted: Counter[str] = field(default_factory=Counter)
    days: int = 0  # calendar days (UTC+8) with member messages

    def count(self, outcome: RouteOutcome) -> int:
        return self.outcomes.get(outcome.value, 0)

    @property
    def llm_calls(self) -> int:
        return sum(self.count(o) for o in LLM_OUTCOMES)

    @property
    def phrases(self) -> int:
        return self.count(RouteOutcome.PASS_PHRASE)

    @property
    def llm_calls_per_100(self) -> float:
        return 100.0 * self.llm_calls / self.messages if self.messages else 0.0

    @property
    def unprompted_total(self) -> int:
        return sum(self.unprompted.values())

    @property
    def unprompted_per_100(self) -> float:
        return 100.0 * self.unprompted_total / self.messages if self.messages else 0.0

    @property
    def unprompted_per_day(self) -> float:
        return self.unprompted_total / self.days if self.days else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "lines": self.lines,
            "malformed": self.malformed,
            "ignored_events": self.ignored_events,
            "messages": self.messages,
            "bot_lines": self.bot_lines,
            "bot_lines_as_answers": self.bot_lines_as_answers,
            "bot_lines_fed_back": self.bot_lines_fed_back,
            "simulated_replies": self.simulated_replies,
            "retries": self.retries,
            "folded_into_turns": self.folded_into_turns,
            "cost_refusals": dict(self.cost_refusals),
            "outcomes": {o.value: self.count(o) for o in OUTCOME_ORDER},
            "skip_reasons": dict(sorted(self.skip_reasons.items(), key=lambda kv: -kv[1])),
            "low_engagement_phrases": self.phrases,
            "llm_calls": self.llm_calls,
            "llm_calls_per_100_messages": round(self.llm_calls_per_100, 2),
            "unprompted": self.unprompted_total,
            "unprompted_per_100_messages": round(self.unprompted_per_100, 2),
            "unprompted_per_day": round(self.unprompted_per_day, 2),
            "days": self.days,
            "unprompted_reasons": dict(self.unprompted.most_common()),
        }


@dataclass(slots=True)
class ReplayReport:
    rows: list[ReplayRow]
    totals: ReplayTotals
    problems: list[ReplayProblem]
    seed: int
    self_id: int | None

    def to_json(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "self_id": self.self_id,
            "totals": self.totals.to_json(),
            "problems": [
                {"line": p.line, "message": p.message, "skipped": p.skipped} for p in self.problems
            ],
            "rows": [r.to_json() for r in self.rows],
        }

    def format_table(self) -> str:
        return format_table(self.rows)

    def format_totals(self) -> str:
        return format_totals(self.totals)


# --------------------------------------------------------------------------- formatting


def _clock_text(t: float) -> str:
    return datetime.fromtimestamp(t, DISPLAY_TZ).strftime("%H:%M:%S")


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _fit(text: str, width: int) -> str:
    """Cut to `width` display columns (CJK counts 2) and pad with spaces."""
    out, used = [], 0
    for ch in text:
        w = 2 if unicodedata.east_asian_width(ch) in "WF" else 1
        if used + w > width - (1 if _width(text) > width else 0):
            out.append("…")
            used += 1
            break
        out.append(ch)
        used += w
    return "".join(out) + " " * max(0, width - used)


_COLUMNS = (
    ("time", 8),
    ("group", 10),
    ("user", 12),
    ("msg id", 14),
    ("text", 24),
    ("trigger", 12),
    ("gate", 16),
    ("score", 5),
    ("outcome", 11),
)

_OUTCOME_LABEL = {
    "reply": "REPLY",
    "quote": "QUOTE",
    "follow_up": "FOLLOW_UP",
    "tool": "TOOL",
    "pass_phrase": "PASS-phrase",
    "pass_silent": "PASS-silent",
    "skip": "skip",
    "accumulate": "accumulate",
    "defer": "defer",
    "merge": "merge",
    "bot": "· bot",
    "sent": "· sent",
    "private_refused": "private-refused",
}


def format_table(rows: Sequence[ReplayRow]) -> str:
    header = " ".join(_fit(name, width) for name, width in _COLUMNS) + " reason"
    out = [header, "-" * (_width(header) + 24)]
    for row in rows:
        reason = row.reason
        record = row.record or {}
        if record.get("stage") in ("stake", "restraint"):
            reason = f"{record['stage']}:{reason}"  # the social-fit skips, named as in totals
        elif record.get("stake"):
            reason += f" [stake:{record['stake']}, mood:{record.get('mood')}]"
        if row.phrase:
            reason += f" → 「{row.phrase}」"
        if row.accumulated:
            reason += f" (+{row.accumulated} pending folded in)"
        if row.kind == "retry":
            reason = "retry after cooldown: " + reason
        values = (
            _clock_text(row.time),
            str(row.group_id) if row.group_id else "私聊",
            row.name,
            str(row.message_id),
            row.text,
            row.trigger,
            row.gate,
            "" if row.score is None else str(row.score),
            _OUTCOME_LABEL.get(row.outcome, row.outcome),
        )
        cells = [_fit(v, w) for v, (_, w) in zip(values, _COLUMNS, strict=True)]
        out.append(" ".join(cells) + " " + reason)
    return "\n".join(out)


def format_totals(totals: ReplayTotals) -> str:
    c = totals.count
    skips = ", ".join(f"{k} {v}" for k, v in totals.skip_reasons.most_common())
    cost = ", ".join(f"{k} {v}" for k, v in totals.cost_refusals.most_common())
    lines = [
        f"messages            {totals.messages:>5}   (member messages routed; "
        f"lines {totals.lines}, bot lines {totals.bot_lines}, "
        f"other events {totals.ignored_events}, malformed {totals.malformed})",
        f"REPLY               {c(RouteOutcome.REPLY):>5}",
        f"QUOTE               {c(RouteOutcome.QUOTE):>5}",
        f"FOLLOW_UP           {c(RouteOutcome.FOLLOW_UP):>5}",
        f"TOOL                {c(RouteOutcome.TOOL):>5}",
        f"PASS-phrase         {c(RouteOutcome.PASS_PHRASE):>5}",
        f"PASS-silent         {c(RouteOutcome.PASS_SILENT):>5}",
        f"skipped             {c(RouteOutcome.SKIP):>5}   {skips}".rstrip(),
        f"accumulated         {c(RouteOutcome.ACCUMULATE):>5}   "
        f"(cooldown; {totals.retries} @ re-routed after it, "
        f"{totals.folded_into_turns} pending folded into LLM turns)",
        f"deferred            {c(RouteOutcome.DEFER):>5}",
        f"merged              {c(RouteOutcome.MERGE):>5}",
        f"low-engagement phrases sent {totals.phrases:>5}",
        f"cost guard refused  {sum(totals.cost_refusals.values()):>5}   {cost}".rstrip(),
        f"LLM calls           {totals.llm_calls:>5}   "
        f"= {totals.llm_calls_per_100:.1f} per 100 messages",
        (
            f"unprompted          {totals.unprompted_total:>5}   "
            f"= {totals.unprompted_per_100:.1f} per 100 messages, "
            f"{totals.unprompted_per_day:.1f} per day ({totals.days} days)   "
            + ", ".join(f"{k} {v}" for k, v in totals.unprompted.most_common())
        ).rstrip(),
        f"answers             {totals.bot_lines_as_answers:>5} bot lines taken as deliveries, "
        f"{totals.simulated_replies} simulated, {totals.bot_lines_fed_back} bot lines fed back "
        "without a replayed turn",
    ]
    return "\n".join(lines)
