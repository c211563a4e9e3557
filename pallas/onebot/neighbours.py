"""Other NoneBot plugins on the same bot: who answered a line, who sent a message.

Pallas shares NoneBot's dispatch with whatever plugins an operator installs (a dice roller, a
status command). Two questions come up, and NoneBot answers both without touching the plugins:

- **Did another plugin take this line?** NoneBot runs every matcher of one priority level, then
  the next level, and calls its *run postprocessors* after each matcher that ran (its rule and
  permission passed) and its *event postprocessors* once the whole dispatch is over. A matcher
  of a plugin outside this repository's `packages/` counts as having taken the line when, for
  this event, it sent a message (a `send_*` API call made while it was the current matcher:
  NoneBot's `Bot.on_calling_api` hook with its `current_matcher` / `current_event` context
  variables) or when it ran with `block=True` and a rule of its own (a command, a keyword, a
  regex: what "took" the line). A matcher with no rule at all (a recorder, a statistics counter,
  a silent repeater listening to everything) never counts, even when it blocks, and neither
  does one that only ran. `LineWatch.settled` waits for the end of the dispatch, at most
  `PALLAS_PLUGIN_WAIT_S` (default 1.5 s), so a plugin that answers after that is not waited
  for. With no other plugin that has a matcher (`answering_plugins`), nothing is waited for.
- **Which plugin sent this message?** The same `current_matcher`, read in the recorder's
  `on_called_api` hook: a send made inside another plugin's matcher is that plugin's
  (`sending_plugin`), recorded with its name and never taken for the persona's words.

Pallas's own sends come from its one entry matcher (created outside any plugin), from its
`packages/` plugins or from no matcher at all (scheduled jobs): `own_plugin` says which.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable
from typing import Any

from cachetools import FIFOCache
from nonebot.matcher import Matcher, current_event, current_matcher
from pydantic import BaseModel

from pallas.onebot.lanes import PriorityHold

log = logging.getLogger("pallas.inbound")

OWN_MODULES = "packages."  # this repository's plugins (`[tool.nonebot] plugin_dirs`)
WATCHED_EVENTS = 1024  # lines whose dispatch is watched at once (older ones are forgotten)
DEFAULT_WAIT_S = 1.5
HOLD_GRACE_S = 0.05  # the verdict waited for with the loop held (the dispatch's usual end)


class NeighbourSettings(BaseModel):
    """`PALLAS_PLUGIN_WAIT_S`: how long an addressed line waits, at most, for the other
    plugins' verdict before its model call (0: never waits, only what is already known)."""

    pallas_plugin_wait_s: float = DEFAULT_WAIT_S


def foreign(plugin: Any) -> str | None:
    """The plugin's id when it is not one of Pallas's own (None for Pallas's)."""
    if plugin is None:
        return None  # a matcher created outside any plugin: Pallas's one entry (the lifespan)
    module = str(getattr(plugin, "module_name", "") or "")
    if module.startswith(OWN_MODULES) or module.startswith("pallas."):
        return None
    return str(getattr(plugin, "id_", "") or module)


def plugin_of(matcher: Matcher | None) -> str | None:
    """The id of the plugin `matcher` belongs to when that plugin is not Pallas's own."""
    return None if matcher is None else foreign(getattr(matcher, "plugin", None))


def answering_plugins(plugins: Iterable[Any]) -> list[str]:
    """The other plugins that have matchers: the ones that may answer or take a line. With
    none (Pallas alone, or only a scheduler), an addressed line waits for nothing."""
    return sorted(
        name
        for plugin in plugins
        if (name := foreign(plugin)) is not None and getattr(plugin, "matcher", None)
    )


def sending_plugin() -> str | None:
    """The other plugin making the API call under way (its matcher is the current one)."""
    return plugin_of(current_matcher.get(None))


def takes_line(matcher: Matcher) -> bool:
    """A matcher that ran and blocked with a rule of its own took the line."""
    rule = getattr(matcher, "rule", None)
    checkers = getattr(rule, "checkers", ()) or ()
    return bool(getattr(matcher, "block", False)) and len(checkers) > 0


class LineWatch:
    """One line's dispatch through NoneBot, as far as the other plugins go."""

    __slots__ = ("_done", "_wait_s", "event", "handled_by")

    def __init__(self, event: Any, wait_s: float) -> None:
        self.event = event
        self.handled_by: str | None = None
        self._wait_s = wait_s
        self._done = asyncio.Event()

    def known(self) -> str | None:
        """The plugin that took the line, as far as is known now (no waiting)."""
        return self.handled_by

    def handled(self, plugin: str) -> None:
        if self.handled_by is None:
            self.handled_by = plugin
        self._done.set()

    def dispatched(self) -> None:
        self._done.set()

    async def settled(self, hold: PriorityHold | None = None) -> str | None:
        """The plugin that took the line once the dispatch is over — waiting at most the
        bound. The dispatch usually ends within milliseconds, on the loop the addressed line
        holds; past `HOLD_GRACE_S` the wait is for a slow plugin, not for local work, and the
        line's hold lets frames be read meanwhile (`PriorityHold.api_call`)."""
        if self._done.is_set() or self._wait_s <= 0:
            return self.handled_by
        grace = min(HOLD_GRACE_S, self._wait_s)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._done.wait(), grace)
            return self.handled_by
        waiting = hold.api_call() if hold is not None else contextlib.nullcontext()
        with waiting, contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._done.wait(), self._wait_s - grace)
        return self.handled_by


class Neighbours:
    """The watched lines, by event; fed by NoneBot's processors and API hooks."""

    def __init__(self, wait_s: float = DEFAULT_WAIT_S) -> None:
        self.wait_s = wait_s
        # by id(event); the oldest watch goes first (one replaced for a reused id is the newest)
        self._lines: FIFOCache[int, LineWatch] = FIFOCache(WATCHED_EVENTS)

    def watch(self, event: Any) -> LineWatch:
        watch = self._lines.get(id(event))
        if watch is None or watch.event is not event:
            watch = LineWatch(event, self.wait_s)
            self._lines[id(event)] = watch
        return watch

    def _find(self, event: Any) -> LineWatch | None:
        watch = self._lines.get(id(event))
        return watch if watch is not None and watch.event is event else None

    # -- NoneBot's side (registered once by `pallas.onebot.lifespan.install`) ----------------
    def matcher_ran(self, matcher: Matcher, event: Any) -> None:
        plugin = plugin_of(matcher)
        if plugin is not None and takes_line(matcher):
            self.watch(event).handled(plugin)

    def api_calling(self, api: str) -> None:
        if not api.startswith("send_"):
            return
        plugin = sending_plugin()
        event = current_event.get(None)
        if plugin is not None and event is not None:
            self.watch(event).handled(plugin)

    def dispatched(self, event: Any) -> None:
        watch = self._lines.pop(id(event), None)
        if watch is not None and watch.event is event:
            watch.dispatched()


__all__ = [
    "LineWatch",
    "NeighbourSettings",
    "Neighbours",
    "answering_plugins",
    "foreign",
    "plugin_of",
    "sending_plugin",
    "takes_line",
]
