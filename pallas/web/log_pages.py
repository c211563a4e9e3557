"""The console's log tail: the newest lines of the bot's log from the in-memory ring
(`pallas.core.log_ring`, fed by the edge's loguru sink), filterable by group id and text, with
optional auto-refresh (htmx polling of the same URL, which then answers with the lines only)."""

from __future__ import annotations

from datetime import datetime, timedelta

from fastapi import APIRouter, Request
from fastapi.responses import Response

from pallas.core.log_ring import LOG_RING
from pallas.web.app import Console
from pallas.web.group_pages import parse_group_id

DEFAULT_LINES = 200
REFRESH_S = 5


def log_zone(now: datetime | None = None) -> str:
    """The zone the log lines' times are in (the bot process's local zone): `UTC+8`, `UTC+0`,
    `UTC+5:30`."""
    offset = (now or datetime.now().astimezone()).utcoffset() or timedelta(0)
    minutes = int(offset.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    hours, rest = divmod(abs(minutes), 60)
    return f"UTC{sign}{hours}" + (f":{rest:02d}" if rest else "")


def log_routes(router: APIRouter, console: Console) -> None:
    @router.get("/logs")
    async def logs(
        request: Request, group: str = "", q: str = "", n: int = DEFAULT_LINES, auto: str = ""
    ) -> Response:
        session = await console.session(request)
        group_id = parse_group_id(group) if group.strip() else None
        error = "群号是一串数字" if group.strip() and group_id is None else ""
        limit = max(1, min(n, LOG_RING.capacity))
        lines = [] if error else LOG_RING.tail(limit, group_id=group_id, text=q.strip()[:200])
        values = {
            "page": "logs", "lines": lines, "group": group.strip(), "q": q.strip(), "n": limit,
            "auto": bool(auto), "refresh": REFRESH_S, "capacity": LOG_RING.capacity,
            "error": error, "zone": log_zone(),
        }  # fmt: skip
        if "hx-request" in request.headers:
            return console.render("log_lines.html", session, **values)
        return console.render("logs.html", session, **values)
