"""Parsed bot replies of the route state, reused between reads of the same group.

Every routed message reads the group's `bot_replies` list (up to 64 entries) and parses each
entry into a `BotReply`. Between two reads the list is usually unchanged (unaddressed traffic)
or has gained an entry or two at its end (the bot answered; a full list dropped as many from
its head). `BotReplyMemo` keeps, for a few recently routed groups, the last raw list and its
parsed entries: when the new list's head equals the old list's tail, those entries are reused
and only the new ones are parsed.

Exact: parsing is element by element (`BotReply.from_json`, non-mappings skipped), so an entry
equal to one parsed before parses the same — with one caveat handled here: `==` treats `1`,
`1.0` and `True` alike, and `float()` / `int()` do too, but `str()` does not, so a list
holding a non-string `kind` is never reused. The route state writes `kind` as a string.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cachetools import LRUCache

from pallas.routing.route_state import BotReply

MAX_GROUPS = 64  # lists of ≤ 64 small dicts each: ~1–2 MB at most
MAX_ADDED = 4  # entries appended since the last read that are looked for


def _parse(raw: Any) -> BotReply | None:
    return BotReply.from_json(raw) if isinstance(raw, Mapping) else None


def _reusable(raw: Sequence[Any]) -> bool:
    return all(not isinstance(r, Mapping) or isinstance(r.get("kind", ""), str) for r in raw)


class BotReplyMemo:
    """Per routing engine: the last parsed `bot_replies` of the recently routed groups."""

    def __init__(self, max_groups: int = MAX_GROUPS) -> None:
        self._lists: LRUCache[str, tuple[list[Any], list[BotReply | None]]] = LRUCache(max_groups)
        self.reused = 0

    def parse(self, key: str, raw: Sequence[Any] | None) -> tuple[BotReply, ...]:
        """`tuple(BotReply.from_json(r) for r in raw if isinstance(r, Mapping))`. A list handed
        in is kept (the store's fresh copy): the caller must not change it afterwards."""
        if not raw:
            return ()  # nothing to parse; the group's last list stays (any equal entry reuses)
        items = raw if isinstance(raw, list) else list(raw)
        found = self._from_last(key, items)
        if found is None:
            parsed, reusable = [_parse(r) for r in items], _reusable(items)
        else:
            parsed, reusable = found
        if reusable:
            self._lists[key] = (items, parsed)  # the least recently routed group goes first
        else:
            self._lists.pop(key, None)
        return tuple(p for p in parsed if p is not None)

    def _from_last(self, key: str, items: list[Any]) -> tuple[list[BotReply | None], bool] | None:
        """The parsed entries from the group's last list (only new entries parsed), and
        whether the new entries keep the list reusable; None when the head does not match."""
        last = self._lists.get(key)
        if last is None:
            return None
        old_raw, old_parsed = last  # only reusable lists are kept
        for added in range(min(len(items), MAX_ADDED) + 1):
            keep = len(items) - added
            if keep == 0 or keep > len(old_raw):
                continue
            if items[:keep] == old_raw[len(old_raw) - keep :]:
                self.reused += 1
                new = items[keep:]
                tail = [_parse(r) for r in new]
                return old_parsed[len(old_parsed) - keep :] + tail, _reusable(new)
        return None
