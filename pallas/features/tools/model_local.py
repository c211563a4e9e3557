"""The local rule tools offered to the model like MCP tools (the reserved server `local`).

With `[tools.mcp] allow = ["local"]` (or `"local.calc"`, …) the model may call calc, dice,
choose, countdown and activity itself, as `local__calc` and so on, each with one argument:
the request in the words a member would use ("算一下 12*34+5"). The request goes through the
tool's own rule (`Tool.match`), so the model gets exactly what a member asking in the group
would — and a request the rule does not understand runs nothing. `[tools] allowed` /
`admin_only` still apply: a tool the group closed is never offered.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from pallas.features.tools.base import ToolEnv
from pallas.features.tools.mcp_client import McpCallResult, McpTool
from pallas.features.tools.registry import ToolRegistry

LOCAL = "local"
DESCRIPTIONS: dict[str, str] = {
    "calc": "精确计算算术式。request 写成「算一下 12*34+5」这样",
    "dice": "掷骰子或抛硬币，结果随机且真实。request 如「掷 2d6」「掷个骰子」「抛硬币」",
    "choose": "从几个选项里随机选一个。request 如「帮我选：火锅还是烧烤」",
    "countdown": "按中国时间算日期。request 如「离12月25日还有几天」「100天后是几号」",
    "activity": "本群今天的发言统计。request 如「今天谁最活跃」「群里今天聊了多少」",
}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"request": {"type": "string", "description": "群友会怎么说这个请求"}},
    "required": ["request"],
}


def local_tools(registry: ToolRegistry) -> tuple[McpTool, ...]:
    return tuple(
        McpTool(LOCAL, name, DESCRIPTIONS.get(name, name), SCHEMA) for name in registry.names
    )


async def run_local(
    registry: ToolRegistry, name: str, args: Mapping[str, Any], env: ToolEnv, timeout_s: float
) -> McpCallResult:
    """Run the named local tool on the model's request; never raises."""
    started = time.perf_counter()
    request = args.get("request")
    tool = registry.get(name)
    call = tool.match(request) if tool is not None and isinstance(request, str) else None
    if call is None:
        return McpCallResult(False, "", "not_understood")
    output = await registry.run(call, env, timeout_seconds=timeout_s)
    ms = round((time.perf_counter() - started) * 1000, 1)
    if not output.ok:
        return McpCallResult(False, output.content, output.reason, ms)
    return McpCallResult(True, f"{output.label}：{output.content}", "ok", ms)
