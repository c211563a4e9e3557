"""Read-only console pages: groups, context analyzer, routing timeline, memory, usage."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from pallas.core.clock import CHINA, local_day
from pallas.features.cost import cost_reason_zh
from pallas.features.memory import SHORT_NAMES, STORED_KINDS, resolve_kind
from pallas.providers.error_text import llm_error_zh
from pallas.routing.outcome_text import OUTCOME_ZH, outcome_zh, reason_zh, trigger_zh
from pallas.web.app import Console
from pallas.web.members import match_member, memory_source_text
from pallas.web.queries import USAGE_KEYS, MessageCounts, UsageRow, days_back, members_today
from pallas.web.retrieval_view import retrieval_rows
from pallas.web.views import (
    cache_layout_view,
    provenance,
    request_json,
    section_zh,
    snapshot_outcome_zh,
    token_bar,
    usage_series,
)

TASKS = ("chat", "cheap", "vision")
DEFAULT_TURNS = 10
ROUTING_ROWS = 100  # the newest records on the routing page (of the chosen outcome)
LLM_OUTCOMES = ("reply", "quote", "follow_up", "tool")


def failure_reason_zh(stage: str, reason: str) -> str:
    """Why a turn failed, in Chinese (the code goes next to it, on hover)."""
    if stage == "llm":
        return llm_error_zh(reason) or "模型调用失败"
    if reason.startswith("core_processor:"):
        return f"准备上下文时核心步骤 {reason.partition(':')[2]} 出错（见日志）"
    if reason == "exception":
        return "处理这条消息时程序出错（见日志）"
    return "回复失败"


def clock_text(ts: float | None) -> str:
    """Beijing time, like the groups' own clocks."""
    if not ts:
        return "-"
    return datetime.fromtimestamp(float(ts), CHINA).strftime("%m-%d %H:%M:%S")


async def group_rows(console: Console, query: str) -> list[dict[str, Any]]:
    backend = console.backend()
    now = backend.now()
    scopes = await backend.queries.scopes_seen()
    counts = await backend.queries.messages_today(now)
    failed = await backend.failure_counts(now)
    usage = await backend.queries.usage(
        since_day=local_day(now), keys=("bot_id", "group_id", "task")
    )
    per_task: dict[tuple[int, int, str], list[int]] = {}
    for row in usage:
        acc = per_task.setdefault((row.bot_id, row.group_id, row.task), [0, 0])
        acc[0] += row.calls
        acc[1] += row.tokens
    names = await backend.group_names()
    rows: list[dict[str, Any]] = []
    for bot_id, group_id in scopes:
        name = names.get(group_id, "")
        if query and not any(query in text for text in (str(group_id), str(bot_id), name)):
            continue
        today = counts.get((bot_id, group_id), MessageCounts())
        rows.append(
            {
                "bot_id": bot_id,
                "group_id": group_id,
                "name": name,
                "messages": members_today(counts, group_id),  # members' own, any account
                "replies": today.bot_messages,
                "failed": failed.get((bot_id, group_id), 0),
                "tasks": {t: per_task.get((bot_id, group_id, t), [0, 0]) for t in TASKS},
                "enabled": backend.group_config(group_id).enabled,
            }
        )
    rows.sort(key=lambda r: (-r["messages"], r["group_id"]))
    return rows


def read_pages(router: APIRouter, console: Console) -> None:
    @router.get("/")
    async def groups(request: Request, q: str = "") -> Response:
        session = await console.session(request)
        rows = await group_rows(console, q.strip())
        database = await session.backend.database_line()
        return console.render(
            "groups.html", session, rows=rows, q=q, tasks=TASKS, page="groups", database=database
        )

    @router.get("/usage")
    async def usage(request: Request, group: str = "") -> Response:
        session = await console.session(request)
        backend = session.backend
        now = backend.now()
        group_id = int(group) if group.strip().isdigit() else None
        days = [days_back(now, i) for i in range(29, -1, -1)]
        queries = backend.queries
        # one group: every day × task × model; all groups: 30-day totals per group × task × model
        keys = USAGE_KEYS if group_id is not None else ("group_id", "task", "model", "endpoint")
        chart, table, today = await asyncio.gather(  # separate connections, read in parallel
            queries.usage(since_day=days[0], group_id=group_id, keys=("day", "task")),
            queries.usage(since_day=days[0], group_id=group_id, keys=keys),
            queries.usage(since_day=days[-1], keys=("group_id", "task")),
        )
        series = usage_series(chart, table, days, lambda gid: backend.group_config(gid).models)
        return console.render(
            "usage.html",
            session,
            page="usage",
            series=series,
            group=group,
            per_day=group_id is not None,
            budgets=today_budgets(console, today),
            endpoints=await backend.endpoint_status(),
            clock=clock_text,
        )


def group_pages(router: APIRouter, console: Console) -> None:
    """Per-group read pages: the context analyzer, the routing timeline, the memory list."""

    @router.get("/g/{group_id}/context")
    async def analyzer(
        request: Request, group_id: int, turn: str = "", n: int = DEFAULT_TURNS
    ) -> Response:
        session = await console.session(request)
        backend = session.backend
        bot_id = await backend.bot_for_group(group_id)
        limit = max(1, min(n, 50))
        snaps = await backend.queries.snapshot_index(bot_id, group_id, limit)
        wanted = turn or (snaps[0]["turn_id"] if snaps else "")
        chosen = await backend.snapshot(wanted) if wanted else None
        if chosen is not None and chosen["group_id"] != group_id:
            chosen = None  # a turn of another group is not shown under this one
        data = chosen["data"] if chosen else {}
        keys = [(int(x["bot_id"]), group_id, int(x["message_id"])) for x in snaps if x["bot_id"]]
        senders = await backend.queries.senders(keys) if keys else {}
        by_message = {mid: name for (_, _, mid), name in senders.items() if name}
        return console.render(
            "analyzer.html",
            session,
            page="context",
            group_id=group_id,
            snaps=snaps,
            snap=chosen,
            data=data,
            bar=token_bar(data) if chosen else [],
            request_text=request_json(data) if chosen else "",
            retrieval=retrieval_rows(data) if chosen else [],
            layout=cache_layout_view(data) if chosen else None,
            clock=clock_text,
            section_zh=section_zh,
            outcome_text=snapshot_outcome_zh,
            names=by_message,  # message id → the sender's card / nickname
            sources=lambda tokens: provenance(tokens, by_message),
        )

    @router.get("/g/{group_id}/routing")
    async def routing(request: Request, group_id: int, outcome: str = "") -> Response:
        session = await console.session(request)
        bot_id = await session.backend.bot_for_group(group_id)
        records = (
            await session.backend.decisions(bot_id, group_id, outcome=outcome, limit=ROUTING_ROWS)
            if bot_id
            else []
        )
        outcomes = sorted({*OUTCOME_ZH, *(str(r.get("outcome")) for r in records)})
        snaps = (
            await session.backend.queries.snapshot_index(bot_id, group_id, 200) if bot_id else []
        )
        turn_by_message = {s["message_id"]: s["turn_id"] for s in snaps}
        keys = [(bot_id or 0, group_id, int(r.get("message_id") or 0)) for r in records]
        senders = await session.backend.queries.senders(keys) if bot_id else {}
        return console.render(
            "routing.html",
            session,
            page="routing",
            group_id=group_id,
            records=list(reversed(records)),
            outcomes=outcomes,
            outcome=outcome,
            turn_by_message=turn_by_message,
            members={mid: name for (_, _, mid), name in senders.items() if name},
            cost_reason=cost_reason_zh,
            failure_reason=failure_reason_zh,
            reason_text=reason_zh,
            trigger_zh=trigger_zh,
            outcome_zh=outcome_zh,
            llm_outcomes=LLM_OUTCOMES,
            limit=ROUTING_ROWS,
            clock=clock_text,
        )

    @router.get("/g/{group_id}/memory")
    async def memory(
        request: Request, group_id: int, kind: str = "", user: str = "", notice: str = ""
    ) -> Response:
        session = await console.session(request)
        bot_id = await session.backend.bot_for_group(group_id)
        resolved = resolve_kind(kind) if kind else None
        named = user.strip() and not user.strip().isdigit() and bot_id
        found = (
            await session.backend.queries.members_named(bot_id, group_id, user.strip()[:64])
            if named and bot_id
            else []
        )
        match = match_member(user, found)
        subject = match.user_id
        shown = bool(bot_id) and (subject is not None or match.reason == "empty")
        items = (
            await session.backend.memories(bot_id, group_id, kind=resolved, user=subject)
            if shown and bot_id
            else []
        )
        retired = (
            await session.backend.retired_memories(bot_id, group_id, user=subject)
            if shown and bot_id
            else []
        )
        return console.render(
            "memory.html",
            session,
            page="memory",
            group_id=group_id,
            items=items,
            retired=retired,
            kinds=STORED_KINDS,
            names=SHORT_NAMES,
            kind=resolved or "",
            user=user,
            match=match,
            source_text=memory_source_text,
            notice=notice,
            clock=clock_text,
        )


def today_budgets(console: Console, rows: list[UsageRow]) -> list[dict[str, Any]]:
    """Per group: today's cheap-model tokens and vision calls against the configured budgets."""
    totals: dict[int, dict[str, int]] = {}
    for row in rows:
        acc = totals.setdefault(row.group_id, {"cheap_tokens": 0, "vision_calls": 0, "tokens": 0})
        acc["tokens"] += row.tokens
        if row.task == "cheap":
            acc["cheap_tokens"] += row.tokens
        if row.task == "vision":
            acc["vision_calls"] += row.calls
    out = []
    for group_id, acc in sorted(totals.items()):
        session_cfg = console.backend().group_config(group_id).session
        out.append(
            {
                "group_id": group_id,
                **acc,
                "cheap_budget": session_cfg.daily_cheap_token_budget,
                "vision_budget": session_cfg.daily_vision_call_budget,
            }
        )
    return out
