"""One NoneBot entry for group messages; Pallas's own plugins run inside it, in order.

NoneBot charges every matcher a message reaches (rule and permission checks, an anyio task
group, dependency solving, two log lines): six Pallas matchers made a group message cost six
times what a bare NoneBot bot pays. Now one matcher (priority 1, `block=False`, so an
operator's third-party plugins still see every message) hands the message to the handlers the
Pallas plugins `register` at import, in `order`:

    2  stickers        collect sticker segments                      never stops
    5  pallas_admin    `/pallas …` (NoneBot COMMAND_START rules)     stops when it is a command
    8  feedback        an admin's 「不可以」 on a bot line             stops when it handled
    8  memory_commands "@帕拉斯 记住 …" / "忘记我" / "你记得我什么"     stops when it handled
    10 llm_chat        routing and, when earned, a reply             last

Handlers of the same order all run (as matchers of one NoneBot priority did); the dispatch
stops after an order whose handler returned True — the old `block=True` / `stop_propagation`.
A handler that raises is logged and the next one runs (as NoneBot did for a failing matcher).
Recording is not here: it happens at the edge (`GuardedAdapter.received_hooks`).

Each handler is a plain `async (Arrival) -> bool`, testable without NoneBot's dispatch.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from itertools import groupby
from typing import Any

from nonebot import get_driver, get_plugin_config, on_message
from nonebot.adapters.onebot.v11 import Bot, GroupMessageEvent, Message
from nonebot.consts import CMD_ARG_KEY, CMD_KEY, PREFIX_KEY
from nonebot.typing import T_State

from pallas.app import PallasApp
from pallas.core.turn import TurnInput
from pallas.onebot import lifecycle
from pallas.onebot import startup_loads as warmup
from pallas.onebot.adapter import GuardedAdapter
from pallas.onebot.counters import COUNTERS, CounterSettings, CounterTask
from pallas.onebot.events import forget_turn, turn_from_event
from pallas.onebot.lane_choice import EdgeLanes
from pallas.onebot.lanes import PRIORITY_HOLD, releasing_hold
from pallas.providers.sdk_warmup import warm_request_path
from pallas.runtime import PallasRuntime

log = logging.getLogger("pallas.inbound")


class Arrival:
    """One group message on its way through the handlers (the turn is converted once)."""

    __slots__ = ("_turn", "app", "bot", "event", "state")

    def __init__(
        self, bot: Bot, event: GroupMessageEvent, app: PallasApp, state: T_State | None = None
    ) -> None:
        self.bot = bot
        self.event = event
        self.app = app
        self.state: T_State = state if state is not None else {}
        self._turn: TurnInput | None = None

    def turn(self) -> TurnInput:
        """`turn_from_event(event)`, converted once; raises ValueError like it."""
        if self._turn is None:
            self._turn = turn_from_event(self.event)
        return self._turn

    def command(self) -> tuple[tuple[str, ...], Message] | None:
        """(command, argument) when NoneBot's command trie matched this message."""
        prefix: dict[str, Any] = self.state.get(PREFIX_KEY) or {}
        cmd = prefix.get(CMD_KEY)
        if not cmd:
            return None
        arg = prefix.get(CMD_ARG_KEY)
        return tuple(cmd), arg if isinstance(arg, Message) else Message()


Handler = Callable[[Arrival], Awaitable[bool]]


@dataclass(frozen=True, slots=True)
class InboundHandler:
    name: str
    order: int
    handle: Handler


_handlers: dict[str, InboundHandler] = {}
_entry: Any = None
_counter_task = CounterTask()
# group id → (its config, its persona, its aliases): both objects change when their file does
_alias_cache: dict[int, tuple[object, object, tuple[str, ...]]] = {}
_ALIAS_CACHE_GROUPS = 4096


def register(name: str, order: int, handle: Handler) -> None:
    """Add (or replace, by name) a handler; creates the one NoneBot entry on first use."""
    _handlers[name] = InboundHandler(name, order, handle)
    _ensure_entry()


def handlers() -> list[InboundHandler]:
    return sorted(_handlers.values(), key=lambda h: h.order)


async def dispatch(arrival: Arrival, chain: list[InboundHandler] | None = None) -> str | None:
    """Run the handlers in order; the name of the one that stopped the message, or None."""
    for _, same_order in groupby(chain if chain is not None else handlers(), lambda h: h.order):
        stopped_by = None
        for handler in same_order:
            try:
                if await handler.handle(arrival) and stopped_by is None:
                    stopped_by = handler.name
            except Exception:
                log.exception(
                    "inbound handler %s failed (group %s, message %s)",
                    handler.name,
                    arrival.event.group_id,
                    arrival.event.message_id,
                )
        if stopped_by is not None:
            COUNTERS.stopped[stopped_by] = COUNTERS.stopped.get(stopped_by, 0) + 1
            return stopped_by
    return None


async def pallas_inbound(bot: Bot, event: GroupMessageEvent, state: T_State) -> None:
    """The one matcher's handler (no `Depends`: nothing here runs in a worker thread)."""
    COUNTERS.messages += 1
    try:
        app = lifecycle.app_or_none()
        if app is None:
            return
        lanes = GuardedAdapter.lanes
        hold = PRIORITY_HOLD.get()
        if hold is not None and event.to_me:
            hold.engage()  # a reply found (by NoneBot's get_msg) to quote the bot holds from now
        if lanes is not None and lanes.holding and hold is None:
            await lanes.wait_clear()  # an @ is preparing its model request: it goes first
        await dispatch(Arrival(bot, event, app, state))
    finally:
        forget_turn(event)  # converted at the edge (recorder, lane) and shared until here


def _aliases_source() -> Callable[[int], tuple[str, ...]] | None:
    app = lifecycle.app_or_none()
    if app is None:
        return None
    runtime = app.runtime
    cache = _alias_cache

    def aliases(group_id: int) -> tuple[str, ...]:
        config = runtime.group_configs.get(group_id)
        persona = runtime.personas.get(config.persona)
        cached = cache.get(group_id)
        if cached is not None and cached[0] is config and cached[1] is persona:
            return cached[2]
        names = app.addressing.aliases(persona, config)
        if len(cache) >= _ALIAS_CACHE_GROUPS:
            cache.clear()
        cache[group_id] = (config, persona, names)
        return names

    return aliases


def _ensure_entry() -> None:
    global _entry
    if _entry is not None:
        return
    _entry = on_message(priority=1, block=False)
    _entry.append_handler(pallas_inbound)
    GuardedAdapter.lane_of = staticmethod(EdgeLanes(_aliases_source))  # type: ignore[assignment]
    lifecycle.on_runtime_start(_start_counters)
    lifecycle.on_runtime_start(_signal_model_requests)
    lifecycle.on_runtime_start(_warmups_after_addressed_turns)
    warmup.add(_build_model_client)
    warmup.add(warm_request_path)  # the SDK's first request: ~20 ms less on the first @
    get_driver().on_shutdown(_counter_task.stop)


async def _signal_model_requests(runtime: PallasRuntime, host: str, port: int) -> None:
    """An addressed turn's hold on the loop ends when its model request goes out — or when
    it sleeps first (a merge wait, a retry after the cooldown): a sleeping turn needs no loop."""
    if not hasattr(runtime.llm.complete, "__wrapped__"):
        runtime.llm.complete = releasing_hold(runtime.llm.complete)  # type: ignore[method-assign]
    app = lifecycle.app_or_none()
    pause = app.chat.pause if app is not None else None
    if pause is not None and not hasattr(pause.sleep, "__wrapped__"):
        pause.sleep = releasing_hold(pause.sleep)  # the turn's one wait (merge, retry, pacing)


async def _warmups_after_addressed_turns(runtime: PallasRuntime, host: str, port: int) -> None:
    """A group warm-up's next load waits while an addressed turn prepares its model request:
    after a restart into a burst, the warm-up's reads would queue with the @'s own."""
    app = lifecycle.app_or_none()
    if app is not None:
        app.warmup.yield_to = _after_addressed_turns


async def _after_addressed_turns() -> None:
    lanes = GuardedAdapter.lanes  # made when the first bot connects
    await (lanes.after_holds() if lanes is not None else asyncio.sleep(0))


def _build_model_client() -> None:
    """A start-up warm-up (thread): the LLM client's SDK client — an SSL context and an httpx
    pool, ~50 ms — is built now, not on the loop inside the first @'s hold (a no-op when the
    runtime is not up yet or the client is already built)."""
    app = lifecycle.app_or_none()
    if app is not None:
        getattr(app.runtime.llm, "_client", None)


async def _start_counters(runtime: PallasRuntime, host: str, port: int) -> None:
    interval = get_plugin_config(CounterSettings).pallas_counters_interval_s
    _counter_task.start(interval, lambda: GuardedAdapter.lanes, runtime.writer)


__all__ = ["Arrival", "InboundHandler", "dispatch", "handlers", "pallas_inbound", "register"]
