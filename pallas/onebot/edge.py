"""The OneBot edge, built once at start-up over the app: everything between a frame and a turn.

`Edge.build` is the edge's composition root (called by `pallas.onebot.lifespan` once the app is
up): the admission lanes, the lane choice with each group's aliases, the per-event read
records, the inbound handlers the plugins declared (`pallas.onebot.plugin_parts`), the start-up
loads, the counters. The adapter gets it with `GuardedAdapter.attach`; the one inbound entry
(created by `pallas.onebot.lifespan`) hands messages to it. Nothing here is a module global, a class
attribute set at start-up or a registry filled at import.

For each event the edge does, in order:

    on_read      (the adapter, as the frame is parsed) convert a group or private message
                 once, record it, choose its lane, and for an addressed one claim the loop
                 (`PriorityHold`)
    admitted     (the bot's handle_event) wait for a slot of the lane; hold the claim until the
                 turn releases it or the handling ends
    handle       (the inbound entry) engage a reply's claim once it is known to quote the bot,
                 let unaddressed work wait while an @ prepares, run the handlers in order
                 (a private message only when `[private]` lets its sender be answered:
                 `PrivateGate`)

**The stock adapter mode** (`reads_at_parse=False`): under NoneBot's own OneBot v11 adapter
instead of `GuardedAdapter` (the nonebug plugin tests in tests/plugins, a `bot.py` that
registers the stock adapter) nothing calls `on_read`. The edge then reads each message when the
inbound entry hands it over: converted and recorded there, in the normal lane, with no hold on
the loop and no line key (several accounts of one deployment do not share a line's answer
claim). The lifespan picks the mode from the registered adapters.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from pathlib import Path
from typing import Any

from nonebot.adapters.onebot.v11 import Bot, GroupMessageEvent, MessageEvent, PrivateMessageEvent
from nonebot.typing import T_State

from pallas.app_model import PallasApp
from pallas.core.lines import Occurrences
from pallas.core.log_limit import LogLimiter, skipped_note
from pallas.onebot.arrival import Arrival
from pallas.onebot.counters import CounterTask, InboundCounters
from pallas.onebot.detached import DetachedTurns
from pallas.onebot.events import ConvertedTurn, convert_event, with_line_key
from pallas.onebot.lane_choice import NORMAL, LaneChoice, LaneVerdict
from pallas.onebot.lanes import Lanes, PriorityHold, admitted, log_priority
from pallas.onebot.neighbours import Neighbours
from pallas.onebot.plugin_parts import InboundHandler, PluginParts
from pallas.onebot.private_gate import PrivateGate
from pallas.onebot.reads import EventReads, ReadRecord
from pallas.onebot.recording import record_received
from pallas.onebot.refused import RefusedFrames
from pallas.onebot.startup_loads import Loader, StartupLoads
from pallas.providers.embedding_probe import probe_embeddings

log = logging.getLogger("pallas.inbound")

ALIAS_CACHE_GROUPS = 4096


class GroupAliases:
    """A group's aliases (persona aliases + NICKNAME + extra aliases), recomputed only when the
    group's config or persona object changed (both are replaced when their file is)."""

    def __init__(self, app: PallasApp) -> None:
        self._app = app
        self._cache: dict[int, tuple[object, object, tuple[str, ...]]] = {}

    def __call__(self, group_id: int) -> tuple[str, ...]:
        runtime = self._app.runtime
        config = runtime.group_configs.get(group_id)
        persona = runtime.personas.get(config.persona)
        cached = self._cache.get(group_id)
        if cached is not None and cached[0] is config and cached[1] is persona:
            return cached[2]
        names = self._app.addressing.aliases(persona, config)
        if len(self._cache) >= ALIAS_CACHE_GROUPS:
            self._cache.clear()
        self._cache[group_id] = (config, persona, names)
        return names


@dataclass
class Edge:
    app: PallasApp
    lanes: Lanes
    lane_choice: LaneChoice
    loads: StartupLoads
    private: PrivateGate  # which private messages are answered
    reads_at_parse: bool  # the adapter calls `on_read` (GuardedAdapter); see the docstring
    parts: PluginParts = field(default_factory=PluginParts)
    counters: InboundCounters = field(default_factory=InboundCounters)
    reads: EventReads = field(default_factory=EventReads)
    refused: RefusedFrames = field(default_factory=lambda: RefusedFrames(None))
    occurrences: Occurrences = field(default_factory=Occurrences)  # per account (line keys)
    neighbours: Neighbours = field(default_factory=Neighbours)  # the other plugins' verdicts
    detached: DetachedTurns = field(default_factory=DetachedTurns)  # chat turns under way
    counter_interval_s: float = 60.0
    _counter_task: CounterTask | None = None
    _embedding_probe: asyncio.Task[None] | None = None
    _encoder_load: asyncio.Task[None] | None = None

    @classmethod
    def build(
        cls,
        app: PallasApp,
        lanes: Lanes,
        parts: PluginParts,
        *,
        reads_at_parse: bool,
        neighbours: Neighbours,
        loaders: tuple[Loader, ...] = (),
        counter_interval_s: float = 60.0,
    ) -> Edge:
        counters = InboundCounters()
        data_dir = app.runtime.settings.pallas_data_dir
        return cls(
            app=app,
            lanes=lanes,
            lane_choice=LaneChoice(GroupAliases(app)),
            loads=StartupLoads(loaders),
            private=PrivateGate(app.runtime),
            reads_at_parse=reads_at_parse,
            parts=parts,
            counters=counters,
            refused=RefusedFrames(Path(data_dir) / "refused", counts=counters.refused),
            counter_interval_s=counter_interval_s,
            neighbours=neighbours,
        )

    @property
    def handlers(self) -> tuple[InboundHandler, ...]:
        return self.parts.handlers

    # -- lifespan ------------------------------------------------------------------------------
    async def start(self) -> None:
        """The app is up: start the loads and the counters, then the plugins' ready hooks."""
        self.loads.start()
        self._counter_task = CounterTask(self.counters)
        self._counter_task.start(self.counter_interval_s, self.lanes, self.app.runtime.writer)
        self._embedding_probe = asyncio.create_task(self._probe_embeddings())
        self._encoder_load = asyncio.create_task(self._load_encoder())
        for hook in self.parts.on_ready:
            await _guarded(hook(self.app), f"ready hook {_name(hook)}")

    async def stop(self) -> None:
        for hook in self.parts.on_shutdown:
            await _guarded(hook(self.app), f"shut-down hook {_name(hook)}")
        await self.detached.drain()
        if self._counter_task is not None:
            await self._counter_task.stop()
        for task in (self._embedding_probe, self._encoder_load):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        await self.loads.stop()
        self.refused.close()

    async def _probe_embeddings(self) -> None:
        """Once the start-up loads (the `openai` SDK import) are done: whether the provider
        serves embeddings (`embedding_probe`), in the background."""
        await self.loads.ready()
        try:
            await probe_embeddings(self.app.runtime.llm)
        except Exception:
            log.exception("embedding probe failed; embeddings stay off")

    async def _load_encoder(self) -> None:
        """Once the start-up loads are done: memory's offline sentence encoder, started in its
        own process (about a second); one log line says whether memory ranks by meaning."""
        await self.loads.ready()
        try:
            await self.app.runtime.encoder.load()
        except Exception:
            log.exception("sentence encoder load failed; memory recall stays on BM25 and concepts")

    # -- the adapter's side --------------------------------------------------------------------
    def on_read(self, event: Any) -> None:
        """A frame was parsed into `event`: convert, record, choose the lane, claim the loop."""
        converted, verdict = None, NORMAL
        if isinstance(event, (GroupMessageEvent, PrivateMessageEvent)):
            converted = self._convert(event)
            if converted is not None:
                converted = self._numbered(event, converted)
                self._record(event, converted)
                verdict = self._lane(event, converted)
        claim = None
        if verdict.priority:
            log_priority(event, verdict)
            claim = self.lanes.hold(engaged=verdict.certain)
            if converted is not None:  # its question is encoded while the loop catches up
                self.app.chat.anticipate(converted.turn)
        self.reads.keep(ReadRecord(event, converted, verdict, claim))

    def admission(self, event: Any) -> tuple[LaneVerdict | None, PriorityHold | None]:
        record = self.reads.get(event)
        return (record.verdict, record.claim) if record is not None else (None, None)

    def admitted(
        self, handle: Callable[[Any], Awaitable[None]]
    ) -> Callable[[Any], Awaitable[None]]:
        """A bot's `handle_event` through the lanes; the event's read record goes when its
        handling ends."""
        run = admitted(handle, self.lanes, self.admission)

        async def handle_and_forget(event: Any) -> None:
            try:
                await run(event)
            finally:
                self.reads.drop(event)

        return handle_and_forget

    def _convert(self, event: MessageEvent) -> ConvertedTurn | None:
        try:
            return convert_event(event)
        except Exception as exc:  # ValueError: no ids to keep it by; anything else a bug
            _warn_once(f"convert:{type(exc).__name__}", "unrecordable event %s: %s: %s",
                       event.message_id, type(exc).__name__, exc)  # fmt: skip
            return None

    def _lane(self, event: MessageEvent, converted: ConvertedTurn) -> LaneVerdict:
        try:
            if isinstance(event, PrivateMessageEvent) and not self.private.decide(event).allowed:
                return NORMAL
            return self.lane_choice.for_turn(converted.turn)
        except Exception as exc:  # the normal lane: the message is still handled
            _warn_once(f"lane:{type(exc).__name__}", "no lane choice for message %s: %s: %s",
                       event.message_id, type(exc).__name__, exc)  # fmt: skip
            return NORMAL

    def _numbered(self, event: MessageEvent, converted: ConvertedTurn) -> ConvertedTurn:
        """A group line gets its line key: the same for every account's copy of it (a line
        whose key cannot be made is kept without one: stored, never deduplicated)."""
        try:
            return self._with_line_key(converted)
        except Exception as exc:
            _warn_once(f"line_key:{type(exc).__name__}", "no line key for message %s: %s: %s",
                       event.message_id, type(exc).__name__, exc)  # fmt: skip
            return converted

    def _with_line_key(self, converted: ConvertedTurn) -> ConvertedTurn:
        turn = converted.turn
        if turn.is_private:
            return converted
        key = self.occurrences.key_for(
            turn.bot_id,
            turn.group_id,
            turn.user_id,
            turn.time,
            [seg.to_dict() for seg in turn.segments],
            self.app.runtime.clock.now(),
        )
        return with_line_key(converted, key)

    def _record(self, event: MessageEvent, converted: ConvertedTurn) -> None:
        if converted.turn.user_id in self.app.runtime.deployment_ids():
            return  # an account of the deployment: its own sent message is its record
        try:
            record_received(self.app.runtime, converted.turn)
        except Exception:  # recording must never stop the event's handling
            log.exception("recording message %s failed", event.message_id)

    # -- the inbound entry's side --------------------------------------------------------------
    async def handle(self, bot: Bot, event: MessageEvent, state: T_State) -> None:
        """One group or private message through the handlers (the one NoneBot entry's
        handler); a private message its sender may not be answered in goes to none."""
        self.counters.messages += 1
        record = self.reads.get(event)
        if record is None and not self.reads_at_parse:
            record = self._read_late(event)
        if isinstance(event, PrivateMessageEvent) and not self._answers_private(event):
            return
        hold = record.claim if record is not None else None
        if hold is not None and event.to_me:
            hold.engage()  # a reply found (by NoneBot's get_msg) to quote the bot holds from now
        if hold is None and self.lanes.holding:
            await self.lanes.wait_clear()  # an @ is preparing its model request: it goes first
        arrival = Arrival(
            bot,
            event,
            self.app,
            loads=self.loads,
            counters=self.counters,
            state=state,
            read=record.converted if record is not None else None,
            hold=hold,
            watch=self.neighbours.watch(event),
            detached=self.detached,
        )
        await self.dispatch(arrival)

    async def dispatch(self, arrival: Arrival) -> str | None:
        return await dispatch(self.handlers, arrival, self.counters)

    def _read_late(self, event: MessageEvent) -> ReadRecord | None:
        """The stock adapter mode's read, when the handler runs: converted and recorded (see
        the module docstring); None for a message that cannot be converted."""
        converted = self._convert(event)
        if converted is None:
            return None
        self._record(event, converted)
        return ReadRecord(event, converted, NORMAL, None)

    def _answers_private(self, event: PrivateMessageEvent) -> bool:
        if self.private.admission(event).allowed:
            return True
        self.counters.stopped["private_policy"] = self.counters.stopped.get("private_policy", 0) + 1
        return False


async def dispatch(
    handlers: Sequence[InboundHandler], arrival: Arrival, counters: InboundCounters
) -> str | None:
    """Run the handlers in order; the name of the one that stopped the message, or None.
    Handlers of the same order all run (as matchers of one NoneBot priority did); the dispatch
    stops after an order whose handler returned True (the old `block=True`). A handler that
    raises is logged and the next one runs (as NoneBot did for a failing matcher)."""
    for _, same_order in groupby(handlers, lambda h: h.order):
        stopped_by = None
        for handler in same_order:
            try:
                if await handler.handle(arrival) and stopped_by is None:
                    stopped_by = handler.name
            except Exception:  # one plugin's bug must not keep the others from the message
                log.exception(
                    "inbound handler %s failed (group %s, message %s)",
                    handler.name,
                    getattr(arrival.event, "group_id", 0),
                    arrival.event.message_id,
                )
        if stopped_by is not None:
            counters.stopped[stopped_by] = counters.stopped.get(stopped_by, 0) + 1
            return stopped_by
    return None


_FAULTS = LogLimiter(per_window=5, window_s=60.0)


def _warn_once(kind: str, message: str, *args: object) -> None:
    """One rate-limited WARNING per kind of fault (the event's ids in `args`)."""
    logged, skipped = _FAULTS.allow(kind)
    if logged:
        log.warning(message + "%s", *args, skipped_note(skipped))


async def _guarded(work: Awaitable[None], what: str) -> None:
    try:
        await work
    except Exception:  # a plugin's hook failing must not stop the bot starting or stopping
        log.exception("%s failed", what)


def _name(hook: object) -> str:
    return f"{getattr(hook, '__module__', '?')}.{getattr(hook, '__qualname__', hook)}"


__all__ = ["Edge", "GroupAliases", "dispatch"]
