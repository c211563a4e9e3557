"""The whole routing decision as one pure function over a state snapshot.

`evaluate_route` runs: triggers → reply_gate → (merge) → ambient_stake (unaddressed soft
triggers; any other unaddressed turn once it passed necessity) → cooldown / disabled →
reply_necessity → (QUOTE roll) → decide_current_turn_by_rule → low_engagement (PASS only) →
the daily cap on unprompted utterances, and returns a frozen `RouteResult` holding every
stage's result. `Router` (router.py) loads the `RouteState` from the StateStore, calls
this, and writes the effects back.

A member whose previous turn is still being answered gets `merge` (right after the gate): the
caller folds the message into that turn, so two quick messages produce one reply.

A turn that fails the necessity threshold still reaches the turn decision (which then says
PASS) when it is not addressed, came through a soft trigger (follow-up window, alias mention,
ambient roll) and has no hard negative term (noise, spam, bystander); every other
below-threshold turn is skipped silently.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from pallas.core.turn import TurnInput
from pallas.routing.ambient_stake import (
    NO_STAKE_KEYS,
    StakeInput,
    StakeKeys,
    StakeResult,
    assess_stake,
)
from pallas.routing.config import RoutingConfig
from pallas.routing.cooldown import CooldownResult, CooldownVerdict, evaluate_cooldown
from pallas.routing.current_turn_decision import (
    CurrentTurnAction,
    CurrentTurnDecision,
    CurrentTurnDecisionInput,
    decide_current_turn_by_rule,
)
from pallas.routing.low_engagement import LowEngagementResult, decide_low_engagement
from pallas.routing.reply_gate import (
    GateResult,
    GateVerdict,
    evaluate_reply_gate,
    has_image,
    has_sticker,
)
from pallas.routing.reply_necessity import NecessityInput, NecessityResult, score_reply_necessity
from pallas.routing.reply_targets import QuoteDecision, decide_quote
from pallas.routing.route_state import RouteState
from pallas.routing.triggers import TriggerKind, TriggerResult, detect_trigger

SOFT_TRIGGERS = frozenset({TriggerKind.FOLLOW_UP, TriggerKind.ALIAS, TriggerKind.AMBIENT})


class RouteOutcome(StrEnum):
    REPLY = "reply"
    QUOTE = "quote"
    FOLLOW_UP = "follow_up"
    TOOL = "tool"
    PASS_PHRASE = "pass_phrase"  # PASS with one local low-engagement phrase
    PASS_SILENT = "pass_silent"
    SKIP = "skip"
    ACCUMULATE = "accumulate"  # cooldown: kept for the next trigger
    DEFER = "defer"  # unfinished sentence: kept for the member's next message
    MERGE = "merge"  # the member's previous turn is still in flight: fold this message into it


_ACTION_OUTCOME = {
    CurrentTurnAction.REPLY: RouteOutcome.REPLY,
    CurrentTurnAction.QUOTE: RouteOutcome.QUOTE,
    CurrentTurnAction.FOLLOW_UP: RouteOutcome.FOLLOW_UP,
    CurrentTurnAction.TOOL: RouteOutcome.TOOL,
}
LLM_OUTCOMES = frozenset(_ACTION_OUTCOME.values())


@dataclass(frozen=True, slots=True)
class RouteExtras:
    """Per-turn context from outside routing (tool selector, relationships, learning)."""

    tool_requested: bool = False
    tool_permitted: bool = False
    affinity: float | None = None
    group_expressions: tuple[str, ...] = ()
    stake_keys: StakeKeys = NO_STAKE_KEYS  # words that give the bot a stake, by source


@dataclass(frozen=True, slots=True)
class RouteResult:
    turn: TurnInput
    now: float
    outcome: RouteOutcome
    # dedupe | gate | stake | admission | cooldown | necessity | decision | low_engagement |
    # restraint
    stage: str
    reason: str
    trigger: TriggerResult
    gate: GateResult
    cooldown: CooldownResult | None = None
    necessity: NecessityResult | None = None
    quote: QuoteDecision | None = None
    decision: CurrentTurnDecision | None = None
    low_engagement: LowEngagementResult | None = None
    stake: StakeResult | None = None
    accumulated: tuple[Mapping[str, Any], ...] = field(default_factory=tuple)

    @property
    def calls_llm(self) -> bool:
        return self.outcome in LLM_OUTCOMES

    @property
    def phrase(self) -> str | None:
        return self.low_engagement.phrase if self.low_engagement else None

    @property
    def unprompted(self) -> bool:
        """The bot speaks (LLM turn or phrase) although nobody addressed it."""
        speaks = self.calls_llm or self.outcome is RouteOutcome.PASS_PHRASE
        return speaks and not self.trigger.addressed

    @property
    def self_started(self) -> bool:
        """Unprompted and started by the bot itself (ambient, a mention), not the follow-up of
        a conversation a member began: what the daily cap counts."""
        return self.unprompted and not self.trigger.follow_up

    @property
    def action(self) -> CurrentTurnAction | None:
        return self.decision.action if self.decision else None

    def to_log_dict(self) -> dict[str, Any]:
        """One structured record: what came in, every stage's verdict, what happens."""
        t, d, n = self.turn, self.decision, self.necessity
        return {
            "time": self.now,
            "bot": t.bot_id,
            "group": t.group_id,
            "user": t.user_id,
            "message_id": t.message_id,
            "text": t.text[:40],
            "trigger": self.trigger.kind.value,
            "trigger_reason": self.trigger.reason,
            "addressed": self.trigger.addressed,
            "gate": self.gate.verdict.value,
            "gate_reason": self.gate.reason,
            "cooldown": self.cooldown.reason if self.cooldown else None,
            "score": n.score if n else None,
            "threshold": n.threshold if n else None,
            "terms": n.terms_as_pairs() if n else [],
            "action": d.action.value if d else None,
            "social_action": d.social_action.value if d else None,
            "delivery_style": d.delivery_style.value if d else None,
            "reply_message_id": d.reply_message_id if d else None,
            "quote": self.quote.reason if self.quote else None,
            "low_engagement": self.low_engagement.reason if self.low_engagement else None,
            "stake": self.stake.reason if self.stake else None,
            "mood": self.stake.mood.value if self.stake else None,
            "phrase": self.phrase,
            "outcome": self.outcome.value,
            "stage": self.stage,
            "reason": self.reason,
            "accumulated": len(self.accumulated),
        }


def duplicate_result(turn: TurnInput, now: float) -> RouteResult:
    """The record for a message id that was already routed (re-delivered event)."""
    trigger = TriggerResult(TriggerKind.NONE, False, 0, turn.text, "duplicate")
    gate = GateResult(GateVerdict.SKIP, "duplicate")
    return RouteResult(
        turn=turn,
        now=now,
        outcome=RouteOutcome.SKIP,
        stage="dedupe",
        reason="duplicate",
        trigger=trigger,
        gate=gate,
    )


def _necessity(
    turn: TurnInput,
    trig: TriggerResult,
    cfg: RoutingConfig,
    route_state: RouteState,
    now: float,
    extras: RouteExtras,
) -> NecessityResult:
    inp = NecessityInput(
        text=trig.content_text,
        addressed=trig.addressed,
        mentioned=trig.mentioned,
        follow_up=trig.follow_up,
        ambient=trig.is_ambient,
        mentions_others=turn.mentions_others,
        recent_bot_replies=route_state.recent_bot_replies(now, cfg.necessity.recent_window_s),
        back_and_forth=route_state.back_and_forth(
            turn.user_id,
            now,
            cfg.necessity.back_and_forth_window_s,
            cfg.necessity.back_and_forth_min_replies,
        ),
        affinity=extras.affinity,
    )
    return score_reply_necessity(inp, cfg.necessity)


def _decide(
    turn: TurnInput,
    trig: TriggerResult,
    cfg: RoutingConfig,
    route_state: RouteState,
    now: float,
    necessity: NecessityResult,
    quote: QuoteDecision | None,
    extras: RouteExtras,
) -> CurrentTurnDecision:
    last_to_user = route_state.last_reply_to_user(turn.user_id)
    recent_pair = last_to_user is not None and now - last_to_user <= cfg.triggers.follow_up_window_s
    inp = CurrentTurnDecisionInput(
        text=trig.content_text,
        addressed=trig.addressed,
        trigger=trig.kind,
        timeline_width=trig.timeline_width,
        necessity_passed=necessity.passed,
        has_image=has_image(turn),
        has_sticker=has_sticker(turn),
        reply_to_message_id=turn.reply_to,
        quote=quote,
        tool_requested=extras.tool_requested,
        tool_permitted=extras.tool_permitted,
        bot_recently_replied_to_user=recent_pair,
    )
    return decide_current_turn_by_rule(inp, cfg.short_social)


def _stake(
    turn: TurnInput,
    trig: TriggerResult,
    config: RoutingConfig,
    route_state: RouteState,
    now: float,
    stake_keys: StakeKeys = NO_STAKE_KEYS,
) -> StakeResult:
    quoted = turn.reply_to_user_id
    inp = StakeInput(
        text=trig.content_text,
        raw_text=turn.text,
        user_id=turn.user_id,
        now=now,
        trigger="follow_up" if trig.follow_up else trig.kind.value,
        mentioned=trig.mentioned,
        asked_about=trig.alias_position == "about",
        mentions_others=turn.mentions_others,
        mentions_all=turn.mentions_all,
        replies_to_member=quoted is not None and quoted not in (turn.bot_id, turn.user_id),
        recent=route_state.recent_lines,
        stake_keys=stake_keys,
    )
    return assess_stake(inp, config.social)


def over_daily_cap(result: RouteResult) -> RouteResult:
    """An unprompted utterance over the daily cap becomes a skip (`restraint:daily_cap`)."""
    return replace(result, outcome=RouteOutcome.SKIP, stage="restraint", reason="daily_cap")


def _capped(result: RouteResult, config: RoutingConfig, route_state: RouteState) -> RouteResult:
    if not result.self_started or route_state.unprompted_today < config.social.daily_unprompted_cap:
        return result
    return over_daily_cap(result)


def _pass_eligible(trig: TriggerResult, necessity: NecessityResult) -> bool:
    return not trig.addressed and trig.kind in SOFT_TRIGGERS and not necessity.hard_negative


def evaluate_route(
    turn: TurnInput,
    config: RoutingConfig,
    route_state: RouteState,
    *,
    aliases: Iterable[str],
    now: float,
    rng: random.Random,
    extras: RouteExtras | None = None,
) -> RouteResult:
    """Pure: every routing stage for one turn over a snapshot of the group's state."""
    ex = extras or RouteExtras()
    trig = detect_trigger(
        turn,
        aliases=aliases,
        triggers=config.triggers,
        ambient=config.ambient,
        now=now,
        rng=rng,
        bot_message_ids=route_state.bot_messages,
        last_bot_reply_to_user_at=route_state.follow_up_anchor(
            turn.user_id, config.triggers.follow_up_max_others
        ),
        ambient_times=route_state.ambient_times,
    )
    gate = evaluate_reply_gate(turn, trig, config.gate, rng=rng)
    base: dict[str, Any] = {"turn": turn, "now": now, "trigger": trig, "gate": gate}
    if gate.verdict is not GateVerdict.PROCEED:
        outcome = RouteOutcome.DEFER if gate.verdict is GateVerdict.DEFER else RouteOutcome.SKIP
        return RouteResult(outcome=outcome, stage="gate", reason=gate.reason, **base)
    if route_state.user_in_flight:  # a member's burst joins the turn in flight, whatever it says
        return RouteResult(
            outcome=RouteOutcome.MERGE, stage="admission", reason="user_in_flight", **base
        )
    if not trig.addressed and trig.kind in SOFT_TRIGGERS:
        stake = _stake(turn, trig, config, route_state, now, ex.stake_keys)
        base["stake"] = stake
        if not stake.allowed:
            return RouteResult(
                outcome=RouteOutcome.SKIP, stage="stake", reason=stake.reason, **base
            )
    cool = evaluate_cooldown(
        config.cooldown,
        enabled=config.enabled,
        now=now,
        addressed=trig.addressed,
        last_turn_at=route_state.last_turn_at,
        silenced_until=route_state.silenced_until,
    )
    base["cooldown"] = cool
    if cool.verdict is not CooldownVerdict.PROCEED:
        outcome = (
            RouteOutcome.ACCUMULATE
            if cool.verdict is CooldownVerdict.ACCUMULATE
            else RouteOutcome.SKIP
        )
        return RouteResult(outcome=outcome, stage="cooldown", reason=cool.reason, **base)
    necessity = _necessity(turn, trig, config, route_state, now, ex)
    base["necessity"] = necessity
    if not necessity.passed and not _pass_eligible(trig, necessity):
        return RouteResult(
            outcome=RouteOutcome.SKIP, stage="necessity", reason=necessity.reason, **base
        )
    if not trig.addressed and "stake" not in base:  # no soft trigger, yet above threshold
        stake = _stake(turn, trig, config, route_state, now, ex.stake_keys)
        base["stake"] = stake
        if not stake.allowed:
            return RouteResult(
                outcome=RouteOutcome.SKIP, stage="stake", reason=stake.reason, **base
            )
    return _capped(
        _finish_decision(turn, config, route_state, now, rng, ex, base), config, route_state
    )


def _finish_decision(
    turn: TurnInput,
    config: RoutingConfig,
    route_state: RouteState,
    now: float,
    rng: random.Random,
    extras: RouteExtras,
    base: dict[str, Any],
) -> RouteResult:
    trig: TriggerResult = base["trigger"]
    necessity: NecessityResult = base["necessity"]
    stake: StakeResult | None = base.get("stake")
    quote = None
    if turn.reply_to is not None and necessity.passed:
        quote = decide_quote(
            config.quote,
            reply_to=turn.reply_to,
            candidates=route_state.candidates,
            last_quote_at=route_state.last_quote_at,
            now=now,
            rng=rng,
        )
    decision = _decide(turn, trig, config, route_state, now, necessity, quote, extras)
    base.update(quote=quote, decision=decision)
    if decision.action is not CurrentTurnAction.PASS:
        outcome = _ACTION_OUTCOME[decision.action]
        return RouteResult(outcome=outcome, stage="decision", reason=decision.reason, **base)
    low = decide_low_engagement(
        config.low_engagement,
        action=decision.action,
        source=decision.source,
        addressed=trig.addressed,
        focus_text=trig.content_text,
        recent_bot_replies=route_state.recent_bot_replies(now, config.necessity.recent_window_s),
        rng=rng,
        last_phrase=route_state.last_phrase,
        group_expressions=extras.group_expressions,
        mood=stake.mood if stake is not None else None,
        recent_texts=_recent_texts(route_state, now, config),
    )
    outcome = RouteOutcome.PASS_PHRASE if low.emit else RouteOutcome.PASS_SILENT
    reason = f"{decision.reason}:{low.reason}"
    return RouteResult(
        outcome=outcome, stage="low_engagement", reason=reason, low_engagement=low, **base
    )


def _recent_texts(route_state: RouteState, now: float, config: RoutingConfig) -> tuple[str, ...]:
    """What the group said lately: a PASS phrase never repeats it."""
    window = config.social.thread_window_s
    return tuple(line.text for line in route_state.recent_lines if 0 <= now - line.t <= window)
