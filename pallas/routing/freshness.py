"""Stale messages: after a reconnect or a backlog, old messages are recorded, not answered.

A message older than `[freshness] max_age_s` (event time against the clock) is stale:

    stale_message            not addressed to the bot: recorded (the recorder already did), no
                             routing, no reply
    stale_superseded         an @ from a member who has @-ed the bot again since: only their
                             latest message is considered
    stale_already_answered   the member already got their one short reply for this backlog
    stale_short_reply        the member's latest stale @: answered once, in one short bubble

The same verdict is taken again when an @ has waited behind the group's reply queue (admission)
longer than `max_age_s`. `judge_freshness` is pure; `FreshnessGate` keeps the two facts it needs
(the member's latest @ and whether their short reply was given) in the `StateStore`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from pallas.context.chat_prompt import ReplyShapeSpec
from pallas.core import state_keys
from pallas.core.clock import Sleep
from pallas.core.log_limit import LogLimiter, skipped_note
from pallas.core.state import StateStore, claim
from pallas.core.turn import TurnInput
from pallas.routing.config import RoutingConfig
from pallas.routing.router import Router

log = logging.getLogger("pallas.chat")
_STALE_LINES = LogLimiter(per_window=3, window_s=60.0)


class GroupConfigLike(Protocol):  # pallas.config.GroupConfig (which imports this module)
    @property
    def freshness(self) -> FreshnessConfig: ...

    @property
    def routing(self) -> RoutingConfig: ...


# the one reply to a member's latest stale @: a single short bubble
STALE_REPLY_SHAPE = ReplyShapeSpec(
    max_segments=1, recommended_segments=1, min_chars=2, max_chars=30
)


class FreshnessConfig(BaseModel):
    """`[freshness]`: how old a message may be and still be answered."""

    model_config = ConfigDict(extra="forbid")

    max_age_s: float = Field(default=120.0, ge=0)  # 0 = answer messages of any age
    # a stale @ waits this long for the rest of the backlog before checking it is the latest
    settle_s: float = Field(default=0.5, ge=0, le=10)


class FreshAction(StrEnum):
    ANSWER = "answer"  # fresh: the normal path
    SHORT = "short"  # stale, the member's latest @: at most one short reply
    SKIP = "skip"  # recorded, not answered


@dataclass(frozen=True, slots=True)
class FreshnessVerdict:
    action: FreshAction
    reason: str
    age_s: float

    @property
    def answers(self) -> bool:
        return self.action is not FreshAction.SKIP


def message_age(event_time: float, now: float) -> float:
    """Seconds since the event (never negative: a peer's clock may run ahead)."""
    return max(0.0, now - event_time)


def is_stale(event_time: float, now: float, max_age_s: float) -> bool:
    return max_age_s > 0 and message_age(event_time, now) > max_age_s


def judge_freshness(
    *,
    event_time: float,
    now: float,
    max_age_s: float,
    addressed: bool,
    is_latest_address: bool = True,
    short_reply_taken: bool = False,
) -> FreshnessVerdict:
    """What to do with one message given its age. Pure.

    `is_latest_address`: no later @ of the same member has arrived; `short_reply_taken`: that
    member's one short reply for this backlog went to another message."""
    age = message_age(event_time, now)
    if not is_stale(event_time, now, max_age_s):
        return FreshnessVerdict(FreshAction.ANSWER, "fresh", age)
    if not addressed:
        return FreshnessVerdict(FreshAction.SKIP, "stale_message", age)
    if not is_latest_address:
        return FreshnessVerdict(FreshAction.SKIP, "stale_superseded", age)
    if short_reply_taken:
        return FreshnessVerdict(FreshAction.SKIP, "stale_already_answered", age)
    return FreshnessVerdict(FreshAction.SHORT, "stale_short_reply", age)


def looks_addressed(turn: TurnInput) -> bool:
    """The adapter's verdict before routing: @bot, a reply to the bot, a leading nickname."""
    return turn.to_me or turn.mentions_bot or turn.quotes_bot


class FreshnessGate:
    """The per-member facts behind `judge_freshness`, in the StateStore; skips are recorded in
    the route log (`/pallas why`)."""

    def __init__(self, state: StateStore, routing: Router, *, sleep: Sleep) -> None:
        self._state = state
        self._routing = routing
        self._sleep = sleep

    async def admit(
        self,
        turn: TurnInput,
        group: GroupConfigLike,
        now: float,
        addressed: bool,
        *,
        stage: str = "freshness",
        wait: Sleep | None = None,
    ) -> FreshnessVerdict:
        """`check`, and a skip recorded for /pallas why (stage `freshness` or `queue`);
        `wait`: how this turn waits for the settle (the gate's own sleep when None)."""
        verdict = await self.check(
            turn,
            group.freshness,
            now=now,
            addressed=addressed,
            settle=stage == "freshness",
            wait=wait,
        )
        if not verdict.answers:
            # a reconnect's backlog is hundreds of these: a few lines per group, then a count
            logged, skipped = _STALE_LINES.allow(f"{turn.bot_id}:{turn.group_id}")
            if logged:
                log.info(
                    "group %s: message %s is %.0f s old: %s%s",
                    turn.group_id,
                    turn.message_id,
                    verdict.age_s,
                    verdict.reason,
                    skipped_note(skipped),
                )
            await self._routing.record_outside_decision(
                turn, group.routing, now=now, stage=stage, reason=verdict.reason
            )
        return verdict

    @staticmethod
    def _key(turn: TurnInput, name: str) -> str:
        return state_keys.freshness(name, turn.bot_id, turn.group_id, turn.user_id)

    async def note(self, turn: TurnInput, config: FreshnessConfig) -> None:
        """Remember the member's @s with their event time. A backlog is handled concurrently,
        so arrival order is not message order: `check` picks the latest by event time."""
        if looks_addressed(turn) and config.max_age_s > 0:
            ttl = max(config.max_age_s * 2, 60.0)
            entry = [turn.time, turn.message_id]
            await self._state.push(self._key(turn, "addressed"), entry, maxlen=32, ttl=ttl)

    async def _latest_address(self, turn: TurnInput) -> int | None:
        """The message id of the member's latest @ by event time (ties: the later noted)."""
        latest: tuple[float, int, int] | None = None
        for order, entry in enumerate(await self._state.items(self._key(turn, "addressed"))):
            try:
                event_time, message_id = float(entry[0]), int(entry[1])
            except (TypeError, ValueError, IndexError, KeyError):
                continue
            if latest is None or (event_time, order) >= (latest[0], latest[1]):
                latest = (event_time, order, message_id)
        return None if latest is None else latest[2]

    async def check(
        self,
        turn: TurnInput,
        config: FreshnessConfig,
        *,
        now: float,
        addressed: bool,
        settle: bool = True,
        wait: Sleep | None = None,
    ) -> FreshnessVerdict:
        """The verdict for `turn` now; a stale @ first waits `settle_s` for the backlog."""
        if not is_stale(turn.time, now, config.max_age_s) or not addressed:
            return judge_freshness(
                event_time=turn.time, now=now, max_age_s=config.max_age_s, addressed=addressed
            )
        if settle and config.settle_s:
            await (wait or self._sleep)(config.settle_s)
        latest = await self._latest_address(turn)
        is_latest = latest is None or latest == turn.message_id
        taken = False
        if is_latest:
            taken = not await self._claim_short_reply(turn, config)
        return judge_freshness(
            event_time=turn.time,
            now=now,
            max_age_s=config.max_age_s,
            addressed=True,
            is_latest_address=is_latest,
            short_reply_taken=taken,
        )

    async def _claim_short_reply(self, turn: TurnInput, config: FreshnessConfig) -> bool:
        """One short reply per member and backlog; a retry of the same message keeps it."""
        key = self._key(turn, "answered")
        ttl = max(config.max_age_s, 60.0)
        if await claim(self._state, key, turn.message_id, ttl=ttl, when_unavailable=True):
            return True
        holder = await self._state.get(key)
        return holder is not None and int(holder) == turn.message_id
