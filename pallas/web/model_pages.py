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
import secrets
from dataclasses import dataclass

from fastapi import APIRouter, Form, Request
from fastapi.responses import Response

from pallas.core.log_ring import LOG_RING
from pallas.core.secrets_file import (
    BACKUP_KEY,
    SOURCE_ZH,
    parse_superusers,
    read_all,
    secrets_path,
    update_secrets,
)
from pallas.providers.endpoints import TASKS
from pallas.providers.live import EndpointSet, LiveEndpoints
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


@dataclass(frozen=True, slots=True)
class EdgeView:
    """The superusers and the OneBot token: running now, and saved for the next start."""

    superusers_now: str  # "10001、10002" or ""
    superusers_saved: str
    superusers_pending: bool  # saved differs from running: a restart applies it
    token_now: str  # its last 4 characters, or ""
    token_saved: bool
    token_pending: bool
    token_from_env: bool  # running with a token the file does not hold
    host: str
    port: int


def edge_view(console: Console, session: Session) -> EdgeView:
    saved = read_all(session.backend.data_dir)
    running = sorted(str(i) for i in session.backend.superusers)
    listening = console.listening
    token = listening.access_token if listening else ""
    saved_token = saved.get("onebot_access_token", "")
    try:
        saved_ids = sorted(parse_superusers(saved.get("superusers", "")))
    except ValueError:
        saved_ids = []
    return EdgeView(
        superusers_now="、".join(running),
        superusers_saved="、".join(saved_ids),
        superusers_pending=bool(saved_ids) and saved_ids != running,
        token_now=key_tail(token) if token else "",
        token_saved=bool(saved_token),
        token_pending=bool(saved_token) and saved_token != token,
        token_from_env=bool(token) and token != saved_token,
        host=listening.host if listening else "",
        port=listening.port if listening else 0,
    )


@dataclass(frozen=True, slots=True)
class BackupView:
    task: str
    name: str
    base_url: str
    model: str
    variable: str  # "" = no key (a home Ollama)
    key_source: str  # 环境变量 / 控制台保存 / 未设置


def backup_views(endpoints: LiveEndpoints) -> list[BackupView]:
    providers = endpoints.providers
    rows = [(t, b) for t in TASKS for b in getattr(providers, t)]
    sources = endpoints.key_sources({b.api_key_env for _, b in rows if b.api_key_env})
    out = []
    for task, b in rows:
        where = sources.get(b.api_key_env, "default") if b.api_key_env else ""
        shown = {"env": "环境变量", "file": "控制台保存", "default": "未设置：这个备用接口被跳过"}
        out.append(BackupView(task, b.name, b.base_url, b.model or "（同主模型）", b.api_key_env,
                              shown.get(where, "不需要 Key")))  # fmt: skip
    return out


def providers_text(endpoints: LiveEndpoints) -> str:
    path = endpoints.providers_path
    try:
        return path.read_text(encoding="utf-8") if path is not None else ""
    except FileNotFoundError:
        return ""


async def model_page(
    console: Console,
    session: Session,
    *,
    form: ModelForm | None = None,
    chosen: str = "",
    error: str = "",
    notice: str = "",
    probe: tuple[bool, str] | None = None,
    new_token: str = "",
    providers: str | None = None,
    backup_probe: tuple[str, bool, str] | None = None,
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
        edge=edge_view(console, session),
        new_token=new_token,
        backups=backup_views(endpoints),
        providers_file=str(endpoints.providers_path or ""),
        providers_text=providers_text(endpoints) if providers is None else providers,
        backup_probe=backup_probe,
    )
    if error:
        page.status_code = 422
    return page


def shown_form(form: ModelForm) -> ModelForm:
    """The form as it goes back to the browser: never the key (the no-key placeholder may)."""
    key = form.api_key if form.api_key == NO_KEY_PLACEHOLDER else ""
    return ModelForm(form.base_url, key, form.chat, form.cheap, form.vision, form.embedding)


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
        shown = shown_form(form)
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
        said_back = result.detail.replace(key, "***") if key else result.detail  # never echoed
        detail = f"服务商原话：{said_back}" if said_back and not result.ok else ""
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
        shown = shown_form(form)
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
        if fresh.embeddings is not current.embeddings:  # another address or key: ask again
            session.backend.reprobe_embeddings()
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


def edge_routes(router: APIRouter, console: Console) -> None:
    """Superusers and the OneBot token, saved for the next start (NoneBot reads them once)."""

    @router.post("/model/superusers")
    async def superusers(request: Request, ids: str = Form("")) -> Response:
        session = await console.checked(request)
        try:
            parsed = parse_superusers(ids)
        except ValueError as exc:
            return await model_page(console, session, error=str(exc))
        update_secrets(session.backend.data_dir, {"superusers": ",".join(parsed)})
        log.info("console: superusers saved for the next start: %s", ",".join(parsed) or "-")
        notice = "已保存超级用户：" + "、".join(parsed) if parsed else "已清空保存的超级用户"
        notice += "。重启机器人后生效（环境变量或 .env 里的 SUPERUSERS 不为空时以它为准）。"
        return await model_page(console, session, notice=notice)

    @router.post("/model/token")
    async def token(request: Request) -> Response:
        session = await console.checked(request)
        fresh = secrets.token_urlsafe(24)
        update_secrets(session.backend.data_dir, {"onebot_access_token": fresh})
        LOG_RING.mask(fresh)
        log.info("console: a new OneBot access token was generated for the next start")
        notice = "已生成新的 OneBot 访问令牌，重启机器人后生效。"
        return await model_page(console, session, new_token=fresh, notice=notice)


def backup_routes(router: APIRouter, console: Console) -> None:
    """`config/providers.toml` (backup endpoints per task) and its keys, applied at once."""

    @router.post("/model/providers")
    async def save_providers(request: Request, text: str = Form("")) -> Response:
        session = await console.checked(request)
        endpoints = session.backend.endpoints
        try:
            endpoints.save_providers(text)
        except ValueError as exc:
            return await model_page(console, session, error=f"providers.toml：{exc}",
                                    providers=text)  # fmt: skip
        log.info("console: %s replaced", endpoints.providers_path)
        return await model_page(console, session, notice="已保存 providers.toml，立即生效。")

    @router.post("/model/backup-test")
    async def test_backup(request: Request, task: str = Form(""), name: str = Form("")) -> Response:
        session = await console.checked(request)
        endpoints = session.backend.endpoints
        chosen = next((t for t in TASKS if t == task), None)
        found = (
            next((b for b in getattr(endpoints.providers, chosen) if b.name == name), None)
            if chosen
            else None
        )
        if found is None or chosen is None:
            return await model_page(console, session, error=f"没有备用接口 {task}:{name}")
        key = endpoints.key_env().get(found.api_key_env, "") if found.api_key_env else ""
        if found.api_key_env and not key:
            verdict = f"未测试：{found.api_key_env} 还没有 Key"
            return await model_page(console, session, backup_probe=(name, False, verdict))
        model = found.model or endpoints.current().chains[chosen][0].model
        result = await probe_chat(found.base_url, key, model)
        log.info("console: backup test %s:%s → %s (status %s, %s ms)", task, name,
                 result.outcome, result.status, result.latency_ms)  # fmt: skip
        said = probe_verdict_zh(result, model)
        return await model_page(console, session, backup_probe=(name, result.ok, said))

    @router.post("/model/backup-key")
    async def save_backup_key(
        request: Request, variable: str = Form(""), key: str = Form("")
    ) -> Response:
        session = await console.checked(request)
        endpoints = session.backend.endpoints
        named = {b.api_key_env for t in TASKS for b in getattr(endpoints.providers, t)}
        key = key.strip()
        if variable not in named or not BACKUP_KEY.match(f"key.{variable}"):
            return await model_page(console, session, error=f"providers.toml 里没有 {variable}")
        if not key or check_model_form(ModelForm("http://x", key, "m", "m", "", "")):
            return await model_page(console, session, error="Key 不能为空，也不能有空格")
        LOG_RING.mask(key)
        endpoints.save_backup_key(variable, key)
        log.info("console: the key of %s saved (%s)", variable, key_tail(key))
        notice = f"已保存 {variable}，立即生效。"
        if endpoints.key_sources([variable])[variable] == "env":
            notice += f"但环境变量 {variable} 不为空，以它为准。"
        return await model_page(console, session, notice=notice)
