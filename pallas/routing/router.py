"""Router: the StateStore side of routing (the decisions themselves are pure).

`route()` loads the group's `RouteState`, runs `evaluate_route`, writes the effects back and
logs one structured record, kept in a per-group ring and in the `RouteHistory` (the database,
written behind: it survives a restart) for "why". Effects written:

- shut-up → `silenced_until` (TTL = the silence period); pending messages are dropped;
- accumulate / defer → the message is pushed to `pending` (bounded, TTL);
- an LLM turn (REPLY / QUOTE / FOLLOW_UP / TOOL) → `last_turn_at` (cooldown anchor), pending
  messages are drained into `RouteResult.accumulated`, the current message becomes a QUOTE
  candidate, `ambient_times` if the trigger was ambient, `last_quote_at` for a QUOTE;
- a low-engagement phrase → `last_phrase`, a "phrase" entry in `bot_replies` (it counts as
  recent bot activity but opens no follow-up window), `ambient_times` if ambient.

Every routed member message is pushed to `recent_lines` (bounded, for the stake's thread rules
and the PASS "never repeat the group" rule). An utterance the bot starts itself (an unaddressed
LLM turn or phrase, not a follow-up of a member's conversation with it) takes a slot of the
group's counter of the day (`unprompted:<YYYYMMDD>` in the group's time zone,
`social.day_offset_hours`) with an atomic `incr` before its effects are applied; over
`daily_unprompted_cap` it becomes `restraint:daily_cap` (the snapshot's
`RouteState.unprompted_today` gives the same verdict without a race).

An LLM turn also marks the member as in flight (TTL `turn_timeout_s`): until the answer is
delivered, further messages from that member route to `merge`.

The state is read as a snapshot, so with a shared store (several processes, or Redis awaits
interleaving two turns of one process) two turns can decide on the same snapshot. The effects
that must not happen twice are claimed atomically (`set_if_absent`): the message id (dedupe),
the member's in-flight marker (a lost claim turns the turn into `merge`) and, for a turn the
cooldown holds, the cooldown slot after the `last_turn_at` that was read (a lost claim turns it
into `accumulate`; an @ is not held by default, so two members' @s both go on). When the store
cannot be reached for the dedupe claim, an addressed message is accumulated and routed again
after `STATE_RETRY_S` (an @ is neither dropped silently nor answered twice); anything else is
skipped (`state_unavailable`). The delivery side calls
`record_bot_reply` after sending an answer (clears the in-flight marker, opens the follow-up
window for that member, counts as a recent bot reply, makes the sent ids QUOTE candidates and
known bot messages), `finish_turn` when a turn ends without an answer, and
`resolve_quote_target` right before sending a QUOTE.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from pallas.core.state import StateStore, StateUnavailableError, claim
from pallas.core.state_keys import (
    ROUTE_PREFIX,
    ROUTE_UNPROMPTED_TTL_S,
    RouteKeys,
    route_recent_lines_ttl,
    route_turn_ttl,
)
from pallas.core.turn import TurnInput
from pallas.routing.ambient_stake import NO_STAKE_KEYS, StakeKeys
from pallas.routing.config import RoutingConfig
from pallas.routing.cooldown import CooldownResult, CooldownVerdict, waits_for_cooldown
from pallas.routing.evaluate import (
    RouteExtras,
    RouteOutcome,
    RouteResult,
    duplicate_result,
    evaluate_route,
    over_daily_cap,
)
from pallas.routing.history import RouteHistory
from pallas.routing.reply_gate import GateVerdict
from pallas.routing.reply_memo import BotReplyMemo
from pallas.routing.reply_targets import add_candidate, resolve_quote_reply_target
from pallas.routing.route_state import BotReply, RouteState, recent_line_json, state_from_raw

log = logging.getLogger("pallas.routing")
# Route lines at INFO only for decisions that speak or call a model; the rest (most messages
# under load) at DEBUG — the periodic `counters:` line (pallas.onebot.counters) counts them.
_QUIET_OUTCOMES = frozenset({"skip", "accumulate", "defer", "merge", "pass_silent"})


def _route_log_level(record: Mapping[str, Any]) -> int:
    return logging.DEBUG if str(record.get("outcome")) in _QUIET_OUTCOMES else logging.INFO


_SCALAR_KEYS = ("silenced_until", "last_turn_at", "ambient_times", "last_quote_at")
# what `load_state` reads in one round trip (`StateStore.read`)
_VALUE_NAMES = (*_SCALAR_KEYS, "candidates", "last_phrase")
_LIST_NAMES = ("bot_replies", "bot_messages", "recent_lines")
_BOT_REPLIES_MAX = 64
STATE_RETRY_S = 3.0  # an addressed message seen while the state store is unreachable


class Router:
    def __init__(self, state: StateStore, *, prefix: str = ROUTE_PREFIX,
                 history: RouteHistory | None = None) -> None:  # fmt: skip
        self._state = state
        self._prefix = prefix
        self._history = history
        self._replies = BotReplyMemo()  # parsed bot_replies of recently routed groups

    def _keys(self, bot_id: int, group_id: int, user_id: int = 0) -> RouteKeys:
        return RouteKeys.of(bot_id, group_id, user_id, prefix=self._prefix)

    async def load_state(
        self, bot_id: int, group_id: int, user_id: int = 0, *, day: str | None = None
    ) -> RouteState:
        keys = self._keys(bot_id, group_id, user_id)
        values = [keys.key(name) for name in _VALUE_NAMES]
        if day is not None:
            values.append(keys.unprompted(day))
        if user_id:
            values.append(keys.in_flight(user_id))
        list_keys = [keys.key(n) for n in _LIST_NAMES]
        got, listed = await self._state.read(values, list_keys)
        raw: dict[str, Any] = dict(zip(_VALUE_NAMES, got, strict=False))
        raw.update(zip(_LIST_NAMES, listed, strict=True))
        extra = got[len(_VALUE_NAMES) :]
        if day is not None:
            raw["unprompted_today"] = extra.pop(0)
        if user_id:
            raw["user_in_flight"] = extra.pop(0) is not None
        replies = self._replies.parse(list_keys[0], listed[0])  # _LIST_NAMES[0]: bot_replies
        return state_from_raw(raw, replies)

    async def route(
        self,
        turn: TurnInput,
        config: RoutingConfig,
        *,
        aliases: Iterable[str],
        now: float,
        rng: random.Random,
        tool_requested: bool = False,
        tool_permitted: bool = False,
        affinity: float | None = None,
        group_expressions: Sequence[str] = (),
        stake_keys: StakeKeys = NO_STAKE_KEYS,
    ) -> RouteResult:
        """Decide one turn, persist its effects, log and keep the decision record.

        A message id is routed once: a re-delivered event is skipped (`duplicate`), except that
        an accumulated / deferred message may be routed again (e.g. after `retry_after_s`).
        """
        keys = self._keys(turn.bot_id, turn.group_id, turn.user_id)
        seen_key = keys.seen(turn.message_id)
        extras = RouteExtras(
            tool_requested, tool_permitted, affinity, tuple(group_expressions), stake_keys
        )

        def decide(route_state: RouteState) -> RouteResult:
            return evaluate_route(
                turn, config, route_state, aliases=tuple(aliases), now=now, rng=rng, extras=extras
            )

        try:
            fresh = await self._state.set_if_absent(seen_key, now, ttl=config.cooldown.dedupe_ttl_s)
        except StateUnavailableError:
            result = _unclaimed_result(decide(RouteState()))  # nothing can be read either
        else:
            if not fresh:
                result = duplicate_result(turn, now)
            else:
                day = day_of(now, config.social.day_offset_hours)
                route_state = await self.load_state(
                    turn.bot_id, turn.group_id, turn.user_id, day=day
                )
                decided = await self._count_unprompted(
                    keys.unprompted(day), decide(route_state), config
                )
                result = await self._apply(decided, config, route_state)
                if decided.self_started and not result.self_started:  # lost a claim: not spoken
                    await self._state.incr(keys.unprompted(day), -1)
                if result.outcome in (RouteOutcome.ACCUMULATE, RouteOutcome.DEFER):
                    await self._state.delete(seen_key)  # routed again later: noted then
                if result.outcome is not RouteOutcome.DEFER and not (
                    result.outcome is RouteOutcome.ACCUMULATE and result.trigger.addressed
                ):  # a line held by the cooldown was still said: the thread rules see it
                    await self._note_line(keys, result, config)
        await self._remember(keys, result, config)
        return result

    async def _count_unprompted(
        self, key: str, result: RouteResult, config: RoutingConfig
    ) -> RouteResult:
        """Take one of the day's unprompted utterances atomically, or cap the result: two
        processes deciding on the same snapshot cannot both pass the last slot."""
        if not result.self_started:
            return result
        taken = await self._state.incr(key, ttl=ROUTE_UNPROMPTED_TTL_S)
        if taken <= config.social.daily_unprompted_cap:
            return result
        await self._state.incr(key, -1)
        return over_daily_cap(result)

    async def _note_line(self, keys: RouteKeys, result: RouteResult, config: RoutingConfig) -> None:
        turn, now = result.turn, result.now
        quoted = turn.reply_to_user_id if turn.reply_to_user_id != turn.bot_id else None
        others = [uid for uid in turn.mentions if uid != turn.bot_id]
        target = quoted if quoted is not None else (others[0] if others else None)
        ttl = route_recent_lines_ttl(config.social.thread_window_s)
        await self._state.push(
            keys.key("recent_lines"),
            recent_line_json(now, turn.user_id, turn.text, target, result.trigger.addressed),
            maxlen=config.social.recent_lines,
            ttl=ttl,
        )

    async def note(
        self, result: RouteResult, config: RoutingConfig, **changes: Any
    ) -> dict[str, Any]:
        """One more record for a routed turn whose fate a later stage changed (cost guard)."""
        turn = result.turn
        keys = self._keys(turn.bot_id, turn.group_id, turn.user_id)
        return await self._remember(keys, result, config, **changes)

    async def _remember(
        self, keys: RouteKeys, result: RouteResult, config: RoutingConfig, **changes: Any
    ) -> dict[str, Any]:
        record = {**result.to_log_dict(), **changes}
        await self._keep(keys, record, config)
        if log.isEnabledFor(level := _route_log_level(record)):
            log.log(level, "route %s", json.dumps(record, ensure_ascii=False))
        return record

    async def record_outside_decision(
        self,
        turn: TurnInput,
        config: RoutingConfig,
        *,
        now: float,
        stage: str,
        reason: str,
        outcome: str = RouteOutcome.SKIP.value,
    ) -> None:
        """A decision made outside routing (a stale message skipped, a member's memory command
        answered), kept for `/pallas why` and the console's routing page."""
        record = {
            "time": now,
            "bot": turn.bot_id,
            "group": turn.group_id,
            "user": turn.user_id,
            "message_id": turn.message_id,
            "text": turn.text[:40],
            "outcome": outcome,
            "stage": stage,
            "reason": reason,
        }
        await self._keep(self._keys(turn.bot_id, turn.group_id, turn.user_id), record, config)
        log.debug("route %s", json.dumps(record, ensure_ascii=False))

    async def _keep(self, keys: RouteKeys, record: dict[str, Any], config: RoutingConfig) -> None:
        """The record in the group's ring (the store) and queued for the history."""
        await self._state.push(
            keys.key("decisions"), record, maxlen=config.decisions_kept, ttl=config.decisions_ttl_s
        )
        if self._history is not None:
            self._history.add(record)

    async def _apply(
        self, result: RouteResult, config: RoutingConfig, route_state: RouteState
    ) -> RouteResult:
        turn, now = result.turn, result.now
        keys = self._keys(turn.bot_id, turn.group_id, turn.user_id)
        if result.gate.silence_s is not None:
            silence = result.gate.silence_s
            await self._state.set(keys.key("silenced_until"), now + silence, ttl=silence)
            await self._state.delete(keys.key("pending"))
        elif result.outcome in (RouteOutcome.ACCUMULATE, RouteOutcome.DEFER) and config.enabled:
            await self._push_pending(keys, result, config)
        elif result.calls_llm:
            lost = await self._claim_llm_turn(keys, result, config, route_state)
            if lost is not None:
                if lost.outcome is RouteOutcome.ACCUMULATE:
                    await self._push_pending(keys, lost, config)
                return lost
            await self._apply_llm_turn(keys, result, config, route_state)
            return replace(result, accumulated=await self._drain_pending(keys, result, config))
        elif result.outcome is RouteOutcome.PASS_PHRASE and result.phrase is not None:
            await self._apply_phrase(keys, result, config, route_state)
        return result

    async def _push_pending(
        self, keys: RouteKeys, result: RouteResult, config: RoutingConfig
    ) -> None:
        turn = result.turn
        entry = {
            "message_id": turn.message_id,
            "user_id": turn.user_id,
            "text": turn.text,
            "time": result.now,
            "reason": result.reason,
            "addressed": result.trigger.addressed,
        }
        cfg = config.cooldown
        await self._state.push(
            keys.key("pending"), entry, maxlen=cfg.accumulate_max, ttl=cfg.accumulate_ttl_s
        )

    async def _drain_pending(
        self, keys: RouteKeys, result: RouteResult, config: RoutingConfig
    ) -> tuple[Mapping[str, Any], ...]:
        entries = await self._state.take(keys.key("pending"))
        ttl = config.cooldown.accumulate_ttl_s
        seen: set[int] = {result.turn.message_id}
        kept: list[Mapping[str, Any]] = []
        for entry in entries:
            mid = int(entry.get("message_id", 0))
            if mid in seen or result.now - float(entry.get("time", 0)) > ttl:
                continue
            seen.add(mid)
            kept.append(entry)
        return tuple(kept)

    async def _claim_llm_turn(
        self, keys: RouteKeys, result: RouteResult, config: RoutingConfig, route_state: RouteState
    ) -> RouteResult | None:
        """Claim the member's in-flight marker, then the group's cooldown slot; None when both
        are ours, else the result the turn becomes (`merge` / `accumulate`).

        Both decisions were taken on a snapshot that another turn (another process, or an
        interleaved await) may have read too; these claims make the first writer win. A store
        that cannot be reached grants them: the message id was already claimed."""
        now, turn, cfg = result.now, result.turn, config.cooldown
        marker = {"message_id": turn.message_id, "t": now, "outcome": result.outcome.value}
        in_flight = keys.in_flight(turn.user_id)
        if turn.user_id:
            mine = await claim(
                self._state, in_flight, marker, ttl=cfg.turn_timeout_s, when_unavailable=True
            )
            if not mine:
                return replace(
                    result, outcome=RouteOutcome.MERGE, stage="admission", reason="user_in_flight"
                )
        else:
            await self._state.set(in_flight, marker, ttl=cfg.turn_timeout_s)
        # an @ the cooldown does not hold is not held by the race for its slot either: answered
        # at once whether or not another process's turn started a moment before
        if cfg.chat_cooldown_s > 0 and waits_for_cooldown(cfg, addressed=result.trigger.addressed):
            slot = keys.turn_after(route_state.last_turn_at)
            ttl = route_turn_ttl(cfg.chat_cooldown_s)  # as long as `last_turn_at` lives
            if not await claim(self._state, slot, now, ttl=ttl, when_unavailable=True):
                await self._state.delete(in_flight)
                cooldown = CooldownResult(
                    CooldownVerdict.ACCUMULATE, "cooldown", cfg.chat_cooldown_s
                )
                return replace(
                    result,
                    outcome=RouteOutcome.ACCUMULATE,
                    stage="cooldown",
                    reason="cooldown_claimed",
                    cooldown=cooldown,
                )
        return None

    async def _apply_llm_turn(
        self, keys: RouteKeys, result: RouteResult, config: RoutingConfig, route_state: RouteState
    ) -> None:
        """Effects of an LLM turn whose claims (`_claim_llm_turn`) are already held."""
        now = result.now
        ttl = route_turn_ttl(config.cooldown.chat_cooldown_s)
        await self._state.set(keys.key("last_turn_at"), now, ttl=ttl)
        candidates = add_candidate(
            route_state.candidates, result.turn.message_id, maxlen=config.quote.candidates
        )
        await self._state.set(keys.key("candidates"), candidates, ttl=config.quote.candidate_ttl_s)
        if result.outcome is RouteOutcome.QUOTE:
            await self._state.set(
                keys.key("last_quote_at"), now, ttl=max(config.quote.cooldown_s, 1.0)
            )
        if result.trigger.is_ambient:
            await self._note_ambient(keys, route_state, now, config)

    async def _apply_phrase(
        self, keys: RouteKeys, result: RouteResult, config: RoutingConfig, route_state: RouteState
    ) -> None:
        await self._state.set(keys.key("last_phrase"), result.phrase)
        entry = BotReply(result.now, result.turn.user_id, "phrase")
        await self._push_bot_reply(keys, entry, config)
        if result.trigger.is_ambient:
            await self._note_ambient(keys, route_state, result.now, config)

    async def _note_ambient(
        self, keys: RouteKeys, route_state: RouteState, now: float, config: RoutingConfig
    ) -> None:
        window = config.ambient.budget_window_s
        times = [t for t in route_state.ambient_times if now - t < window] + [now]
        await self._state.set(keys.key("ambient_times"), times, ttl=window)

    async def _push_bot_reply(
        self, keys: RouteKeys, entry: BotReply, config: RoutingConfig
    ) -> None:
        n = config.necessity
        ttl = max(n.recent_window_s, n.back_and_forth_window_s, config.triggers.follow_up_window_s)
        await self._state.push(
            keys.key("bot_replies"), entry.to_json(), maxlen=_BOT_REPLIES_MAX, ttl=ttl
        )

    async def record_bot_reply(
        self,
        bot_id: int,
        group_id: int,
        user_id: int,
        message_ids: Sequence[int],
        now: float,
        *,
        config: RoutingConfig | None = None,
    ) -> None:
        """After delivering an answer to `user_id`: follow-up window, recency, candidates."""
        cfg = config or RoutingConfig()
        keys = self._keys(bot_id, group_id, user_id)
        await self._state.delete(keys.in_flight(user_id))
        await self._push_bot_reply(keys, BotReply(now, user_id, "reply"), cfg)
        for mid in message_ids:
            await self._state.push(
                keys.key("bot_messages"),
                mid,
                maxlen=cfg.triggers.known_bot_messages,
                ttl=cfg.quote.candidate_ttl_s * 6,
            )
            await self.record_candidate(bot_id, group_id, mid, user_id=user_id, config=cfg)

    async def finish_turn(self, bot_id: int, group_id: int, user_id: int) -> None:
        """End a member's in-flight turn without an answer (LLM error, empty reply, PASS)."""
        await self._state.delete(self._keys(bot_id, group_id, user_id).in_flight(user_id))

    async def in_flight_count(self, bot_id: int, group_id: int, user_id: int = 0) -> int:
        """Turns of this group between decision and delivery (for `decide_admission`)."""
        prefix = self._keys(bot_id, group_id, user_id).in_flight()
        return len(await self._state.keys(prefix))

    async def record_candidate(
        self,
        bot_id: int,
        group_id: int,
        message_id: int,
        *,
        user_id: int = 0,
        config: RoutingConfig | None = None,
    ) -> None:
        """Make `message_id` a QUOTE candidate of the group (deque of `quote.candidates`)."""
        cfg = config or RoutingConfig()
        key = self._keys(bot_id, group_id, user_id).key("candidates")
        current = await self._state.get(key) or []
        updated = add_candidate([int(m) for m in current], message_id, maxlen=cfg.quote.candidates)
        await self._state.set(key, updated, ttl=cfg.quote.candidate_ttl_s)

    async def live_candidates(self, bot_id: int, group_id: int, user_id: int = 0) -> list[int]:
        key = self._keys(bot_id, group_id, user_id).key("candidates")
        return [int(m) for m in await self._state.get(key) or []]

    async def resolve_quote_target(
        self, bot_id: int, group_id: int, requested_id: int | None, user_id: int = 0
    ) -> int | None:
        """For delivery: the id to quote, or None to send plain (target no longer a candidate)."""
        live = await self.live_candidates(bot_id, group_id, user_id)
        return resolve_quote_reply_target(requested_id, live)

    async def pending(self, bot_id: int, group_id: int, user_id: int = 0) -> list[dict[str, Any]]:
        """Messages accumulated during cooldown / deferred, oldest first (not drained)."""
        return await self._state.items(self._keys(bot_id, group_id, user_id).key("pending"))

    async def recent_decisions(
        self,
        bot_id: int,
        group_id: int,
        user_id: int = 0,
        *,
        limit: int = 50,
        outcome: str | None = None,
    ) -> list[dict[str, Any]]:
        """The latest decision records of the group, oldest first (admin "why", the console):
        from the history when there is one (it outlives a restart), else the store's ring."""
        if self._history is not None:
            return await self._history.recent(bot_id, group_id, limit=limit, outcome=outcome)
        records = await self._state.items(self._keys(bot_id, group_id, user_id).key("decisions"))
        if outcome:
            records = [r for r in records if r.get("outcome") == outcome]
        return records[-limit:]


def day_of(now: float, offset_hours: float) -> str:
    """The calendar day of `now` in the group's time zone (UTC + `offset_hours`), YYYYMMDD."""
    return time.strftime("%Y%m%d", time.gmtime(now + offset_hours * 3600.0))


def _unclaimed_result(result: RouteResult) -> RouteResult:
    """The decision when the message id could not be claimed (state store unreachable).

    Nothing is written. An addressed message is kept for a retry (the caller routes it again
    after `retry_after_s`, as for a cooldown); everything else is skipped."""
    log.warning(
        "group %s: message %s not routed, state store unreachable",
        result.turn.group_id,
        result.turn.message_id,
    )
    if result.trigger.addressed and result.gate.verdict is GateVerdict.PROCEED:
        cooldown = CooldownResult(CooldownVerdict.ACCUMULATE, "state_unavailable", STATE_RETRY_S)
        return replace(
            result,
            outcome=RouteOutcome.ACCUMULATE,
            stage="dedupe",
            reason="state_unavailable",
            cooldown=cooldown,
        )
    return replace(result, outcome=RouteOutcome.SKIP, stage="dedupe", reason="state_unavailable")
