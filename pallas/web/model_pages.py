"""The 模型 page (`/console/model`): set up the model without a file or a restart.

A preset fills the base URL and a model per task; the operator pastes the key; 测试连接 makes
one tiny call with what the form holds (`providers.probe`) and says the outcome in Chinese;
保存 writes the deployment's secrets file (`data/secrets.toml`, 0600) through the endpoints'
holder, which swaps in a new endpoint set at once (`providers/live.py`). The key is never shown
back: the page shows its last 4 characters. A non-empty environment variable wins over the
file, and the page says which value is in force and where it comes from. Every POST needs the
CSRF token; a save logs one audit line (without the key).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from fastapi import APIRouter, Form, Request
from fastapi.responses import Response

from pallas.core.log_ring import LOG_RING
from pallas.core.secrets_file import SOURCE_ZH, secrets_path
from pallas.providers.live import EndpointSet
from pallas.providers.presets import (
    NO_KEY_PLACEHOLDER,
    ModelForm,
    check_model_form,
    key_tail,
    load_presets,
)
from pallas.providers.presets import preset as find_preset
from pallas.providers.probe import ProbeResult, probe_chat, probe_verdict_zh
from pallas.web.app import Console, Session

log = logging.getLogger("pallas.console")

FIELDS = (  # form field → (settings field, environment variable, label)
    ("base_url", "openai_base_url", "OPENAI_BASE_URL", "接口地址"),
    ("api_key", "openai_api_key", "OPENAI_API_KEY", "API Key"),
    ("chat", "pallas_chat_model", "PALLAS_CHAT_MODEL", "对话模型"),
    ("cheap", "pallas_cheap_model", "PALLAS_CHEAP_MODEL", "便宜模型（后台任务）"),
    ("vision", "pallas_vision_model", "PALLAS_VISION_MODEL", "看图模型"),
    ("embedding", "pallas_embedding_model", "PALLAS_EMBEDDING_MODEL", "向量模型（记忆检索）"),
)


@dataclass(frozen=True, slots=True)
class InForceRow:
    field: str
    label: str
    shown: str  # the value as the page shows it (a key: its last 4 characters)
    source: str  # 环境变量 / 控制台保存 / 内置默认
    env_name: str
    from_env: bool


def in_force_rows(current: EndpointSet) -> list[InForceRow]:
    rows = []
    for field, name, env_name, label in FIELDS:
        value = str(getattr(current.settings, name))
        source = current.sources.get(name, "default")
        if field == "api_key":
            shown = key_tail(value) if value else "（未设置）"
        else:
            shown = value or ("（空：不看图）" if field == "vision" else "（空）")
        where = SOURCE_ZH[source] + (f"（{env_name}）" if source == "env" else "")
        rows.append(InForceRow(field, label, shown, where, env_name, source == "env"))
    return rows


def form_of(current: EndpointSet) -> ModelForm:
    """The form filled with the values in force (never the key)."""
    s = current.settings
    return ModelForm(s.openai_base_url, "", s.pallas_chat_model, s.pallas_cheap_model,
                     s.pallas_vision_model, s.pallas_embedding_model)  # fmt: skip


def key_to_use(form: ModelForm, current: EndpointSet) -> tuple[str, str]:
    """(the key a test or a save uses, the problem): an empty key field keeps the key in force,
    but only for the same base URL — a key is never sent to another provider's address."""
    if form.api_key:
        return form.api_key, ""
    in_force = current.settings.openai_api_key
    if in_force and form.base_url.rstrip("/") == current.settings.openai_base_url.rstrip("/"):
        return in_force, ""
    return "", "请填写 API Key（换了接口地址时不会沿用原来的 Key；本地 Ollama 填 ollama 即可）"


async def model_page(
    console: Console,
    session: Session,
    *,
    form: ModelForm | None = None,
    chosen: str = "",
    error: str = "",
    notice: str = "",
    probe: tuple[bool, str] | None = None,
) -> Response:
    endpoints = session.backend.endpoints
    current = endpoints.current()
    rows = in_force_rows(current)
    page = console.render(
        "model.html",
        session,
        page="model",
        presets=load_presets(),
        chosen=chosen,
        form=form or form_of(current),
        rows=rows,
        env_wins=[r for r in rows if r.from_env],
        replies_on=current.enabled,
        key_hint=key_tail(current.settings.openai_api_key)
        if current.settings.openai_api_key
        else "",
        secrets_file=str(secrets_path(session.backend.data_dir)),
        writable=endpoints.writable,
        no_key=NO_KEY_PLACEHOLDER,
        error=error,
        notice=notice,
        probe=probe,
    )
    if error:
        page.status_code = 422
    return page


def _form(
    base_url: str, api_key: str, chat: str, cheap: str, vision: str, embedding: str
) -> ModelForm:
    return ModelForm(base_url, api_key, chat, cheap, vision, embedding).stripped()


def model_routes(router: APIRouter, console: Console) -> None:
    @router.get("/model")
    async def model(request: Request, preset: str = "") -> Response:
        session = await console.session(request)
        chosen = find_preset(preset)
        if chosen is None:
            return await model_page(console, session)
        form = ModelForm(chosen.base_url, "" if chosen.needs_key else NO_KEY_PLACEHOLDER,
                         chosen.chat, chosen.cheap, chosen.vision, chosen.embedding)  # fmt: skip
        return await model_page(console, session, form=form, chosen=chosen.id)

    @router.post("/model/test")
    async def test(
        request: Request,
        base_url: str = Form(""),
        api_key: str = Form(""),
        chat: str = Form(""),
        cheap: str = Form(""),
        vision: str = Form(""),
        embedding: str = Form(""),
        chosen: str = Form(""),
    ) -> Response:
        session = await console.checked(request)
        form = _form(base_url, api_key, chat, cheap, vision, embedding)
        shown = ModelForm(form.base_url, "", form.chat, form.cheap, form.vision, form.embedding)
        problems = check_model_form(form)
        key, missing = key_to_use(form, session.backend.endpoints.current())
        if missing:
            problems.append(missing)
        if problems:  # nothing is saved by a test: said where its result goes
            return await model_page(console, session, form=shown, chosen=chosen,
                                    probe=(False, "未测试：" + "；".join(problems)))  # fmt: skip
        result: ProbeResult = await probe_chat(form.base_url, key, form.chat)
        verdict = probe_verdict_zh(result, form.chat)
        log.info(
            "console: model test %s %s → %s (status %s, %s ms)",
            form.base_url, form.chat, result.outcome, result.status, result.latency_ms,
        )  # fmt: skip
        detail = f"服务商原话：{result.detail}" if result.detail and not result.ok else ""
        said = " ".join(filter(None, (verdict, detail)))
        return await model_page(console, session, form=shown, chosen=chosen,
                                probe=(result.ok, said))  # fmt: skip

    @router.post("/model/save")
    async def save(
        request: Request,
        base_url: str = Form(""),
        api_key: str = Form(""),
        chat: str = Form(""),
        cheap: str = Form(""),
        vision: str = Form(""),
        embedding: str = Form(""),
        chosen: str = Form(""),
    ) -> Response:
        session = await console.checked(request)
        endpoints = session.backend.endpoints
        form = _form(base_url, api_key, chat, cheap, vision, embedding)
        shown = ModelForm(form.base_url, "", form.chat, form.cheap, form.vision, form.embedding)
        problems = check_model_form(form)
        current = endpoints.current()
        _, missing = key_to_use(form, current)
        if missing:
            problems.append(missing)
        if not endpoints.writable:
            problems.append("没有数据目录，无法保存")
        if problems:
            return await model_page(console, session, form=shown, chosen=chosen,
                                    error="；".join(problems))  # fmt: skip
        # an empty key field keeps the saved key (same base URL: `key_to_use` checked)
        values = {
            "openai_base_url": form.base_url,
            "openai_api_key": form.api_key or endpoints.saved().get("openai_api_key", ""),
            "pallas_chat_model": form.chat,
            "pallas_cheap_model": form.cheap,
            "pallas_vision_model": form.vision,
            "pallas_embedding_model": form.embedding,
        }
        if form.api_key:
            LOG_RING.mask(form.api_key)  # never shown by the console's log tail
        fresh = endpoints.save(values)
        log.info(
            "console: model settings saved to %s (base_url %s, chat %s, cheap %s, vision %s, "
            "embedding %s, key %s), in force now: replies %s",
            secrets_path(session.backend.data_dir), form.base_url, form.chat, form.cheap,
            form.vision, form.embedding or "-", key_tail(values["openai_api_key"]),
            "on" if fresh.enabled else "off",
        )  # fmt: skip
        overridden = [label for _, name, _, label in FIELDS if fresh.sources.get(name) == "env"]
        notice = "已保存，立即生效（不用重启）。"
        if overridden:
            notice += "但环境变量里设置的" + "、".join(overridden) + "优先，保存的对应值不生效。"
        return await model_page(console, session, notice=notice)
