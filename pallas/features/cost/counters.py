"""Today's reply usage as StateStore counters, so the reply path never aggregates the DB.

Counters are per China day (as the usage ledger) × scope (`group:<id>` or `all`) × kind
(`chat`: reply calls without images, `vision`: reply calls that attached images) × calls /
tokens, incremented by the chat turn right after its LLM call (`record`). They live two days.

A scope's counters of a day are seeded once from the usage ledger (`ensure_seeded`, first read
or write of the day by any process; a `set_if_absent` marker makes it once), so a restarted
bot on the in-memory store keeps counting where the ledger is. So that a group's first @ of
the day does not wait for that read: at start-up one grouped query seeds every group with
rows today (`seed_every_group`; a group without rows then has nothing to seed), and the group
warm-up seeds a group when the bot sees it (`seed_today`, after midnight). The ledger does not
tell image-carrying replies apart, so seeded calls all count as `chat`. Seeding adds (`incr`)
rather than overwrites, so a race at the first turn of a day can over-count by a call, never
under.

A reply call is counted before it is made (`reserve`, at the cost guard's check): one `incr`
of the group's and of the deployment's chat calls gives the turn its place in today's count,
so concurrent turns — in one process or in several sharing Redis — each see the calls taken
before theirs and a budget of N calls admits exactly N. A turn that does not go ahead gives its
place back (`release`); one that calls the model settles it (`record` with the reservation:
its tokens are added, and an image-carrying call moves from `chat` to `vision`). Tokens are
known only after the call, so the token budgets can be passed by the calls in flight; the call
budgets cannot.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from typing import Literal

from pallas.core import state_keys as keys
from pallas.core.clock import local_day
from pallas.core.db.repositories.usage import UsageRepository, UsageTotals, add_totals
from pallas.core.state import StateStore, claim
from pallas.features.cost.ladder import TodayUsage, Usage

log = logging.getLogger("pallas.cost")

Kind = Literal["chat", "vision"]
KINDS: tuple[Kind, ...] = ("chat", "vision")
DAY_TTL_S = keys.COST_DAY_TTL_S
MEMBERS_KEPT = 500


def group_scope(group_id: int) -> str:
    """Every account of the deployment in a group spends the group's one budget."""
    return keys.cost_scope(group_id)


ALL = "all"
EVERY_GROUP = "*"  # marker scope: every group's counters of the day were seeded in one query


@dataclass(frozen=True, slots=True)
class Reservation:
    """One reply call counted ahead (`UsageCounters.reserve`): its China day and scope."""

    day: str
    scope: str  # the group's cost scope (`group_scope`); the deployment's is `ALL`
    id: str = field(default_factory=lambda: uuid.uuid4().hex)


@dataclass
class UsageCounters:
    state: StateStore
    ledger: UsageRepository | None = None  # None: no seeding (replay, tests)
    _open: set[str] = field(default_factory=set, repr=False)  # reservations not yet settled

    # -- keys ---------------------------------------------------------------------------------
    @staticmethod
    def key(day: str, scope: str, kind: str, unit: str) -> str:
        return keys.cost_use(day, scope, kind, unit)

    # -- seeding ------------------------------------------------------------------------------
    async def ensure_seeded(self, now: float, scope: str) -> None:
        if self.ledger is None:
            return
        day = local_day(now)
        marker = keys.cost_seeded(day, scope)
        if not await claim(self.state, marker, now, ttl=DAY_TTL_S, when_unavailable=False):
            return
        if await self.state.get(keys.cost_seeded(day, EVERY_GROUP)) is not None:
            return  # `seed_every_group` found no ledger row of this scope: nothing to add
        try:
            if scope == ALL:
                totals = await self.ledger.totals(now=now, task="chat")
            else:
                group_id = int(scope.rpartition(":")[2])
                totals = await self.ledger.totals(now=now, group_id=group_id, task="chat")
        except Exception:
            log.exception("seeding today's usage counters (%s) from the ledger failed", scope)
            await self.state.delete(marker)
            return
        await self._add(day, scope, totals)

    async def seed_every_group(self, now: float) -> int:
        """Seed today's counters of every scope with ledger rows in one grouped query (at
        start-up), so no group's first @ of the day queries the ledger; returns the scopes
        seeded here. The query runs before each scope's marker is claimed: a scope a turn
        seeded meanwhile keeps its own seeding, and a call recorded after the query is counted
        by its turn only — no call is counted twice."""
        if self.ledger is None:
            return 0
        day = local_day(now)
        done = keys.cost_seeded(day, EVERY_GROUP)
        if await self.state.get(done) is not None:
            return 0
        try:
            by_group = await self.ledger.group_totals(now=now, task="chat")
        except Exception:
            log.exception("seeding today's usage counters of every group from the ledger failed")
            return 0
        seeded = 0
        for group_id, totals in _per_group(by_group).items():
            seeded += await self._seed_if_unclaimed(now, day, group_scope(group_id), totals)
        deployment = UsageTotals(
            calls=sum(t.calls for t in by_group.values()),
            prompt_tokens=sum(t.tokens for t in by_group.values()),
        )
        seeded += await self._seed_if_unclaimed(now, day, ALL, deployment)
        await self.state.set(done, now, ttl=DAY_TTL_S)
        return seeded

    async def _seed_if_unclaimed(
        self, now: float, day: str, scope: str, totals: UsageTotals
    ) -> int:
        marker = keys.cost_seeded(day, scope)
        if not await claim(self.state, marker, now, ttl=DAY_TTL_S, when_unavailable=False):
            return 0
        await self._add(day, scope, totals)
        return 1

    async def _add(self, day: str, scope: str, totals: UsageTotals) -> None:
        if totals.calls:
            await self.state.incr(
                self.key(day, scope, "chat", "calls"), totals.calls, ttl=DAY_TTL_S
            )
        if totals.tokens:
            await self.state.incr(
                self.key(day, scope, "chat", "tokens"), totals.tokens, ttl=DAY_TTL_S
            )

    # -- reads / writes -----------------------------------------------------------------------
    async def usage(self, now: float, scope: str, kind: str) -> Usage:
        day = local_day(now)
        calls = await self.state.get(self.key(day, scope, kind, "calls"))
        tokens = await self.state.get(self.key(day, scope, kind, "tokens"))
        return Usage(int(calls or 0), int(tokens or 0))

    async def seed_today(self, now: float, group_id: int) -> None:
        """Seed the group's and the deployment's counters of today if no turn did yet: the
        group warm-up calls it when a group is seen, so its first @ of the day (each of
        many at once in a burst) does not wait for a ledger query on its critical path."""
        await self.ensure_seeded(now, group_scope(group_id))
        await self.ensure_seeded(now, ALL)

    async def today(self, now: float, group_id: int) -> TodayUsage:
        scope = group_scope(group_id)
        await self.seed_today(now, group_id)
        chat = await self.usage(now, scope, "chat")
        vision = await self.usage(now, scope, "vision")
        all_chat = await self.usage(now, ALL, "chat")
        all_vision = await self.usage(now, ALL, "vision")
        deployment = Usage(all_chat.calls + all_vision.calls, all_chat.tokens + all_vision.tokens)
        return TodayUsage(chat, vision, deployment)

    async def reserve(self, now: float, group_id: int) -> tuple[Reservation, TodayUsage]:
        """Count one chat call of the group ahead of the model call; returns the reservation
        and today's usage *before* it (the calls reserved or made by earlier turns)."""
        scope = group_scope(group_id)
        await self.seed_today(now, group_id)
        day = local_day(now)
        mine = await self.state.incr(self.key(day, scope, "chat", "calls"), 1, ttl=DAY_TTL_S)
        every = await self.state.incr(self.key(day, ALL, "chat", "calls"), 1, ttl=DAY_TTL_S)
        reservation = Reservation(day, scope)
        self._open.add(reservation.id)
        chat_tokens = await self.state.get(self.key(day, scope, "chat", "tokens"))
        vision = await self.usage(now, scope, "vision")
        all_tokens = await self.state.get(self.key(day, ALL, "chat", "tokens"))
        all_vision = await self.usage(now, ALL, "vision")
        before = TodayUsage(
            Usage(mine - 1, int(chat_tokens or 0)),
            vision,
            Usage(every - 1 + all_vision.calls, int(all_tokens or 0) + all_vision.tokens),
        )
        return reservation, before

    async def release(self, reservation: Reservation | None) -> None:
        """Give back a reservation whose call was not made (a no-op once settled)."""
        if reservation is None or reservation.id not in self._open:
            return
        self._open.discard(reservation.id)
        for scope in (reservation.scope, ALL):
            await self.state.incr(self.key(reservation.day, scope, "chat", "calls"), -1)

    async def record(
        self,
        now: float,
        group_id: int,
        kind: Kind,
        tokens: int,
        reservation: Reservation | None = None,
    ) -> None:
        """One reply LLM call (failed calls count too, as in the ledger). The call a
        `reservation` counted ahead is settled: only its tokens (and its kind) are added."""
        if reservation is not None and reservation.id in self._open:
            self._open.discard(reservation.id)
            await self._settle(reservation, kind, tokens)
            return
        day = local_day(now)
        for scope in (group_scope(group_id), ALL):
            await self.ensure_seeded(now, scope)
            await self.state.incr(self.key(day, scope, kind, "calls"), 1, ttl=DAY_TTL_S)
            if tokens:
                await self.state.incr(self.key(day, scope, kind, "tokens"), tokens, ttl=DAY_TTL_S)

    async def _settle(self, reservation: Reservation, kind: Kind, tokens: int) -> None:
        for scope in (reservation.scope, ALL):
            if kind == "vision":  # reserved as a chat call: it attached images after all
                await self.state.incr(self.key(reservation.day, scope, "chat", "calls"), -1)
                await self.state.incr(
                    self.key(reservation.day, scope, "vision", "calls"), 1, ttl=DAY_TTL_S
                )
            if tokens:
                await self.state.incr(
                    self.key(reservation.day, scope, kind, "tokens"), tokens, ttl=DAY_TTL_S
                )

    # -- member limit hits --------------------------------------------------------------------
    async def note_limited(self, now: float, group_id: int, user_id: int) -> None:
        day, scope = local_day(now), group_scope(group_id)
        await self.state.incr(keys.cost_limited(day, scope), 1, ttl=DAY_TTL_S)
        await self.state.push(
            keys.cost_limited_members(day, scope), user_id, maxlen=MEMBERS_KEPT, ttl=DAY_TTL_S
        )

    async def limited_today(self, now: float, group_id: int) -> tuple[int, list[int]]:
        """(refused turns, distinct members) of the member limit today."""
        day, scope = local_day(now), group_scope(group_id)
        count = int(await self.state.get(keys.cost_limited(day, scope)) or 0)
        members = await self.state.items(keys.cost_limited_members(day, scope))
        return count, sorted({int(m) for m in members})

    async def once_today(self, now: float, what: str) -> bool:
        """True the first time `what` happens today (warnings, the deployment trip)."""
        marker = keys.cost_once(local_day(now), what)
        return await claim(self.state, marker, now, ttl=DAY_TTL_S, when_unavailable=False)

    async def notices(self, now: float) -> list[str]:
        return [str(n) for n in await self.state.items(keys.cost_notices(local_day(now)))]

    async def add_notice(self, now: float, text: str) -> None:
        key = keys.cost_notices(local_day(now))
        await self.state.push(key, text, maxlen=20, ttl=DAY_TTL_S)


def _per_group(by_account: dict[tuple[int, int], UsageTotals]) -> dict[int, UsageTotals]:
    """The ledger's (account, group) totals summed per group (the budget is the group's)."""
    out: dict[int, UsageTotals] = {}
    for (_, group_id), totals in by_account.items():
        out[group_id] = add_totals(out.get(group_id, UsageTotals()), totals)
    return out
