"""Local tools for TOOL turns (dice, a choice, arithmetic, date counting, today's group
activity): `plan_turn_tool` picks one by rule when a member clearly asks for it (no LLM),
`run_planned_tool` runs it (local, never raises) and the result goes into the prompt's
【工具上下文】. `default_registry` lists the tools in the order they win; `[tools]` decides
which ones a group allows.

MCP servers (`config/mcp.toml`, `McpHub`) add tools the model chooses itself on addressed
turns: `[tools.mcp]` decides which a group offers and to whom (`decide_tool`); `mcp_wire`
turns them into OpenAI `tools` schemas and their results into guarded prompt text.
"""

from pallas.features.tools.base import (
    GroupActivityReader,  # the message log implements it
    ToolEnv,
)
from pallas.features.tools.config import ToolsConfig
from pallas.features.tools.mcp_admin import COMMANDS as TOOL_COMMANDS
from pallas.features.tools.mcp_admin import STATE_ZH as MCP_STATE_ZH
from pallas.features.tools.mcp_admin import ToolAdmin
from pallas.features.tools.mcp_client import (
    McpCallResult,
    McpHub,
    McpServer,
    McpTool,
    ServerState,
    ServerStatus,
)
from pallas.features.tools.mcp_config import McpConfig, McpServerConfig, load_mcp
from pallas.features.tools.mcp_pending import PendingCall, PendingCalls
from pallas.features.tools.mcp_policy import (
    McpGroupConfig,
    Role,
    ToolPermission,
    decide_tool,
    may_use_any,
    member_role,
)
from pallas.features.tools.mcp_wire import (
    CleanResult,
    clean_result,
    model_name,
    openai_tool,
    parse_arguments,
    split_name,
)
from pallas.features.tools.model_local import LOCAL, local_tools, run_local
from pallas.features.tools.registry import ToolRegistry, default_registry
from pallas.features.tools.service import (
    NO_TOOL,
    ToolPlan,
    ToolTurnContext,
    plan_turn_tool,
    run_planned_tool,
)

__all__ = [
    "LOCAL",
    "MCP_STATE_ZH",
    "NO_TOOL",
    "TOOL_COMMANDS",
    "CleanResult",
    "GroupActivityReader",
    "McpCallResult",
    "McpConfig",
    "McpGroupConfig",
    "McpHub",
    "McpServer",
    "McpServerConfig",
    "McpTool",
    "PendingCall",
    "PendingCalls",
    "Role",
    "ServerState",
    "ServerStatus",
    "ToolAdmin",
    "ToolEnv",
    "ToolPermission",
    "ToolPlan",
    "ToolRegistry",
    "ToolTurnContext",
    "ToolsConfig",
    "clean_result",
    "decide_tool",
    "default_registry",
    "load_mcp",
    "local_tools",
    "may_use_any",
    "member_role",
    "model_name",
    "openai_tool",
    "parse_arguments",
    "plan_turn_tool",
    "run_local",
    "run_planned_tool",
    "split_name",
]
