"""The replay's routing loop: member messages through the real routing, simulated answers.

See the `pallas.cli.replay` package docstring for how a replay stands in for a live bot.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
import random
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime
from typing import Any, Protocol

from pallas.app import build_replay_route_step
from pallas.cli.replay.events import _Event, _parse, adapter_to_me
from pallas.cli.replay.matching import _BotLineMatcher, _Claim
from pallas.cli.replay.report import DISPLAY_TZ, ReplayReport, ReplayRow, ReplayTotals
from pallas.config import GroupConfig, TurnConfigs
from pallas.core.clock import FakeClock
from pallas.core.state import MemoryStateStore
from pallas.core.turn import TurnInput
from pallas.features.cost import CostGuard, Limits, UsageCounters
from pallas.features.persona import PersonaPack
from pallas.onebot.convert import as_int, display_text, turn_input_from_event
from pallas.routing import RouteOutcome, RouteResult, RoutingConfig
from pallas.routing.private_policy import admit_private
from pallas.turn import outcome_name
from pallas.turn.contracts import StakeKeySource
from pallas.turn.route import NextStep

log = logging.getLogger("pallas.replay")

SYNTHETIC_ID_BASE = -9_000_000_000_000  # simulated bot messages: BASE - n (never a real QQ id)


class ConfigSource(Protocol):
    def get(self, group_id: int) -> GroupConfig: ...


class PersonaSource(Protocol):
    def get(self, name: str) -> PersonaPack: ...


class _Replayer(_BotLineMatcher):
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
        deployment: Limits | None = None,
        stake_keys: StakeKeySource | None = None,
    ) -> None:
        self.events = events
        self.bot_id = bot_id
        self.config_store = config_store
        self.personas = personas
        self.totals = totals
        start = events[0].time if events else 0.0
        self.clock = FakeClock(start)
        self.state = MemoryStateStore(self.clock)
        # the live route step (freshness, tool plan, routing) over the replay's clock and store
        self.route_step = build_replay_route_step(
            self.clock,
            self.state,
            group_config=TurnConfigs(config_store.get),  # a private chat: [private.budget]
            persona=personas.get,
            rng=random.Random(seed),
            stake_keys=stake_keys,
        )
        self.routing = self.route_step.routing
        # the live cost guard over the replay's store (calls only: a replay has no tokens)
        self.cost = CostGuard(
            UsageCounters(self.state), deployment or Limits(), rng=random.Random(seed)
        )
        self.cost_refused: dict[int, str] = {}  # event index → cost outcome (no LLM call)
        self.stale: dict[int, str] = {}  # event index → freshness reason (too old to answer)
        self.reply_latency_s = reply_latency_s
        self.claim_window_s = claim_window_s
        self.bubble_gap_s = bubble_gap_s
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
            routing_config = group.routing
            if not group.enabled and routing_config.enabled:
                routing_config = routing_config.model_copy(update={"enabled": False})
            persona = self.personas.get(group.persona)
            aliases = self.route_step.addressing.routing_aliases(persona)  # the adapter's NICKNAME
            cached = (routing_config, aliases)
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
        if turn.is_private and not self.private_allowed(event):
            return
        await self.route(event, attempt=0)

    def private_allowed(self, event: _Event) -> bool:
        """The live edge's `[private]` gate (superusers are unknown to a replay): a refused
        private message is recorded, never routed."""
        sub_type = str(event.payload.get("sub_type") or "")
        access = self.config_store.get(0).private
        verdict = admit_private(sub_type, event.user_id, access, frozenset())
        if not verdict.allowed:
            self.rows.append(self._plain_row(event, "message", "private_refused", verdict.reason))
        return verdict.allowed

    async def route(self, event: _Event, *, attempt: int) -> None:
        turn = self.turns[event.index]
        routing_config, _ = self.config(turn.group_id)
        now = self.clock.now()
        group = self.route_step.group_config(turn.group_id)
        # the live route step (superusers are unknown to a replay; no group expressions)
        routed = await self.route_step.route(turn, attempt=attempt)
        result = routed.route
        if result is None:  # too old when (re-)routed: recorded, not answered
            self.stale[event.index] = routed.fresh.reason
            self.final.pop(event.index, None)
            kind = "retry" if attempt else "message"
            self.rows.append(self._plain_row(event, kind, "stale", routed.fresh.reason))
            return
        self.stale.pop(event.index, None)
        self.final[event.index] = result
        self.rows.append(self._route_row(event, result, "retry" if attempt else "message"))
        if attempt:
            self.totals.retries += 1
        self.totals.folded_into_turns += len(result.accumulated)
        if result.calls_llm:
            if await self.cost_allows(event, result, group):
                await self.answer(event, result, routing_config)
        elif result.outcome is RouteOutcome.PASS_PHRASE:
            self.claim_phrase(event, routing_config)
        elif routed.step is NextStep.RETRY and (wait := routed.retry_after_s()) is not None:
            self.schedule(now + wait, "retry", event=event, attempt=attempt + 1)

    async def cost_allows(self, event: _Event, result: RouteResult, group: GroupConfig) -> bool:
        """The live cost guard: a refused turn makes no LLM call (and may send its phrase)."""
        now = self.clock.now()
        verdict = await self.cost.check(result.turn, result, group, now)
        if verdict.proceeds:
            images = bool(result.turn.image_urls)
            await self.cost.record(
                result.turn,
                now,
                images=images,
                tokens=0,
                member=group.cost.member,
                reservation=verdict.reservation,
            )
            return True
        outcome = outcome_name(verdict)
        self.cost_refused[event.index] = outcome
        self.totals.cost_refusals[verdict.reason] += 1
        self.rows[-1] = replace(self.rows[-1], outcome=outcome, reason=verdict.reason)
        await self.routing.finish_turn(self.bot_id, result.turn.group_id, result.turn.user_id)
        if verdict.phrase:
            found = self.find_bot_line(event, now + min(self.claim_window_s, 10.0))
            if found is not None:
                self.claim(found, "phrase", event.user_id, event.line, bubbles=False)
        return False

    async def answer(
        self, event: _Event, result: RouteResult, routing_config: RoutingConfig
    ) -> None:
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
            config=routing_config,
        )

    def claim_phrase(self, event: _Event, routing_config: RoutingConfig) -> None:
        max_chars = routing_config.low_engagement.max_chars
        found = self.find_bot_line(
            event,
            self.clock.now() + min(self.claim_window_s, 10.0),
            max_chars=max_chars,
        )
        if found is not None:
            self.claim(found, "phrase", event.user_id, event.line, bubbles=False)

    async def deliver_synthetic(
        self, *, group_id: int, user_id: int, line: int, config: RoutingConfig
    ) -> None:
        self.synthetic += 1
        self.totals.simulated_replies += 1
        message_id = SYNTHETIC_ID_BASE - self.synthetic
        now = self.clock.now()
        await self.routing.record_bot_reply(
            self.bot_id, group_id, user_id, [message_id], now, config=config
        )
        await self.routing.finish_turn(self.bot_id, group_id, user_id)
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
        routing_config, _ = self.config(event.group_id)
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
            await self.routing.record_bot_reply(
                self.bot_id,
                event.group_id,
                claim.user_id,
                claim.ids,
                event.time,
                config=routing_config,
            )
            await self.routing.finish_turn(self.bot_id, event.group_id, claim.user_id)
        self.rows.append(self._plain_row(event, "bot", "bot", reason))

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
        for reason in self.stale.values():  # counted as skipped, as `/pallas why` shows it
            self.totals.outcomes[RouteOutcome.SKIP.value] += 1
            self.totals.skip_reasons[f"freshness:{reason}"] += 1
        for index, result in self.final.items():
            if index in self.cost_refused:
                self.totals.outcomes[self.cost_refused[index]] += 1
                continue
            self.totals.outcomes[result.outcome.value] += 1
            if result.outcome is RouteOutcome.SKIP:
                self.totals.skip_reasons[f"{result.stage}:{result.reason}"] += 1
            if result.unprompted:
                self.totals.unprompted[_unprompted_key(result)] += 1
        days = {
            datetime.fromtimestamp(turn.time, DISPLAY_TZ).date() for turn in self.turns.values()
        }
        self.totals.days = len(days)


def _unprompted_key(result: RouteResult) -> str:
    """ "<trigger>:<stake or decision reason>:<llm|phrase>" for the unprompted breakdown."""
    why = result.stake.reason if result.stake is not None else result.reason
    kind = "llm" if result.calls_llm else "phrase"
    return f"{result.trigger.kind.value}:{why}:{kind}"


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
    deployment: Limits | None = None,
    stake_keys: StakeKeySource | None = None,
) -> ReplayReport:
    """Replay OneBot v11 event lines through the routing; see the package docstring."""
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
        deployment=deployment,
        stake_keys=stake_keys,
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
