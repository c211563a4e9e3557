"""The global settings page (`/console/settings`): the model each task uses, prices per model,
the daily caps, and `default.toml` with the same validated, logged edits as a group's file.

Model names only: an endpoint's key, or the environment variable holding it, is never shown.
"""

from __future__ import annotations

import logging
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fastapi import APIRouter, Form, Request
from fastapi.responses import Response

from pallas.config import GroupConfig
from pallas.providers.client import EndpointStatus
from pallas.providers.models import ModelProfile, profile_for
from pallas.web.app import Console, Session
from pallas.web.config_docs import group_keys
from pallas.web.config_edit import ConfigRejected, with_origin
from pallas.web.settings_edit import (
    DEFAULT_FILE,
    read_default,
    reset_default_value,
    save_default,
    set_default_value,
)
from pallas.web.views import TASKS_ZH, redact_config

log = logging.getLogger("pallas.console")


@dataclass(frozen=True, slots=True)
class TaskModel:
    task: str
    task_zh: str
    model: str  # "" = the task is off
    endpoints: tuple[str, ...]  # "name: model" of the task's endpoint chain, in order
    profile: ModelProfile | None  # what budgets and bills the model (None when off)


@dataclass(frozen=True, slots=True)
class Cap:
    label: str
    limit: int  # 0 = no cap
    used: int

    @property
    def share(self) -> str:
        return f"{self.used / self.limit:.0%}" if self.limit else ""


def task_models(
    names: Mapping[str, str],
    endpoints: Sequence[EndpointStatus],
    profiles: Mapping[str, ModelProfile],
) -> list[TaskModel]:
    """Each task with its model, its endpoint chain and the profile that prices it."""
    out = []
    for task, model in names.items():
        chain = tuple(f"{e.name}: {e.model}" for e in endpoints if e.task == task)
        profile = profile_for(dict(profiles), model) if model else None
        out.append(TaskModel(task, TASKS_ZH.get(task, task), model, chain, profile))
    return out


def default_config(text: str) -> GroupConfig:
    """default.toml over the built-ins (the built-ins alone when it does not validate)."""
    try:
        return GroupConfig.model_validate(tomllib.loads(text))
    except (tomllib.TOMLDecodeError, ValueError):
        return GroupConfig()


async def settings_page(
    console: Console, session: Session, error: str = "", notice: str = "", text: str | None = None
) -> Response:
    backend = session.backend
    saved = read_default(backend.groups_dir)
    config = default_config(saved)
    try:
        data = tomllib.loads(saved)
    except tomllib.TOMLDecodeError:
        data = {}
    rows = redact_config(with_origin(config, [(DEFAULT_FILE, data)]))
    usage = await backend.usage_today()
    calls_cap, tokens_cap = backend.daily_caps()
    budget = config.cost.budget
    page = console.render(
        "settings.html",
        session,
        page="settings",
        tasks=task_models(backend.model_names(), await backend.endpoint_status(), config.models),
        profiles=sorted(config.models.items()),
        caps=[
            Cap("全部群的回复调用（PALLAS_DAILY_CALL_CAP）", calls_cap, usage.calls),
            Cap("全部群的 tokens（PALLAS_DAILY_TOKEN_CAP）", tokens_cap, usage.tokens),
        ],
        budget=budget,
        groups=group_keys(rows, group_file=DEFAULT_FILE),
        file_name=DEFAULT_FILE,
        file_text=saved if text is None else text,
        error=error,
        notice=notice,
    )
    if error:
        page.status_code = 422
    return page


def settings_routes(router: APIRouter, console: Console) -> None:
    @router.get("/settings")
    async def settings(request: Request) -> Response:
        return await settings_page(console, await console.session(request))

    @router.post("/settings/value")
    async def set_value(request: Request, key: str = Form(""), value: str = Form("")) -> Response:
        session = await console.checked(request)
        try:
            set_default_value(session.backend.groups_dir, key, value)
        except ConfigRejected as exc:
            return await settings_page(console, session, error=str(exc))
        log.info("console: %s %s = %s", DEFAULT_FILE, key, value)
        return await settings_page(console, session, notice=f"已保存 {key} = {value}（所有群）")

    @router.post("/settings/reset")
    async def reset_value(request: Request, key: str = Form("")) -> Response:
        session = await console.checked(request)
        try:
            reset_default_value(session.backend.groups_dir, key)
        except ConfigRejected as exc:
            return await settings_page(console, session, error=str(exc))
        log.info("console: %s %s reset to the built-in default", DEFAULT_FILE, key)
        return await settings_page(console, session, notice=f"已恢复内置默认：{key}")

    @router.post("/settings/file")
    async def set_file(request: Request, text: str = Form("")) -> Response:
        session = await console.checked(request)
        try:
            save_default(session.backend.groups_dir, text)
        except ConfigRejected as exc:
            return await settings_page(console, session, error=str(exc), text=text)
        log.info("console: %s replaced", DEFAULT_FILE)
        return await settings_page(console, session, notice=f"已保存 {DEFAULT_FILE}")
