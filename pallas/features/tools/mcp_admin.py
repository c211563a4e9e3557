"""`/pallas tool …`: the MCP servers of the deployment and the side-effect calls waiting here.

    /pallas tool                   servers (state, tools) and this group's waiting calls
    /pallas tool confirm <代码>     run a waiting side-effect call now
    /pallas tool deny <代码>        drop it

A confirmed call runs with the group's `[tools.mcp]` timeout and result cap (it was counted
against the daily budget when the model asked for it); its result, guarded like any tool
result and cut to 300 characters, is the command's answer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeAlias

from pallas.core.admin_commands import AdminCommand, AdminContext
from pallas.core.clock import Clock
from pallas.features.tools.mcp_client import McpHub
from pallas.features.tools.mcp_pending import PendingCalls
from pallas.features.tools.mcp_policy import McpGroupConfig
from pallas.features.tools.mcp_wire import clean_result

log = logging.getLogger("pallas.tools")

STATE_ZH = {"idle": "未启动", "starting": "启动中", "ready": "正常",
            "resting": "故障（稍后重试）", "closed": "已关闭"}  # fmt: skip
USAGE = "用法：\n/pallas tool\n/pallas tool confirm <代码>\n/pallas tool deny <代码>"
SHOWN_CHARS = 300


@dataclass(frozen=True, slots=True)
class ToolAdmin:
    hub: McpHub | None
    pending: PendingCalls
    clock: Clock
    config: Callable[[int], McpGroupConfig]  # a group's `[tools.mcp]`


Ctx: TypeAlias = AdminContext[ToolAdmin]


async def tool_command(cmd: Ctx) -> str:
    args = cmd.args
    if not args:
        return await _overview(cmd)
    if len(args) == 2 and args[0] in ("confirm", "deny"):
        return await (_confirm(cmd, args[1]) if args[0] == "confirm" else _deny(cmd, args[1]))
    return USAGE


async def _overview(cmd: Ctx) -> str:
    hub = cmd.services.hub
    if hub is None or not hub.servers:
        return "没有配置 MCP 服务（config/mcp.toml）"
    lines = ["MCP 服务："]
    for status in hub.statuses():
        line = f"- {status.name}（{status.transport}）：{STATE_ZH.get(status.state, status.state)}"
        if status.tools:
            line += f"，工具：{'、'.join(status.tools)}"
        lines.append(line)
    allowed = cmd.services.config(cmd.group_id).allow
    lines.append(f"本群允许：{'、'.join(allowed) if allowed else '无'}")
    waiting = await cmd.services.pending.waiting(cmd.bot_id, cmd.group_id)
    for call in waiting:
        lines.append(f"待确认 {call.code}：{call.name} {call.args}（{call.user_id} 请求）"[:200])
    return "\n".join(lines)


async def _confirm(cmd: Ctx, code: str) -> str:
    services = cmd.services
    call = await services.pending.decide(cmd.bot_id, cmd.group_id, code)
    if call is None:
        return f"没有待确认的 {code}（可能已过期或已处理）"
    if services.hub is None:
        return "没有配置 MCP 服务"
    mcp = services.config(cmd.group_id)
    timeout = mcp.timeout_for(call.server, call.tool)
    outcome = await services.hub.call(call.server, call.tool, call.args, timeout)
    log.info("group %s: %s confirmed by %s: %s", cmd.group_id, call.name, cmd.user_id,
             outcome.reason)  # fmt: skip
    if not outcome.ok:
        log.warning("group %s: confirmed tool %s failed: %s", cmd.group_id, call.name,
                    outcome.reason)  # fmt: skip
        return f"{call.name} 执行失败（{outcome.reason}）"
    clean = clean_result(outcome.text, min(SHOWN_CHARS, mcp.cap_for(call.server, call.tool)))
    return f"已执行 {call.name}：{clean.text or '（无输出）'}"


async def _deny(cmd: Ctx, code: str) -> str:
    call = await cmd.services.pending.decide(cmd.bot_id, cmd.group_id, code)
    if call is None:
        return f"没有待确认的 {code}（可能已过期或已处理）"
    log.info("group %s: %s denied by %s", cmd.group_id, call.name, cmd.user_id)
    return f"已取消 {call.name}"


COMMANDS: list[AdminCommand[ToolAdmin]] = [
    AdminCommand(
        "tool",
        "/pallas tool [confirm|deny <代码>]",
        "MCP 服务状态；确认或取消有副作用的工具调用",
        tool_command,
    ),
]
