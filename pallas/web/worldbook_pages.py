"""Console page for worldbooks: the books of `config/worldbooks/`, a SillyTavern JSON upload,
and per group a switch for each book (the group config's `[worldbook] books`)."""

from __future__ import annotations

import logging

from fastapi import APIRouter, Form, Request
from fastapi.responses import Response
from starlette.datastructures import UploadFile as StarletteUpload

from pallas.web.app import Console, Session
from pallas.web.config_edit import ConfigRejected
from pallas.web.group_pages import parse_group_id
from pallas.web.worldbook_edit import (
    MAX_UPLOAD_BYTES,
    enabled_flags,
    group_books,
    import_book,
    list_books,
    set_book,
)

log = logging.getLogger("pallas.console")


async def worldbooks_page(
    console: Console, session: Session, group: str, *, error: str = "", notice: str = ""
) -> Response:
    backend = session.backend
    books = list_books(backend.worldbooks_dir, backend.groups_dir)
    group_id = parse_group_id(group) if group.strip() else None
    config = backend.fresh_config(group_id) if group_id is not None else None
    groups = sorted({gid for _, gid in await backend.queries.scopes_seen()})
    page = console.render(
        "worldbooks.html",
        session,
        page="worldbooks",
        books=books,
        group=group_id,
        groups=groups,
        flags=enabled_flags(books, group_books(config)) if config else {},
        books_on=config.worldbook.enabled if config else True,
        max_mb=MAX_UPLOAD_BYTES // 1_000_000,
        error=error,
        notice=notice,
    )
    if error:
        page.status_code = 422
    return page


def worldbook_routes(router: APIRouter, console: Console) -> None:
    @router.get("/worldbooks")
    async def worldbooks(request: Request, group: str = "") -> Response:
        return await worldbooks_page(console, await console.session(request), group)

    @router.post("/worldbooks/import")
    async def upload(request: Request) -> Response:
        length = request.headers.get("content-length", "")
        if not length.isdigit() or int(length) > MAX_UPLOAD_BYTES + 64_000:
            # refused before the body is read: no size given, or larger than any book we keep
            return Response("文件太大", status_code=413, media_type="text/plain; charset=utf-8")
        session = await console.checked(request)
        form = await request.form()
        book, group = form.get("book"), str(form.get("group") or "")
        if not isinstance(book, StarletteUpload):
            return await worldbooks_page(console, session, group, error="没有选择文件")
        data = await book.read(MAX_UPLOAD_BYTES + 1)
        try:
            done = import_book(
                session.backend.worldbooks_dir,
                book.filename or "",
                data,
                replace=bool(form.get("replace")),
            )
        except ConfigRejected as exc:
            log.info("console: rejected worldbook upload %r: %s", book.filename, exc)
            return await worldbooks_page(console, session, group, error=str(exc))
        log.info("console: worldbook %s imported (%d entries)", done.name, done.entries)
        notice = f"已导入世界书「{done.name}」：{done.entries} 个条目"
        if done.skipped:
            notice += f"；跳过 {len(done.skipped)} 个有问题的条目"
        return await worldbooks_page(console, session, group, notice=notice)

    @router.post("/worldbooks/toggle")
    async def toggle(
        request: Request, group: str = Form(""), book: str = Form(""), on: str = Form("")
    ) -> Response:
        session = await console.checked(request)
        group_id = parse_group_id(group)
        if group_id is None:
            return await worldbooks_page(console, session, group, error="先选择一个群")
        try:
            books = set_book(session.backend.groups_dir, group_id, book, on=on == "true")
        except ConfigRejected as exc:
            return await worldbooks_page(console, session, group, error=str(exc))
        # the same audit line as a config-page edit of the key
        log.info("console: group %s config %s = %s", group_id, "worldbook.books", books)
        state = "启用" if on == "true" else "停用"
        notice = f"群 {group_id} 已{state}世界书「{book}」"
        return await worldbooks_page(console, session, group, notice=notice)
