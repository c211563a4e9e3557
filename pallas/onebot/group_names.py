"""Group names for the web console, asked from the connected OneBot accounts (`get_group_list`).

Names are not in message events, so they are fetched on demand and cached for a few minutes;
an account that cannot answer (or answers slowly) just leaves its groups unnamed.
"""

from __future__ import annotations

import asyncio
import logging
import time

import nonebot

log = logging.getLogger("pallas.console")

TTL_S = 300.0
RETRY_S = 30.0  # no account answered (none connected yet): ask again sooner
TIMEOUT_S = 3.0


class GroupNames:
    def __init__(self, ttl_s: float = TTL_S) -> None:
        self._ttl = ttl_s
        self._names: dict[int, str] = {}
        self._valid_until = -1e18
        self._lock = asyncio.Lock()

    async def __call__(self) -> dict[int, str]:
        if time.monotonic() < self._valid_until:
            return self._names
        async with self._lock:
            if time.monotonic() >= self._valid_until:
                answered, self._names = await self._fetch()
                self._valid_until = time.monotonic() + (self._ttl if answered else RETRY_S)
        return self._names

    async def _fetch(self) -> tuple[bool, dict[int, str]]:
        names: dict[int, str] = {}
        answered = False
        for bot in list(nonebot.get_bots().values()):
            try:
                groups = await asyncio.wait_for(bot.call_api("get_group_list"), TIMEOUT_S)
            except Exception as exc:  # an account without the API: its groups stay unnamed
                log.info("console: get_group_list failed for bot %s: %r", bot.self_id, exc)
                continue
            answered = True
            for group in groups or []:
                try:
                    names[int(group["group_id"])] = str(group.get("group_name") or "")
                except (KeyError, TypeError, ValueError):
                    continue
        return answered, names
