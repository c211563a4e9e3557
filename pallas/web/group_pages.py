"""The group overview (what clicking a group opens), its pause switch, its message history.

`/g/{group_id}` shows the group's name, today's numbers, last activity, links to its pages and
the 发言 switch. The switch writes `enabled = false / true` into `config/groups/<gid>.toml`
through the same validated, atomic `config_edit.set_value` as the config page, with the same
audit line; the config store's hot reload applies it on the next message. A group id that is
not a number, or a group the bot has never seen, gets a Chinese 404 page.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse, Response

from pallas.web.app import PREFIX, Console, Session
from pallas.web.config_edit import ConfigRejected
from pallas.web.config_edit import set_value as write_config_value
from pallas.web.pages import clock_text
from pallas.web.queries import MessageCounts, members_today

log = logging.getLogger("pallas.console")

MAX_GROUP_ID = 2**63 - 1
PAGE_SIZE = 50
NOTICES = {
    "paused": "已暂停：机器人在本群只记录消息，不再发言",
    "resumed": "已恢复发言",
}


def parse_group_id(text: str) -> int | None:
    """A QQ group number as typed in the URL, or None (not digits, or too large); 0 names the
    private chats, stored as group 0."""
    text = text.strip()
    if not text.isascii() or not text.isdigit():
        return None
    value = int(text)
    return value if value <= MAX_GROUP_ID else None


def not_found(console: Console, session: Session | None, message: str) -> Response:
    page = console.render("not_found.html", session, page="", message=message)
    page.status_code = 404
    return page


async def seen_group(console: Console, session: Session, raw: str) -> tuple[int, int] | Response:
    """(bot_id, group_id) of a group the bot has recorded, else the 404 page that says why."""
    group_id = parse_group_id(raw)
    if group_id is None:
        return not_found(console, session, f"「{raw}」不是群号：群号是一串数字。")
    bot_id = await session.backend.bot_for_group(group_id)
    if bot_id is None:
        return not_found(
            console,
            session,
            f"机器人还没有在群 {group_id} 里见过任何消息：这个群没有记录，也没有可以管理的内容。"
            "机器人进群并收到第一条消息后，这里才会出现它。",
        )
    return bot_id, group_id


async def overview_values(session: Session, bot_id: int, group_id: int) -> dict[str, Any]:
    backend = session.backend
    now = backend.now()
    today = await backend.queries.messages_today(now)
    counts = today.get((bot_id, group_id), MessageCounts())
    failed = (await backend.failure_counts(now)).get((bot_id, group_id), 0)
    last = await backend.messages.recent(bot_id, group_id, limit=1)
    config = backend.fresh_config(group_id)
    return {
        "bot_id": bot_id,
        "group_id": group_id,
        "group_name": (await backend.group_names()).get(group_id, ""),
        "messages": members_today(today, group_id),  # members' own, any account
        "replies": counts.bot_messages,
        "failed": failed,
        "last": last[-1] if last else None,
        "enabled": config.enabled,
        "persona": config.persona,
        "books": list(config.worldbook.books),
    }


def overview_routes(router: APIRouter, console: Console) -> None:
    @router.get("/g/{group_id}")
    async def overview(request: Request, group_id: str, done: str = "") -> Response:
        session = await console.session(request)
        seen = await seen_group(console, session, group_id)
        if isinstance(seen, Response):
            return seen
        values = await overview_values(session, *seen)
        notice = NOTICES.get(done, "")
        return console.render(
            "group.html", session, page="overview", notice=notice, clock=clock_text, **values
        )

    @router.post("/g/{group_id}/enabled")
    async def switch(request: Request, group_id: str, enabled: str = Form("")) -> Response:
        session = await console.checked(request)
        seen = await seen_group(console, session, group_id)
        if isinstance(seen, Response):
            return seen
        gid = seen[1]
        value = "true" if enabled == "true" else "false"
        try:
            write_config_value(session.backend.groups_dir, gid, "enabled", value)
        except ConfigRejected as exc:
            values = await overview_values(session, *seen)
            page = console.render(
                "group.html", session, page="overview", error=str(exc), clock=clock_text, **values
            )
            page.status_code = 422
            return page
        # the same audit line as a config-page edit of the key
        log.info("console: group %s config %s = %s", gid, "enabled", value)
        done = "resumed" if value == "true" else "paused"
        return RedirectResponse(f"{PREFIX}/g/{gid}?done={done}", status_code=303)


def message_routes(router: APIRouter, console: Console) -> None:
    @router.get("/g/{group_id}/messages")
    async def messages(
        request: Request, group_id: str, q: str = "", user: str = "", page: int = 1
    ) -> Response:
        session = await console.session(request)
        seen = await seen_group(console, session, group_id)
        if isinstance(seen, Response):
            return seen
        bot_id, gid = seen
        text = q.strip()[:200]
        member = parse_group_id(user) if user.strip() else None
        error = "成员 QQ 号是一串数字" if user.strip() and member is None else ""
        number = max(1, min(page, 10_000))
        rows = (
            []
            if error
            else await session.backend.messages.search(
                bot_id, gid, text=text, user_id=member, limit=PAGE_SIZE + 1,
                offset=(number - 1) * PAGE_SIZE,
            )
        )  # fmt: skip
        return console.render(
            "messages.html",
            session,
            page="messages",
            group_id=gid,
            rows=rows[:PAGE_SIZE],
            more=len(rows) > PAGE_SIZE,
            number=number,
            q=text,
            user=user.strip(),
            error=error,
            clock=clock_text,
        )
