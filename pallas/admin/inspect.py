"""Why did the bot (not) speak? `status`, `why`, `context`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from dataclasses import asdict
from datetime import datetime
from typing import Any

from pallas.admin.base import AdminCommand, AdminCtx, AppCommand
from pallas.admin.checklist import SetupFacts, checklist_lines, first_run_checklist
from pallas.context.analyzer import render_snapshot
from pallas.core.clock import CHINA
from pallas.core.db.retention import database_facts
from pallas.core.db.schema_state import schema_state
from pallas.core.version import pallas_version
from pallas.features.cost import Limits, UsageCounters, cost_reason_zh, status_lines
from pallas.features.tools import ToolsConfig
from pallas.providers.client import EndpointStatus
from pallas.providers.error_text import llm_error_zh
from pallas.routing.outcome_text import outcome_zh, reason_zh

log = logging.getLogger("pallas.admin")

STATUS_FLUSH_WAIT_S = 2.0


async def status(cmd: AdminCtx) -> str:
    svc = cmd.services
    config = svc.group_config(cmd.group_id)
    private = not cmd.group_id  # a superuser's /pallas in private: the bot's private chats
    if private:
        config = config.for_private_chat()
    with contextlib.suppress(TimeoutError):  # the database may be down: report, don't hang
        await asyncio.wait_for(svc.writer.flush(), STATUS_FLUSH_WAIT_S)
    stored = await svc.messages.count(bot_id=cmd.bot_id, group_id=cmd.group_id)  # on disk
    usage = await svc.usage.totals(now=svc.clock.now(), bot_id=cmd.bot_id, group_id=cmd.group_id)
    queued = svc.writer.queued  # all groups: received, not yet committed
    endpoints = await svc.llm.endpoint_status()
    lines = superuser_checklist(cmd, endpoints)
    lines += [
        f"{'私聊' if private else '本群'}已记录消息 {stored} 条"
        + (f"（另有 {queued} 条待写入）" if queued else ""),
        f"发言：{'开启' if config.enabled else '关闭'}；人设：{config.persona}",
        f"回复模型：{'已配置' if svc.llm.enabled else '未配置 API Key，暂不回复'}",
        f"今日模型调用 {usage.calls} 次（失败 {usage.failures}），tokens {usage.tokens}"
        + (f"，提示缓存命中 {usage.cache_share:.0%}" if usage.cached_tokens else ""),
        *endpoint_lines(endpoints),
        svc.llm.embeddings.state.status_zh(),  # on / off and why (the start-up probe)
        svc.memory.embeddings.status_zh(),  # what memory ranks by: the local encoder or not
        _tools_line(config.tools),
    ]
    lines += await status_lines(
        UsageCounters(svc.state, svc.usage),
        config.cost,
        Limits(svc.deployment.daily_call_cap, svc.deployment.daily_token_cap),
        now=svc.clock.now(),
        bot_id=cmd.bot_id,
        group_id=cmd.group_id,
    )
    try:
        lines.append((await database_facts(svc.sessions)).line_zh())
        schema = await schema_state(svc.sessions)
        lines.append(f"版本 {await asyncio.to_thread(pallas_version)}；{schema.line_zh}"
                     + ("" if schema.ok else f"：{schema.action_zh}"))  # fmt: skip
    except Exception:  # a status must answer even when the database cannot say
        log.warning("status: database facts unavailable", exc_info=True)
        lines.append("数据库：暂时读不到大小")
    errors = svc.configs.errors()
    if errors:
        lines.append("配置文件有问题（仍在使用上一次正确的版本）：")
        lines.extend(f"- {name}" for name in errors)
    return "\n".join(lines)


def superuser_checklist(cmd: AdminCtx, endpoints: Sequence[EndpointStatus]) -> list[str]:
    """The first-run checklist's open items, for a superuser only ([] when all are green)."""
    svc = cmd.services
    if cmd.user_id not in svc.deployment.superusers:
        return []
    chat = next((e for e in endpoints if e.task == "chat"), None)
    answers: bool | None = None
    error = ""
    if chat is not None and (chat.state.last_success_at or chat.state.last_failure_at):
        answers = chat.state.last_success_at >= chat.state.last_failure_at
        error = llm_error_zh(chat.state.last_error) or chat.state.last_error
    facts = SetupFacts(
        key_set=svc.llm.enabled,
        model_answers=answers,
        model_error_zh=error,
        superusers=len(svc.deployment.superusers),
    )
    return checklist_lines(first_run_checklist(facts))


def endpoint_lines(statuses: Sequence[EndpointStatus]) -> list[str]:
    """One line per task whose chain has a backup or a breaker not closed: `模型端点 chat：
    primary（gpt-4o-mini）熔断中（42 秒后重试） → deepseek（deepseek-chat）正常`."""
    by_task: dict[str, list[EndpointStatus]] = {}
    for status in statuses:
        by_task.setdefault(status.task, []).append(status)
    lines = []
    for task, chain in by_task.items():
        if len(chain) > 1 or any(s.label != "正常" for s in chain):
            steps = " → ".join(f"{s.name}（{s.model}）{s.label}" for s in chain)
            lines.append(f"模型端点 {task}：{steps}")
    return lines


def _tools_line(tools: ToolsConfig) -> str:
    if not tools.enabled or not tools.allowed:
        return "工具：关闭"
    open_to_all = [n for n in tools.allowed if n not in tools.admin_only]
    admin = [n for n in tools.allowed if n in tools.admin_only]
    text = f"工具：{'、'.join(open_to_all) or '无'}"
    text += f"；仅管理员：{'、'.join(admin)}" if admin else ""
    mcp = tools.mcp
    if mcp.allow:  # model-chosen MCP tools (see /pallas tool)
        who = {"everyone": "所有人", "admins": "管理员", "superusers": "超级用户"}[mcp.who]
        text += f"；MCP：{'、'.join(mcp.allow)}（{who}可用，每日 {mcp.daily_calls} 次）"
    return text


def _decision_line(record: dict[str, Any]) -> str:
    # Beijing time, as the console shows it (the server's own zone is often UTC)
    clock = datetime.fromtimestamp(float(record.get("time", 0)), CHINA).strftime("%H:%M:%S")
    outcome = str(record.get("outcome"))
    score = record.get("score")
    score_text = f" 分数{score}/{record.get('threshold')}" if score is not None else ""
    reason, stage = str(record.get("reason")), str(record.get("stage"))
    failed_call = outcome == "error" and stage == "llm"
    if outcome.startswith("cost_"):
        said = cost_reason_zh(reason)
    elif failed_call:  # 模型服务出错（5xx）
        said = llm_error_zh(reason)
    else:  # 闸门：无意义的刷屏 — the code stays beside it (a chat has no hover)
        said = reason_zh(stage, reason)
    label = "模型调用失败" if failed_call else outcome_zh(outcome)
    return (
        f"{clock} {record.get('user')}「{str(record.get('text', ''))[:12]}」"
        f"→ {label}（{stage}:{reason}{score_text}）" + (f"：{said}" if said else "")
    )


MIN_GROUP_NUMBER = 10_000  # QQ group numbers have 5+ digits; a smaller number is a count


def _target(cmd: AdminCtx) -> tuple[int, str, tuple[str, ...]]:
    """Which chat a `why` / `context` looks at: the group it was typed in; in a superuser's
    private chat the bot's private chats, or the group whose number is given
    (`/pallas why 123456 10`). Returns the group id (0 = private chats), its label and the
    arguments left."""
    if cmd.group_id:
        return cmd.group_id, "本群", cmd.args
    for i, arg in enumerate(cmd.args):
        if arg.isdigit() and int(arg) >= MIN_GROUP_NUMBER:
            rest = cmd.args[:i] + cmd.args[i + 1 :]
            return int(arg), f"群 {arg} ", rest
    return 0, "私聊", cmd.args


async def why(cmd: AdminCtx) -> str:
    """The latest routing decisions of this group (or, in private, of the private chats or of
    a group named by number), newest last."""
    group_id, label, args = _target(cmd)
    count = int(args[0]) if args and args[0].isdigit() else 5
    wanted = max(1, min(count, 20))
    records = await cmd.services.routing.recent_decisions(cmd.bot_id, group_id, limit=wanted)
    if not records:
        return f"最近没有记录到{label}的决策"
    lines = [_decision_line(r) for r in records[-wanted:]]
    head = "（时间为北京时间）" if cmd.group_id else f"（{label.strip()}，时间为北京时间）"
    return "\n".join([head, *lines])


async def context(cmd: AdminCtx) -> str:
    """The last REPLY turn: sections with sizes, trims, usage (the full request is in the CLI).
    In private: the private chats' last reply, or that of a group named by number."""
    group_id, label, _ = _target(cmd)
    snapshots = await cmd.services.snapshots.latest(group_id, bot_id=cmd.bot_id)
    if not snapshots:
        return f"{label}还没有回复记录"
    snap = snapshots[0]
    view = asdict(snap)
    return render_snapshot(view, with_request=False)[:3000]


COMMANDS: list[AppCommand] = [
    AdminCommand("status", "/pallas status", "记录条数、发言开关、今日用量与预算、限流", status),
    AdminCommand(
        "why", "/pallas why [条数] [群号]", "最近几条消息的路由决策和原因（私聊里可指定群号）", why
    ),
    AdminCommand(
        "context",
        "/pallas context [群号]",
        "上一轮回复的上下文分段与大小（私聊里可指定群号）",
        context,
    ),
]
