"""The route step of a group turn (`RouteStep`): freshness → tool plan → routing → next step.

Shared by the live bot (`ChatTurnService.handle` acts on the `RoutedTurn`) and `pallas replay`
(which simulates what happens after it), so the replay decides with the code the bot runs.
Nothing here sends a message or calls the LLM; the state it writes (freshness facts, merge
lines, routing's decision log) is what the live path writes before acting.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace
from enum import StrEnum

from pallas.config import GroupConfig
from pallas.core.clock import Clock, Sleep
from pallas.core.turn import TurnInput
from pallas.features.persona import PersonaPack
from pallas.features.tools import NO_TOOL, ToolPlan, ToolRegistry, plan_turn_tool
from pallas.routing import StakeKeys
from pallas.routing.config import LowEngagementConfig
from pallas.routing.evaluate import RouteOutcome, RouteResult
from pallas.routing.freshness import FreshnessGate, FreshnessVerdict, looks_addressed
from pallas.routing.router import Router
from pallas.turn.contracts import PhraseSource, StakeKeySource
from pallas.turn.parts.addressing import Addressing
from pallas.turn.parts.known_stakes import KnownStakes
from pallas.turn.parts.merges import TurnMerges

log = logging.getLogger("pallas.chat")

GroupConfigFor = Callable[[int], GroupConfig]
PersonaFor = Callable[[str], PersonaPack]


class NextStep(StrEnum):
    """What the live bot does after routing (the replay simulates the same steps)."""

    STALE = "stale"  # too old: recorded, not answered
    PASS_PHRASE = "pass_phrase"  # one local phrase, no LLM
    MERGE = "merge"  # parked for the member's in-flight turn
    RETRY = "retry"  # an addressed message that hit the cooldown: routed again later
    NONE = "none"  # silence / skip / accumulate / defer: nothing to do
    REPLY = "reply"  # an LLM turn (admission, cost guard, reply step)


@dataclass(frozen=True, slots=True)
class RoutedTurn:
    turn: TurnInput
    config: GroupConfig
    persona: PersonaPack
    fresh: FreshnessVerdict
    tool: ToolPlan = NO_TOOL
    route: RouteResult | None = None  # None when the message was too old to route
    attempt: int = 0

    @property
    def step(self) -> NextStep:
        route = self.route
        if route is None:
            return NextStep.STALE
        if route.outcome is RouteOutcome.PASS_PHRASE and route.phrase:
            return NextStep.PASS_PHRASE
        if route.outcome is RouteOutcome.MERGE:
            return NextStep.MERGE
        if route.outcome is RouteOutcome.ACCUMULATE and route.trigger.addressed:
            return NextStep.RETRY
        return NextStep.REPLY if route.calls_llm else NextStep.NONE

    def retry_after_s(self) -> float | None:
        """Seconds until the RETRY step routes the message again; None once retries ran out."""
        if self.step is not NextStep.RETRY or self.route is None:
            return None
        if self.attempt >= self.config.chat.max_accumulate_retries:
            return None
        wait = self.route.cooldown.retry_after_s if self.route.cooldown else None
        return max(wait or 1.0, 0.2)


@dataclass
class RouteStep:
    """Rules only: decides what a group message gets, from the group's config and state."""

    clock: Clock
    routing: Router
    group_config: GroupConfigFor
    persona: PersonaFor
    addressing: Addressing
    merges: TurnMerges
    freshness: FreshnessGate
    tools: ToolRegistry
    rng: random.Random
    superusers: Collection[int] = frozenset()
    # the group's own short expressions for the PASS phrase pool (group learning)
    phrases: PhraseSource | None = None
    # the keys of the group's worldbooks: naming the persona's world is a stake
    stake_keys: StakeKeySource | None = None
    # what the bot remembers (knowledge, the speaker's topics and facts): also a stake
    known_stakes: KnownStakes | None = None

    def aliases(self, config: GroupConfig) -> tuple[str, ...]:
        """Every name the bot answers to in a group of `config` (its persona's, the
        deployment's nicknames, the group's extra aliases)."""
        return self.addressing.aliases(self.persona(config.persona), config)

    async def route(
        self, turn: TurnInput, *, attempt: int = 0, wait: Sleep | None = None
    ) -> RoutedTurn:
        """`wait`: how this turn waits (`TurnContext.wait`: the freshness settle of a stale @
        releases its hold on the loop); the freshness gate's own sleep when None (replay)."""
        config = self.group_config(turn.group_id)
        persona = self.persona(config.persona)
        await self.merges.note_line(turn, self.clock.now())
        if attempt == 0:
            await self.freshness.note(turn, config.freshness)
        fresh = await self.freshness.admit(
            turn, config, self.clock.now(), looks_addressed(turn), wait=wait
        )
        if not fresh.answers:
            return RoutedTurn(turn, config, persona, fresh, attempt=attempt)
        tool = plan_turn_tool(
            turn,
            config.tools,
            self.tools,
            self.addressing.aliases(persona, config),
            admins={*self.superusers, *config.admins},
        )
        route = await self.routing.route(
            turn,
            config.effective_routing(),
            aliases=self.addressing.routing_aliases(persona),
            now=self.clock.now(),
            rng=self.rng,
            tool_requested=tool.requested,
            tool_permitted=tool.permitted,
            group_expressions=await self._group_expressions(turn, config),
            stake_keys=await self._stake_keys(turn, config, persona),
        )
        return RoutedTurn(turn, config, persona, fresh, tool, route, attempt)

    async def _stake_keys(
        self, turn: TurnInput, config: GroupConfig, persona: PersonaPack
    ) -> StakeKeys:
        if turn.is_private or not config.routing.social.enabled:
            return StakeKeys()  # a private message is always addressed: stakes decide nothing
        known = StakeKeys()
        if self.known_stakes is not None:
            known = self.known_stakes.peek(
                turn.bot_id,
                turn.group_id,
                turn.user_id,
                config.memory.shared_pools,
                exclude=self.addressing.aliases(persona, config),
            )
        books = config.worldbook.books
        if self.stake_keys is None or not books:
            return known
        return replace(known, worldbook=await self.stake_keys.stake_keys(books))

    async def _group_expressions(self, turn: TurnInput, config: GroupConfig) -> tuple[str, ...]:
        """The group's own expressions for the PASS phrase pools; not loaded when no phrase can
        be picked (phrases off, or every probability step 0: the pools are never built)."""
        low = config.routing.low_engagement
        if self.phrases is None or not low.use_group_expressions or not phrases_possible(low):
            return ()
        try:
            return await self.phrases.low_engagement_phrases(
                turn.bot_id, turn.group_id, now=self.clock.now(), config=config
            )
        except Exception:
            log.exception("group %s: loading group expressions failed", turn.group_id)
            return ()


def phrases_possible(low: LowEngagementConfig) -> bool:
    """Whether the PASS exit can ever emit a phrase under `low` (its dice can hit)."""
    return low.enabled and any(probability > 0 for _, probability in low.probability_steps)


__all__ = ["NextStep", "RouteStep", "RoutedTurn"]
