"""Console pages that change things: the pipeline panel, memory deletes, config edits.

Every POST goes through `Console.checked` (session + CSRF). Config changes are validated by
`config_edit` before anything is written; a rejected change re-renders the page with the error
and the file untouched.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse, Response

from pallas.context.sections import SECTION_IDS, SECTION_NAMES_ZH
from pallas.web.app import PREFIX, Console, Session
from pallas.web.config_docs import group_keys
from pallas.web.config_edit import (
    ConfigRejected,
    group_path,
    merged_with_origin,
    read_text,
    reset_pipeline,
    save_text,
    set_pipeline,
)
from pallas.web.config_edit import (
    reset_value as reset_config_value,
)
from pallas.web.config_edit import (
    set_value as write_config_value,
)
from pallas.web.views import redact_config

log = logging.getLogger("pallas.console")


def pipeline_page(
    console: Console, session: Session, group_id: int, error: str = "", notice: str = ""
) -> Response:
    backend = session.backend
    rows = backend.pipeline_processors(group_id)
    config = backend.fresh_config(group_id)
    page = console.render(
        "pipeline.html",
        session,
        page="pipeline",
        group_id=group_id,
        rows=rows,
        error=error,
        notice=notice,
        customised=bool(config.context.processor_order or config.context.disabled_processors),
        default_order=backend.default_order(),
        sections=[
            (sid, SECTION_NAMES_ZH[sid], sid not in config.context.disabled_processors)
            for sid in SECTION_IDS
        ],
    )
    if error:
        page.status_code = 422
    return page


def _movable_order(rows: list[dict[str, Any]]) -> list[str]:
    return [r["id"] for r in rows if not r["fixed"]]


def _apply(
    console: Console, session: Session, group_id: int, change: Callable[[], object], what: str
) -> Response:
    """Run one validated file change and re-render the panel with its result."""
    try:
        change()
    except ConfigRejected as exc:
        log.info("console: rejected pipeline change in group %s: %s", group_id, exc)
        return pipeline_page(console, session, group_id, error=str(exc))
    log.info("console: group %s pipeline %s", group_id, what)
    return pipeline_page(console, session, group_id, notice=f"已保存：{what}")


def pipeline_routes(router: APIRouter, console: Console) -> None:
    @router.get("/g/{group_id}/pipeline")
    async def pipeline(request: Request, group_id: int) -> Response:
        return pipeline_page(console, await console.session(request), group_id)

    @router.post("/g/{group_id}/pipeline/order")
    async def reorder(request: Request, group_id: int, order: str = Form("")) -> Response:
        session = await console.checked(request)
        dirs = session.backend.groups_dir
        wanted = [p for p in (x.strip() for x in order.split(",")) if p]
        current = _movable_order(session.backend.pipeline_processors(group_id))

        def change() -> None:
            if sorted(wanted) != sorted(current):
                raise ConfigRejected(
                    f"the new order must list exactly the movable processors: {', '.join(current)}"
                )
            set_pipeline(dirs, group_id, order=wanted, disabled=None)

        return _apply(console, session, group_id, change, "顺序 " + " → ".join(wanted))

    @router.post("/g/{group_id}/pipeline/move")
    async def move(
        request: Request, group_id: int, processor: str = Form(""), direction: str = Form("")
    ) -> Response:
        session = await console.checked(request)
        order = _movable_order(session.backend.pipeline_processors(group_id))

        def change() -> None:
            if processor not in order:
                raise ConfigRejected(f"processor {processor!r} cannot be moved")
            i = order.index(processor)
            j = i - 1 if direction == "up" else i + 1
            if not 0 <= j < len(order):
                raise ConfigRejected(f"{processor} is already at the {'top' if j < 0 else 'end'}")
            order[i], order[j] = order[j], order[i]
            set_pipeline(session.backend.groups_dir, group_id, order=order, disabled=None)

        return _apply(console, session, group_id, change, f"移动 {processor} ({direction})")


def pipeline_switch_routes(router: APIRouter, console: Console) -> None:
    """The per-processor switches and "重置为默认"."""

    @router.post("/g/{group_id}/pipeline/toggle")
    async def toggle(request: Request, group_id: int, processor: str = Form("")) -> Response:
        session = await console.checked(request)
        rows = {r["id"]: r for r in session.backend.pipeline_processors(group_id)}
        disabled = {pid for pid, r in rows.items() if not r["enabled"]}

        def change() -> None:
            row = rows.get(processor)
            if row is None:
                raise ConfigRejected(f"unknown processor {processor!r}")
            if row["core"]:
                raise ConfigRejected(f"core processor {processor!r} cannot be switched off")
            disabled.symmetric_difference_update({processor})
            set_pipeline(
                session.backend.groups_dir, group_id, order=None, disabled=sorted(disabled)
            )

        state = "关闭" if rows.get(processor, {}).get("enabled") else "开启"
        return _apply(console, session, group_id, change, f"{state} {processor}")

    @router.post("/g/{group_id}/pipeline/reset")
    async def reset(request: Request, group_id: int) -> Response:
        session = await console.checked(request)

        def change() -> None:
            reset_pipeline(session.backend.groups_dir, group_id)

        return _apply(console, session, group_id, change, "重置为默认")


def memory_routes(router: APIRouter, console: Console) -> None:
    async def run(request: Request, group_id: int, args: tuple[str, ...]) -> Response:
        session = await console.checked(request)
        bot_id = await session.backend.bot_for_group(group_id)
        notice = (
            "本群还没有记录"
            if bot_id is None
            else await session.backend.memory_admin(bot_id, group_id, args)
        )
        return RedirectResponse(
            f"{PREFIX}/g/{group_id}/memory?notice={quote(notice)}", status_code=303
        )

    @router.post("/g/{group_id}/memory/delete")
    async def delete(request: Request, group_id: int, item: str = Form("")) -> Response:
        return await run(request, group_id, ("del", item))

    @router.post("/g/{group_id}/memory/forget")
    async def forget(request: Request, group_id: int, user: str = Form("")) -> Response:
        return await run(request, group_id, ("forget", user.strip()))


def config_page(
    console: Console,
    session: Session,
    group_id: int,
    error: str = "",
    notice: str = "",
    text: str | None = None,
    query: str = "",
    unseen: bool = False,
) -> Response:
    backend = session.backend
    merged = backend.fresh_config(group_id)
    rows = redact_config(merged_with_origin(backend.groups_dir, group_id, merged))
    file_name = group_path(backend.groups_dir, group_id).name
    groups = group_keys(rows, group_file=file_name, query=query)
    page = console.render(
        "config.html",
        session,
        page="config",
        group_id=group_id,
        rows=rows,
        groups=groups,
        shown=sum(len(g.keys) for g in groups),
        error=error,
        notice=notice,
        file_text=read_text(backend.groups_dir, group_id) if text is None else text,
        file_name=file_name,
        q=query,
        unseen=unseen,
    )
    if error:
        page.status_code = 422
    return page


def config_routes(router: APIRouter, console: Console) -> None:
    @router.get("/g/{group_id}/config")
    async def config(request: Request, group_id: int, q: str = "") -> Response:
        session = await console.session(request)
        unseen = await session.backend.bot_for_group(group_id) is None
        return config_page(console, session, group_id, query=q.strip(), unseen=unseen)

    @router.post("/g/{group_id}/config/value")
    async def set_value(
        request: Request, group_id: int, key: str = Form(""), value: str = Form("")
    ) -> Response:
        session = await console.checked(request)
        try:
            write_config_value(session.backend.groups_dir, group_id, key, value)
        except ConfigRejected as exc:
            return config_page(console, session, group_id, error=str(exc))
        log.info("console: group %s config %s = %s", group_id, key, value)
        return config_page(console, session, group_id, notice=f"已保存 {key} = {value}")

    @router.post("/g/{group_id}/config/reset")
    async def reset_value(request: Request, group_id: int, key: str = Form("")) -> Response:
        session = await console.checked(request)
        try:
            reset_config_value(session.backend.groups_dir, group_id, key)
        except ConfigRejected as exc:
            return config_page(console, session, group_id, error=str(exc))
        log.info("console: group %s config %s reset to its default", group_id, key)
        return config_page(console, session, group_id, notice=f"已恢复默认：{key}")

    @router.post("/g/{group_id}/config/file")
    async def set_file(request: Request, group_id: int, text: str = Form("")) -> Response:
        session = await console.checked(request)
        try:
            save_text(session.backend.groups_dir, group_id, text)
        except ConfigRejected as exc:
            return config_page(console, session, group_id, error=str(exc), text=text)
        log.info("console: group %s config file replaced", group_id)
        return config_page(console, session, group_id, notice="已保存配置文件")
