"""The status page (`/console/status`): is the bot up, connected, answered by its model, and
what did it do today. The view models are pure; `status_pages` registers the route."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from pallas.admin.checklist import SetupFacts, first_run_checklist
from pallas.core.accounts import Account
from pallas.core.clock import local_day
from pallas.features.tools import MCP_STATE_ZH, ServerStatus
from pallas.providers.client import EndpointStatus
from pallas.providers.error_text import llm_error_zh
from pallas.providers.models import ModelProfile
from pallas.web.app import Console, Listening
from pallas.web.pages import clock_text
from pallas.web.queries import MessageCounts, UsageRow
from pallas.web.views import cost_of


def duration_zh(seconds: float) -> str:
    """`3 天 4 小时`, `2 小时 5 分钟`, `7 分钟`, `12 秒` (the two largest units)."""
    total = max(int(seconds), 0)
    days, rest = divmod(total, 86_400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days} 天 {hours} 小时" if hours else f"{days} 天"
    if hours:
        return f"{hours} 小时 {minutes} 分钟" if minutes else f"{hours} 小时"
    if minutes:
        return f"{minutes} 分钟"
    return f"{secs} 秒"


@dataclass(frozen=True, slots=True)
class AccountView:
    self_id: int
    nickname: str
    online: bool
    state: str  # 在线 / 已断开
    since: float
    for_how_long: str  # 在线 3 小时 / 断开 5 分钟
    implementation: str  # "NapCat.Onebot 4.8.0" or 未知
    protocol: str


def account_views(accounts: Iterable[Account], now: float) -> list[AccountView]:
    out = []
    for a in accounts:
        state = "在线" if a.connected else "已断开"
        lasted = duration_zh(now - a.since)
        out.append(
            AccountView(
                self_id=a.self_id,
                nickname=a.nickname or "（未知）",
                online=a.connected,
                state=state,
                since=a.since,
                for_how_long=f"已在线 {lasted}" if a.connected else f"已断开 {lasted}",
                implementation=a.implementation or "（未告知）",
                protocol=a.protocol_version or "-",
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class EndpointView:
    task: str
    name: str
    model: str
    healthy: bool
    state: str  # the breaker's label
    answers: str  # 能应答 / 最近一次调用失败 / 熔断中 / 还没有调用
    last_success_at: float
    last_failure_at: float
    last_error: str  # the code
    last_error_zh: str


def endpoint_view(status: EndpointStatus) -> EndpointView:
    """Whether the endpoint answers, told by its last success and last failure (the breaker
    records both; a healthy endpoint's success at most once a minute)."""
    s = status.state
    if not status.healthy:
        answers = "不应答（熔断中）"
    elif s.last_failure_at > s.last_success_at:
        answers = "最近一次调用失败"
    elif s.last_success_at:
        answers = "能应答"
    else:
        answers = "还没有调用记录"
    return EndpointView(
        task=status.task,
        name=status.name,
        model=status.model,
        healthy=status.healthy and s.last_failure_at <= s.last_success_at,
        state=status.label,
        answers=answers,
        last_success_at=s.last_success_at,
        last_failure_at=s.last_failure_at,
        last_error=s.last_error,
        last_error_zh=(llm_error_zh(s.last_error) or s.last_error) if s.last_error else "",
    )


@dataclass(frozen=True, slots=True)
class TodayTotals:
    messages: int  # members' messages (the bot's own are not counted)
    replies: int  # messages the bot sent
    calls: int  # model calls (every task)
    failed_calls: int
    tokens: int
    cost: float | None  # None: no price configured for any model used
    failed_turns: int  # reply turns that ended in an error (the error list)
    groups: int  # groups with messages today


def today_totals(
    counts: Mapping[tuple[int, int], MessageCounts],
    usage: Sequence[UsageRow],
    *,
    failed_calls: int,
    failed_turns: Mapping[tuple[int, int], int],
    profiles_of: Callable[[int], Mapping[str, ModelProfile]],
) -> TodayTotals:
    """Today's numbers over every group: messages from the message table, calls / tokens /
    cost from the usage ledger (`usage`: rows per group × task × model), failures from the
    ledger (calls) and the routing history (turns)."""
    costs = [cost_of(row, profiles_of(row.group_id)) for row in usage]
    priced = [c for c in costs if c is not None]
    return TodayTotals(
        messages=sum(c.messages - c.bot_messages for c in counts.values()),
        replies=sum(c.bot_messages for c in counts.values()),
        calls=sum(r.calls for r in usage),
        failed_calls=failed_calls,
        tokens=sum(r.tokens for r in usage),
        cost=round(sum(priced), 4) if priced else None,
        failed_turns=sum(failed_turns.values()),
        groups=len(counts),
    )


@dataclass(frozen=True, slots=True)
class McpServerView:
    name: str
    transport: str
    state: str  # in Chinese
    healthy: bool
    tools: str  # the tools it offers, comma-separated ("" before its first start)
    problem: str  # its last error and the variables it lacks, "" when none


def mcp_views(statuses: Iterable[ServerStatus]) -> list[McpServerView]:
    views = []
    for s in statuses:
        problems = [s.error] if s.error else []
        if s.missing_env:
            problems.append("未设置环境变量：" + "、".join(s.missing_env))
        views.append(
            McpServerView(
                name=s.name,
                transport=s.transport,
                state=MCP_STATE_ZH.get(s.state, s.state),
                healthy=s.state in ("idle", "starting", "ready") and not s.missing_env,
                tools="、".join(s.tools),
                problem="；".join(problems),
            )
        )
    return views


def setup_facts(
    *,
    key_set: bool,
    endpoints: Sequence[EndpointStatus],
    accounts: Sequence[Account],
    superusers: int,
    listening: Listening | None,
    groups_seen: int,
) -> SetupFacts:
    """What the first-run checklist reads, from what the status page already gathered."""
    chat = next((e for e in endpoints if e.task == "chat"), None)
    answers: bool | None = None
    error = ""
    if chat is not None and (chat.state.last_success_at or chat.state.last_failure_at):
        answers = chat.state.last_success_at >= chat.state.last_failure_at
        error = llm_error_zh(chat.state.last_error) or chat.state.last_error
    return SetupFacts(
        key_set=key_set,
        model_answers=answers,
        model_error_zh=error,
        accounts_online=sum(1 for a in accounts if a.connected),
        superusers=superusers,
        host=listening.host if listening else None,
        port=listening.port if listening else 8080,
        access_token=listening.access_token if listening else None,
        groups_seen=groups_seen,
    )


FRAME_REASONS_ZH = {
    "too_large": "超过 4 MiB",
    "not_json": "不是 JSON",
    "too_deep": "嵌套过深",
    "int_too_long": "数字过长",
    "not_object": "不是 JSON 对象",
}


def refused_kind_zh(kind: str) -> str:
    """`frame:not_json` → 「不是 JSON」; `event:message:user_id` → 「message 事件（user_id）」."""
    head, _, rest = kind.partition(":")
    if head == "frame":
        return FRAME_REASONS_ZH.get(rest, rest)
    post_type, _, field = rest.partition(":")
    return f"{post_type or '未知'} 事件（{field or '无法识别'}）"


def refused_line(counts: Mapping[str, int]) -> str:
    """One line for the status page: how many OneBot frames were refused since start, by kind
    (the largest five), and where they are kept; "" when none was."""
    total = sum(counts.values())
    if not total:
        return ""
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
    kinds = "，".join(f"{refused_kind_zh(k)} {n}" for k, n in top)
    return (
        f"启动以来拒收了 {total} 个 OneBot 帧（不是 OneBot 事件，连接不受影响）：{kinds}。"
        "原样保存在 data/refused/frames.jsonl，可用 pallas replay 重放"
    )


def status_pages(router: APIRouter, console: Console) -> None:
    @router.get("/status")
    async def status(request: Request) -> Response:
        session = await console.session(request)
        backend = session.backend
        now = backend.now()
        queries = backend.queries
        counts, usage, failed, ledger, endpoints, database = await asyncio.gather(
            queries.messages_today(now),
            queries.usage(since_day=local_day(now), keys=("group_id", "task", "model")),
            backend.failure_counts(now),
            backend.usage_today(),
            backend.endpoint_status(),
            backend.database_line(),
        )
        seen = await queries.scopes_seen()
        schema, version = await backend.schema_state(), await backend.version()
        accounts = backend.accounts()
        checklist = first_run_checklist(
            setup_facts(
                key_set=backend.replies_enabled,
                endpoints=endpoints,
                accounts=accounts,
                superusers=len(backend.superusers),
                listening=console.listening,
                groups_seen=len({g for _, g in seen if g}),
            )
        )
        today = today_totals(
            counts,
            usage,
            failed_calls=ledger.failures,
            failed_turns=failed,
            profiles_of=lambda gid: backend.group_config(gid).models,
        )
        values: dict[str, Any] = {
            "checklist": checklist,
            "schema": schema,
            "version": version,
            "accounts": account_views(accounts, now),
            "uptime": duration_zh(now - backend.started_at) if backend.started_at else "",
            "started_at": backend.started_at,
            "endpoints": [endpoint_view(e) for e in endpoints],
            "today": today,
            "database": database,
            "embeddings": backend.embedding_line(),
            "mcp": mcp_views(backend.mcp_servers()),
            "refused": refused_line(console.refused_frames()),
        }
        return console.render("status.html", session, page="status", clock=clock_text, **values)
