"""Console pages for personas: the installed packs, one pack's editor with a prompt preview.

Which persona a group uses stays its config's `persona` key (the config page). A rejected edit
re-renders the editor with what was typed and the reason; a good one replaces the file
atomically and the bot's `PersonaStore` picks it up on the next message.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from pallas.web.app import Console, Session
from pallas.web.config_edit import ConfigRejected
from pallas.web.group_pages import not_found
from pallas.web.persona_edit import (
    SECTION_FIELDS,
    TEXT_FIELDS,
    form_text,
    list_personas,
    persona_path,
    preview_system_prompt,
    read_persona,
    save_persona_text,
    validate_persona_text,
)

log = logging.getLogger("pallas.console")


def _form_values(text: str) -> dict[str, str]:
    """The editor's fields from the file as it is now."""
    pack = validate_persona_text(text)
    values = {key: str(getattr(pack, key)) for key, _ in TEXT_FIELDS}
    values["aliases"] = "、".join(pack.aliases)
    for key, _ in SECTION_FIELDS:
        values[key] = getattr(pack.sections, key).strip()
    return values


async def persona_page(
    console: Console,
    session: Session,
    name: str,
    *,
    error: str = "",
    notice: str = "",
    typed: dict[str, str] | None = None,
    file_text: str | None = None,
) -> Response:
    try:
        current = read_persona(session.backend.personas_dir, name)
    except ConfigRejected as exc:
        return not_found(console, session, str(exc))
    try:
        values = _form_values(current)
        preview = await preview_system_prompt(validate_persona_text(current))
        broken = ""
    except ConfigRejected as exc:  # the file on disk is broken: edit it as a whole
        values, preview, broken = {}, "", str(exc)
    page = console.render(
        "persona.html",
        session,
        page="personas",
        persona=name,
        values=typed if typed is not None else values,
        text_fields=TEXT_FIELDS,
        section_fields=SECTION_FIELDS,
        file_text=current if file_text is None else file_text,
        file_open=file_text is not None or bool(broken),
        preview=preview,
        broken=broken,
        error=error,
        notice=notice,
    )
    if error:
        page.status_code = 422
    return page


async def _form(request: Request) -> dict[str, str]:
    form = await request.form()
    return {k: v for k, v in form.items() if isinstance(v, str) and k != "csrf"}


def persona_routes(router: APIRouter, console: Console) -> None:
    @router.get("/personas")
    async def personas(request: Request) -> Response:
        session = await console.session(request)
        rows = list_personas(session.backend.personas_dir, session.backend.groups_dir)
        return console.render("personas.html", session, page="personas", rows=rows)

    @router.get("/personas/{name}")
    async def persona(request: Request, name: str) -> Response:
        return await persona_page(console, await console.session(request), name)

    @router.post("/personas/{name}/form")
    async def save_form(request: Request, name: str) -> Response:
        session = await console.checked(request)
        typed = await _form(request)
        directory = session.backend.personas_dir
        try:
            text, changed = form_text(read_persona(directory, name), typed)
            save_persona_text(directory, name, text)
        except ConfigRejected as exc:
            log.info("console: rejected persona %s edit: %s", name, exc)
            return await persona_page(console, session, name, error=str(exc), typed=typed)
        for key in changed:
            log.info("console: persona %s %s = %r", name, key, _audit_value(typed, key))
        notice = "已保存：" + "、".join(changed) if changed else "没有改动"
        return await persona_page(console, session, name, notice=notice)

    @router.post("/personas/{name}/file")
    async def save_file(request: Request, name: str) -> Response:
        session = await console.checked(request)
        text = (await _form(request)).get("text", "").replace("\r\n", "\n")
        try:
            save_persona_text(session.backend.personas_dir, name, text)
        except ConfigRejected as exc:
            log.info("console: rejected persona %s file: %s", name, exc)
            return await persona_page(console, session, name, error=str(exc), file_text=text)
        log.info("console: persona %s file replaced (%s)", name, persona_path(
            session.backend.personas_dir, name).name)  # fmt: skip
        return await persona_page(console, session, name, notice="已保存人设文件")


def _audit_value(typed: dict[str, str], key: str) -> Any:
    value = typed.get(key.removeprefix("sections."), "")
    return value if len(value) <= 80 else value[:80] + "…"
