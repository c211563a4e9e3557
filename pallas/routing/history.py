"""Where the router's decision records outlive a restart (`RouteHistory`).

The database's `RouteHistoryRepository` (pallas/core/db/repositories/routes.py) is the one the
app uses; a replay and the unit tests route without one (the StateStore's ring only).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol


class RouteHistory(Protocol):
    def add(self, record: Mapping[str, Any]) -> None:
        """Queue one record; never awaited on the routing path."""

    async def recent(
        self, bot_id: int, group_id: int, *, limit: int = 50, outcome: str | None = None
    ) -> list[dict[str, Any]]:
        """The group's newest `limit` records (of one outcome), oldest first."""
