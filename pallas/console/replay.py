"""`pallas replay FILE.jsonl`: run a OneBot v11 event log through the real routing.

Every line is one OneBot v11 event (JSON object). Message events become `TurnInput`s the way the
live edge builds them (`pallas.onebot.convert.turn_input_from_event`), with `to_me` worked out
the way the NoneBot OneBot adapter does it: a reply to a message whose sender is the bot, a
leading or trailing @bot, or a leading NICKNAME (the persona's name and aliases). Each turn goes
through the real `RoutingEngine` over a `MemoryStateStore`, with a `FakeClock` that follows each
event's `time` and one `random.Random(seed)`, so a replay is deterministic.

How the replay stands in for what happens after routing on a live bot:

- **The bot's own lines** in the file (`user_id == self_id`, or `post_type == "message_sent"`)
  are what the bot actually sent. They are fed back with `record_bot_reply` so follow-up
  windows, recent-reply penalties, QUOTE candidates and reply-to-bot detection behave as live.
- **Replies.** When routing decides an LLM turn (REPLY / QUOTE / FOLLOW_UP / TOOL), the member
  is in flight until the answer is delivered. If one of the bot's own lines follows within
  `claim_window_s` (preferring one that quotes the message or @s the member), that line is taken
  as the delivery of this turn (with any further bubbles sent within `bubble_gap_s`). Otherwise
  the replay simulates a delivered answer `reply_latency_s` after the decision (LLM latency plus
  the first bubble's typing delay): `record_bot_reply` with a synthetic negative message id,
  then `finish_turn`. Either way cooldowns, follow-up windows and recent-bot-reply penalties
  evolve as they would live, and quick messages from the same member meanwhile are merged.
- **Low-engagement phrases** are recorded by the router itself; a short bot line right after a
  PASS-phrase decision is taken as that phrase (not fed back a second time).
- **Cooldown.** An addressed message that arrives during the chat cooldown is accumulated and,
  as the cooldown contract says, routed again when the cooldown ends (at most `max_retries`
  times); other accumulated messages wait for the next LLM turn, which drains them.
- No tool selector, relationships or learned expressions run in a replay: `tool_requested` is
  always False, affinity unknown, no group expressions.

Malformed lines (bad JSON / UTF-8, not an object, message events without ids or time) are
reported with their line numbers and skipped; everything else is still replayed. Totals count
each member message once, by its final outcome, so they add up to the number of messages.
"""

from __future__ import annotations

import argparse
import asyncio
import heapq
import json
import logging
import random
import re
import sys
import tomllib
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Protocol

from pallas.core.clock import FakeClock
from pallas.core.config_files import GroupConfigStore, deep_merge
from pallas.core.state import MemoryStateStore
from pallas.core.turn import TurnInput
from pallas.onebot.convert import as_int, display_text, turn_input_from_event
from pallas.onebot.cq import normalise_segments
from pallas.product.config import GroupConfig
from pallas.product.llm.persona.pack import PersonaPack, PersonaStore
from pallas.product.llm.routing import RouteOutcome, RouteResult, RoutingConfig, RoutingEngine

log = logging.getLogger("pallas.replay")

# Times are shown in China Standard Time, the time zone QQ groups live in.
DISPLAY_TZ = timezone(timedelta(hours=8), "UTC+8")
SYNTHETIC_ID_BASE = -9_000_000_000_000  # simulated bot messages: BASE - n (never a real QQ id)
BOT_POST_TYPES = frozenset({"message", "message_sent"})

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


class ConfigSource(Protocol):
    def get(self, group_id: int) -> GroupConfig: ...


class PersonaSource(Protocol):
    def get(self, name: str) -> PersonaPack: ...


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
        data = {
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
            "outcomes": {o.value: self.count(o) for o in OUTCOME_ORDER},
            "skip_reasons": dict(sorted(self.skip_reasons.items(), key=lambda kv: -kv[1])),
            "low_engagement_phrases": self.phrases,
            "llm_calls": self.llm_calls,
            "llm_calls_per_100_messages": round(self.llm_calls_per_100, 2),
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


# --------------------------------------------------------------------------- adapter to_me


def _is_at(seg: Mapping[str, Any], user_id: int | None) -> bool:
    return (
        user_id is not None
        and seg.get("type") == "at"
        and str((seg.get("data") or {}).get("qq", "")) == str(user_id)
    )


def _lstrip_text_at(segs: list[dict[str, Any]], index: int) -> None:
    if index < len(segs) and segs[index]["type"] == "text":
        text = str(segs[index]["data"].get("text", "")).lstrip()
        if text:
            segs[index]["data"]["text"] = text
        else:
            del segs[index]


def adapter_to_me(
    segments: Sequence[Mapping[str, Any]],
    *,
    self_id: int,
    nicknames: Iterable[str],
    reply_author: int | None = None,
    reply_known: bool = True,
) -> bool:
    """`event.to_me` as the NoneBot OneBot v11 adapter computes it for a group message.

    Mirrors `_check_reply` (quoting a message whose sender is the bot), `_check_at_me` (@bot as
    the first or last segment) and `_check_nickname` (the first text segment starts with a
    nickname). `reply_known=False` stands for a quoted message older than the log: the adapter's
    `get_msg` would have found it, so the reply segment is removed, its author taken as not the
    bot.
    """
    segs = [{"type": str(s.get("type")), "data": dict(s.get("data") or {})} for s in segments]
    to_me = False
    reply_index = next((i for i, s in enumerate(segs) if s["type"] == "reply"), None)
    if reply_index is not None and reply_known:
        if reply_author is not None and reply_author == self_id:
            to_me = True
        del segs[reply_index]
        if reply_index < len(segs) and _is_at(segs[reply_index], reply_author):
            del segs[reply_index]
        _lstrip_text_at(segs, reply_index)
    if not segs:
        segs.append({"type": "text", "data": {"text": ""}})
    if _is_at(segs[0], self_id):
        to_me = True
        segs.pop(0)
        _lstrip_text_at(segs, 0)
        if segs and _is_at(segs[0], self_id):
            segs.pop(0)
            _lstrip_text_at(segs, 0)
    elif segs:
        i = -1
        last = segs[i]
        blank = last["type"] == "text" and not str(last["data"].get("text", "")).strip()
        if blank and len(segs) >= 2:
            i -= 1
            last = segs[i]
        if _is_at(last, self_id):
            to_me = True
            del segs[i:]
    if not segs:
        segs.append({"type": "text", "data": {"text": ""}})
    names = [re.escape(n) for n in dict.fromkeys(n for n in nicknames if n)]
    if segs[0]["type"] == "text" and names:
        pattern = rf"^({'|'.join(names)})([\s,，]*|$)"
        if re.search(pattern, str(segs[0]["data"].get("text", "")), re.IGNORECASE):
            to_me = True
    return to_me


# --------------------------------------------------------------------------- parsing


@dataclass(slots=True)
class _Event:
    index: int  # position among the replayable events
    line: int
    time: float
    payload: dict[str, Any]
    group_id: int
    user_id: int
    message_id: int
    is_bot: bool
    segments: list[dict[str, Any]]
    name: str
    claimed: bool = False


def _decode(raw: str | bytes) -> str:
    return raw.decode("utf-8") if isinstance(raw, bytes) else raw


def _infer_self_id(objects: Iterable[Mapping[str, Any]]) -> int | None:
    for obj in objects:
        if (sid := as_int(obj.get("self_id"))) is not None:
            return sid
    return None


def _sender_name(payload: Mapping[str, Any], user_id: int) -> str:
    sender = payload.get("sender")
    if isinstance(sender, Mapping):
        for key in ("card", "nickname"):
            value = str(sender.get(key) or "").strip()
            if value:
                return value
    return str(user_id)


def _parse(
    lines: Iterable[str | bytes], self_id: int | None, totals: ReplayTotals
) -> tuple[list[_Event], list[ReplayProblem], int | None]:
    problems: list[ReplayProblem] = []
    objects: list[tuple[int, dict[str, Any]]] = []
    for number, raw in enumerate(lines, start=1):
        totals.lines += 1
        try:
            text = _decode(raw).strip()
        except UnicodeDecodeError as exc:
            problems.append(ReplayProblem(number, f"not UTF-8: {exc.reason}"))
            continue
        if not text:
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            problems.append(ReplayProblem(number, f"invalid JSON: {exc.msg} (col {exc.colno})"))
            continue
        if not isinstance(obj, dict):
            problems.append(ReplayProblem(number, f"expected an object, got {type(obj).__name__}"))
            continue
        objects.append((number, obj))
    bot_id = self_id if self_id is not None else _infer_self_id(o for _, o in objects)
    events: list[_Event] = []
    for number, obj in objects:
        post_type = obj.get("post_type")
        if post_type not in BOT_POST_TYPES:
            totals.ignored_events += 1
            continue
        problem = _message_problem(obj, bot_id)
        if problem is not None:
            problems.append(ReplayProblem(number, problem))
            continue
        assert bot_id is not None  # _message_problem checks it
        payload = {**obj, "self_id": bot_id}
        segments, seg_problems = normalise_segments(
            payload.get("message", payload.get("raw_message", ""))
        )
        if seg_problems:
            note = "; ".join(seg_problems) + " (kept as text)"
            problems.append(ReplayProblem(number, note, skipped=False))
        user_id = int(as_int(obj.get("user_id")) or 0)
        events.append(
            _Event(
                index=len(events),
                line=number,
                time=float(obj["time"]),
                payload=payload,
                group_id=as_int(obj.get("group_id"), 0) or 0,
                user_id=user_id,
                message_id=int(as_int(obj.get("message_id")) or 0),
                is_bot=post_type == "message_sent" or user_id == bot_id,
                segments=segments,
                name=_sender_name(obj, user_id),
            )
        )
    totals.malformed = len({p.line for p in problems if p.skipped})
    problems.sort(key=lambda p: p.line)
    return events, problems, bot_id


def _message_problem(obj: Mapping[str, Any], bot_id: int | None) -> str | None:
    if bot_id is None:
        return "no self_id in the log and none given (--self-id)"
    missing = [k for k in ("user_id", "message_id") if as_int(obj.get(k)) is None]
    if missing:
        return f"message event without {' / '.join(missing)}"
    value = obj.get("time")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "message event without a numeric time"
    message_type = obj.get("message_type", "group")
    if message_type not in ("group", "private"):
        return f"unknown message_type {message_type!r}"
    if message_type == "group" and not as_int(obj.get("group_id")):
        return "group message without group_id"
    return None


# --------------------------------------------------------------------------- the replayer


def _clock_text(t: float) -> str:
    return datetime.fromtimestamp(t, DISPLAY_TZ).strftime("%H:%M:%S")


def _short(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@dataclass(slots=True)
class _Claim:
    kind: str  # "reply" | "phrase" | "fed"
    user_id: int
    ids: list[int]
    source_line: int | None
    first: bool


class _Replayer:
    def __init__(
        self,
        events: list[_Event],
        bot_id: int,
        config_store: ConfigSource,
        personas: PersonaSource,
        seed: int,
        totals: ReplayTotals,
        *,
        reply_latency_s: float,
        claim_window_s: float,
        bubble_gap_s: float,
        max_retries: int,
    ) -> None:
        self.events = events
        self.bot_id = bot_id
        self.config_store = config_store
        self.personas = personas
        self.rng = random.Random(seed)
        self.totals = totals
        start = events[0].time if events else 0.0
        self.clock = FakeClock(start)
        self.store = MemoryStateStore(self.clock)
        self.engine = RoutingEngine(self.store)
        self.reply_latency_s = reply_latency_s
        self.claim_window_s = claim_window_s
        self.bubble_gap_s = bubble_gap_s
        self.max_retries = max_retries
        self.rows: list[ReplayRow] = []
        self.final: dict[int, RouteResult] = {}  # event index → final decision
        self.authors: dict[tuple[int, int], int] = {}  # (group, message id) → user id
        self.claims: dict[int, _Claim] = {}  # bot event index → what it delivers
        self.turns: dict[int, TurnInput] = {}
        self.heap: list[tuple[float, int, str, dict[str, Any]]] = []
        self.seq = 0
        self.synthetic = 0
        self.last_member: dict[int, int] = {}  # group → last member who spoke
        self._configs: dict[int, tuple[RoutingConfig, tuple[str, ...]]] = {}

    # -- configuration

    def config(self, group_id: int) -> tuple[RoutingConfig, tuple[str, ...]]:
        cached = self._configs.get(group_id)
        if cached is None:
            group = self.config_store.get(group_id)
            routing = group.routing
            if not group.enabled and routing.enabled:
                routing = routing.model_copy(update={"enabled": False})
            persona = self.personas.get(group.persona)
            aliases = tuple(dict.fromkeys(a for a in (persona.name, *persona.aliases) if a))
            cached = (routing, aliases)
            self._configs[group_id] = cached
        return cached

    # -- scheduling

    def schedule(self, when: float, kind: str, **data: Any) -> None:
        self.seq += 1
        heapq.heappush(self.heap, (when, self.seq, kind, data))

    async def run_due(self, until: float | None) -> None:
        while self.heap and (until is None or self.heap[0][0] <= until):
            when, _, kind, data = heapq.heappop(self.heap)
            self.clock.set(max(self.clock.now(), when))
            if kind == "deliver":
                await self.deliver_synthetic(**data)
            elif kind == "retry":
                await self.route(data["event"], attempt=data["attempt"])

    async def run(self) -> None:
        for event in self.events:
            await self.run_due(event.time)
            self.clock.set(max(self.clock.now(), event.time))
            if event.is_bot:
                await self.bot_line(event)
            else:
                await self.member_message(event)
        await self.run_due(None)

    # -- member messages

    async def member_message(self, event: _Event) -> None:
        reply_id = next(
            (as_int(s["data"].get("id")) for s in event.segments if s["type"] == "reply"),
            None,
        )
        key = (event.group_id, reply_id) if reply_id is not None else None
        author = self.authors.get(key) if key is not None else None
        _, aliases = self.config(event.group_id)
        to_me = adapter_to_me(
            event.segments,
            self_id=self.bot_id,
            nicknames=aliases,
            reply_author=author,
            reply_known=author is not None,
        )
        self.authors[(event.group_id, event.message_id)] = event.user_id
        self.last_member[event.group_id] = event.user_id
        try:
            turn = turn_input_from_event(event.payload, to_me=to_me, reply_to_user_id=author)
        except (ValueError, TypeError) as exc:  # pragma: no cover - checked in _parse
            self.rows.append(self._plain_row(event, "message", "error", str(exc)))
            return
        self.turns[event.index] = turn
        self.totals.messages += 1
        await self.route(event, attempt=0)

    async def route(self, event: _Event, *, attempt: int) -> None:
        turn = self.turns[event.index]
        routing, aliases = self.config(turn.group_id)
        now = self.clock.now()
        result = await self.engine.route(turn, routing, aliases=aliases, now=now, rng=self.rng)
        self.final[event.index] = result
        self.rows.append(self._route_row(event, result, "retry" if attempt else "message"))
        if attempt:
            self.totals.retries += 1
        self.totals.folded_into_turns += len(result.accumulated)
        if result.calls_llm:
            await self.answer(event, result, routing)
        elif result.outcome is RouteOutcome.PASS_PHRASE:
            self.claim_phrase(event, routing)
        elif (
            result.outcome is RouteOutcome.ACCUMULATE
            and result.trigger.addressed
            and result.cooldown is not None
            and attempt < self.max_retries
        ):
            when = now + max(result.cooldown.retry_after_s, 0.0) + 0.01
            self.schedule(when, "retry", event=event, attempt=attempt + 1)

    async def answer(self, event: _Event, result: RouteResult, routing: RoutingConfig) -> None:
        """An LLM turn: a following bot line is its delivery, else a simulated one."""
        now = self.clock.now()
        found = self.find_bot_line(event, now + self.claim_window_s, prefer=result.turn)
        if found is not None:
            self.claim(found, "reply", event.user_id, event.line)
            return
        self.schedule(
            now + self.reply_latency_s,
            "deliver",
            group_id=event.group_id,
            user_id=event.user_id,
            line=event.line,
            config=routing,
        )

    def claim_phrase(self, event: _Event, routing: RoutingConfig) -> None:
        max_chars = routing.low_engagement.max_chars
        found = self.find_bot_line(
            event,
            self.clock.now() + min(self.claim_window_s, 10.0),
            max_chars=max_chars,
        )
        if found is not None:
            self.claim(found, "phrase", event.user_id, event.line, bubbles=False)

    def find_bot_line(
        self,
        event: _Event,
        deadline: float,
        *,
        prefer: TurnInput | None = None,
        max_chars: int | None = None,
    ) -> _Event | None:
        candidates: list[_Event] = []
        for later in self.events[event.index + 1 :]:
            if later.time > deadline:
                break
            if not later.is_bot or later.claimed or later.group_id != event.group_id:
                continue
            if max_chars is not None and len(display_text(later.segments)) > max_chars:
                continue
            candidates.append(later)
        if not candidates:
            return None
        if prefer is not None:
            for cand in candidates:
                if self._answers(cand, prefer):
                    return cand
            # a line that explicitly answers someone else is not ours
            candidates = [c for c in candidates if not self._answers_other(c, prefer)]
        return candidates[0] if candidates else None

    def _answers(self, line: _Event, turn: TurnInput) -> bool:
        for seg in line.segments:
            data = seg.get("data") or {}
            if seg["type"] == "reply" and as_int(data.get("id")) == turn.message_id:
                return True
            if seg["type"] == "at" and as_int(data.get("qq")) == turn.user_id:
                return True
        return False

    def _answers_other(self, line: _Event, turn: TurnInput) -> bool:
        for seg in line.segments:
            data = seg.get("data") or {}
            if seg["type"] == "reply":
                author = self.authors.get((line.group_id, as_int(data.get("id")) or 0))
                if author is not None and author != turn.user_id:
                    return True
            if seg["type"] == "at" and as_int(data.get("qq")) not in (turn.user_id, self.bot_id):
                return True
        return False

    def claim(
        self,
        line: _Event,
        kind: str,
        user_id: int,
        source_line: int | None,
        *,
        bubbles: bool = True,
    ) -> None:
        group = [line]
        if bubbles:
            previous = line
            for later in self.events[line.index + 1 :]:
                if later.time - previous.time > self.bubble_gap_s:
                    break
                if later.is_bot and not later.claimed and later.group_id == line.group_id:
                    group.append(later)
                    previous = later
        ids = [e.message_id for e in group]
        for position, member in enumerate(group):
            member.claimed = True
            self.claims[member.index] = _Claim(kind, user_id, ids, source_line, position == 0)

    async def deliver_synthetic(
        self, *, group_id: int, user_id: int, line: int, config: RoutingConfig
    ) -> None:
        self.synthetic += 1
        self.totals.simulated_replies += 1
        message_id = SYNTHETIC_ID_BASE - self.synthetic
        now = self.clock.now()
        await self.engine.record_bot_reply(
            self.bot_id, group_id, user_id, [message_id], now, config=config
        )
        await self.engine.finish_turn(self.bot_id, group_id, user_id)
        self.authors[(group_id, message_id)] = self.bot_id
        self.rows.append(
            ReplayRow(
                kind="sent",
                line=None,
                time=now,
                group_id=group_id,
                user_id=self.bot_id,
                name="(bot)",
                message_id=message_id,
                text="(simulated answer)",
                outcome="sent",
                reason=f"simulated delivery for line {line} (user {user_id})",
            )
        )

    # -- the bot's own lines

    async def bot_line(self, event: _Event) -> None:
        self.totals.bot_lines += 1
        self.authors[(event.group_id, event.message_id)] = self.bot_id
        claim = self.claims.get(event.index)
        if claim is None:
            claim = self._claim_unanswered(event)
        routing, _ = self.config(event.group_id)
        if claim.kind == "phrase":
            self.totals.bot_lines_as_answers += 1
            reason = f"the low-engagement phrase of line {claim.source_line}"
        elif claim.kind == "reply":
            self.totals.bot_lines_as_answers += 1
            reason = f"answer to line {claim.source_line} (user {claim.user_id})"
        else:
            self.totals.bot_lines_fed_back += 1
            reason = f"no replayed turn: fed back as an answer to user {claim.user_id}"
        if not claim.first:
            reason = "next bubble: " + reason
        elif claim.kind in ("reply", "fed"):
            await self.engine.record_bot_reply(
                self.bot_id, event.group_id, claim.user_id, claim.ids, event.time, config=routing
            )
            await self.engine.finish_turn(self.bot_id, event.group_id, claim.user_id)
        self.rows.append(self._plain_row(event, "bot", "bot", reason))

    def _claim_unanswered(self, event: _Event) -> _Claim:
        user = self._addressee(event)
        self.claim(event, "fed", user, None)
        return self.claims[event.index]

    def _addressee(self, event: _Event) -> int:
        for seg in event.segments:
            data = seg.get("data") or {}
            if seg["type"] == "reply":
                author = self.authors.get((event.group_id, as_int(data.get("id")) or 0))
                if author is not None and author != self.bot_id:
                    return author
        for seg in event.segments:
            qq = as_int((seg.get("data") or {}).get("qq"))
            if seg["type"] == "at" and qq is not None and qq != self.bot_id:
                return qq
        return self.last_member.get(event.group_id, 0)

    # -- rows

    def _plain_row(self, event: _Event, kind: str, outcome: str, reason: str) -> ReplayRow:
        return ReplayRow(
            kind=kind,
            line=event.line,
            time=event.time,
            group_id=event.group_id,
            user_id=event.user_id,
            name=event.name,
            message_id=event.message_id,
            text=_row_text(event.segments),
            outcome=outcome,
            reason=reason,
        )

    def _route_row(self, event: _Event, result: RouteResult, kind: str) -> ReplayRow:
        gate = result.gate
        return ReplayRow(
            kind=kind,
            line=event.line,
            time=result.now,
            group_id=event.group_id,
            user_id=event.user_id,
            name=event.name,
            message_id=event.message_id,
            text=_row_text(event.segments),
            trigger=result.trigger.kind.value,
            gate=gate.verdict.value if gate.proceeds else f"{gate.verdict.value}:{gate.reason}",
            score=result.necessity.score if result.necessity else None,
            outcome=result.outcome.value,
            reason=result.reason,
            phrase=result.phrase,
            accumulated=len(result.accumulated),
            record=result.to_log_dict(),
        )

    def finish_totals(self) -> None:
        for result in self.final.values():
            self.totals.outcomes[result.outcome.value] += 1
            if result.outcome is RouteOutcome.SKIP:
                self.totals.skip_reasons[f"{result.stage}:{result.reason}"] += 1


def _row_text(segments: list[dict[str, Any]]) -> str:
    shown = display_text([s for s in segments if s["type"] != "reply"])
    prefix = "↩" if any(s["type"] == "reply" for s in segments) else ""
    return prefix + shown


async def replay_events_async(
    lines: Iterable[str | bytes],
    config_store: ConfigSource,
    personas: PersonaSource,
    seed: int = 0,
    self_id: int | None = None,
    *,
    reply_latency_s: float = 4.0,
    claim_window_s: float = 12.0,
    bubble_gap_s: float = 4.0,
    max_retries: int = 5,
) -> ReplayReport:
    """Replay OneBot v11 event lines through the routing; see the module docstring."""
    totals = ReplayTotals()
    events, problems, bot_id = _parse(lines, self_id, totals)
    for problem in problems:
        log.info("replay: %s", problem)
    if bot_id is None or not events:
        return ReplayReport([], totals, problems, seed, bot_id)
    replayer = _Replayer(
        events,
        bot_id,
        config_store,
        personas,
        seed,
        totals,
        reply_latency_s=reply_latency_s,
        claim_window_s=claim_window_s,
        bubble_gap_s=bubble_gap_s,
        max_retries=max_retries,
    )
    await replayer.run()
    replayer.finish_totals()
    return ReplayReport(replayer.rows, totals, problems, seed, bot_id)


def replay_events(
    lines: Iterable[str | bytes],
    config_store: ConfigSource,
    personas: PersonaSource,
    seed: int = 0,
    self_id: int | None = None,
    **options: Any,
) -> ReplayReport:
    """Synchronous `replay_events_async` (for callers without a running event loop)."""
    return asyncio.run(replay_events_async(lines, config_store, personas, seed, self_id, **options))


# --------------------------------------------------------------------------- formatting


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
}


def format_table(rows: Sequence[ReplayRow]) -> str:
    header = " ".join(_fit(name, width) for name, width in _COLUMNS) + " reason"
    out = [header, "-" * (_width(header) + 24)]
    for row in rows:
        reason = row.reason
        if row.phrase:
            reason += f" → 「{row.phrase}」"
        if row.accumulated:
            reason += f" (+{row.accumulated} pending folded in)"
        if row.kind == "retry":
            reason = "retry after cooldown: " + reason
        values = (
            _clock_text(row.time),
            str(row.group_id) if row.group_id else "private",
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
        f"LLM calls           {totals.llm_calls:>5}   "
        f"= {totals.llm_calls_per_100:.1f} per 100 messages",
        f"answers             {totals.bot_lines_as_answers:>5} bot lines taken as deliveries, "
        f"{totals.simulated_replies} simulated, {totals.bot_lines_fed_back} bot lines fed back "
        "without a replayed turn",
    ]
    return "\n".join(lines)


# --------------------------------------------------------------------------- CLI


class OverlayConfigStore:
    """A group config store with extra TOML overrides merged over every group's config."""

    def __init__(self, base: ConfigSource, overrides: Sequence[Mapping[str, Any]]) -> None:
        self._base = base
        self._overrides = list(overrides)

    def get(self, group_id: int) -> GroupConfig:
        data: dict[str, Any] = self._base.get(group_id).model_dump()
        for override in self._overrides:
            data = deep_merge(data, override)
        return GroupConfig.model_validate(data)


def _read_lines(path: str) -> list[bytes]:
    if path == "-":
        return sys.stdin.buffer.read().splitlines()
    return Path(path).read_bytes().splitlines()


def _replay_command(args: argparse.Namespace) -> int:
    from pallas.core.settings import PallasSettings

    config_dir = args.config_dir or PallasSettings.from_env().pallas_config_dir
    store: ConfigSource = GroupConfigStore(GroupConfig, Path(config_dir) / "groups")
    overrides = []
    for file in args.group_config or ():
        try:
            overrides.append(tomllib.loads(Path(file).read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            print(f"cannot read group config {file}: {exc}", file=sys.stderr)
            return 2
    if overrides:
        store = OverlayConfigStore(store, overrides)
        try:
            store.get(0)
        except ValueError as exc:  # pydantic ValidationError is a ValueError
            print(f"invalid group config override: {exc}", file=sys.stderr)
            return 2
    personas = PersonaStore(Path(config_dir) / "personas")
    try:
        lines = _read_lines(args.file)
    except OSError as exc:
        print(f"cannot read {args.file}: {exc}", file=sys.stderr)
        return 2
    report = replay_events(
        lines,
        store,
        personas,
        args.seed,
        args.self_id,
        reply_latency_s=args.reply_latency,
    )
    if args.json:
        print(json.dumps(report.to_json(), ensure_ascii=False, indent=2))
        return 0
    if not args.totals_only:
        print(report.format_table())
        print()
    for problem in report.problems:
        print(f"! {problem}", file=sys.stderr)
    print(report.format_totals())
    return 0


def register_replay(sub: argparse._SubParsersAction) -> None:
    replay = sub.add_parser(
        "replay",
        help="run a OneBot v11 event log (JSONL) through routing; print decisions and totals",
        description=(
            "Replay OneBot v11 events (one JSON object per line) through the real routing with "
            "a fake clock and a seeded rng. No LLM is called: an LLM turn is answered by the "
            "bot's next line in the file, or by a simulated delivery."
        ),
    )
    replay.add_argument("file", help="JSONL file of OneBot v11 events ('-' for stdin)")
    replay.add_argument(
        "--config-dir", help="config directory (groups/, personas/); default PALLAS_CONFIG_DIR"
    )
    replay.add_argument(
        "--group-config",
        action="append",
        metavar="FILE.toml",
        help="extra TOML merged over every group's config (repeatable; later files win)",
    )
    replay.add_argument("--seed", type=int, default=0, help="seed of the routing rng")
    replay.add_argument(
        "--self-id", type=int, help="the bot's QQ id (default: self_id of the events)"
    )
    replay.add_argument(
        "--reply-latency",
        type=float,
        default=4.0,
        metavar="S",
        help="seconds from an LLM decision to a simulated delivery (default 4)",
    )
    replay.add_argument("--json", action="store_true", help="machine-readable output")
    replay.add_argument("--totals-only", action="store_true", help="skip the decision table")
    replay.set_defaults(handler=_replay_command)
