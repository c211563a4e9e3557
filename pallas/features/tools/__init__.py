"""Local tools for TOOL turns (dice, a choice, arithmetic, date counting, today's group
activity): `plan_turn_tool` picks one by rule when a member clearly asks for it (no LLM),
`run_planned_tool` runs it (local, never raises) and the result goes into the prompt's
【工具上下文】. `default_registry` lists the tools in the order they win; `[tools]` decides
which ones a group allows.
"""

from pallas.features.tools.base import GroupActivityReader  # the message log implements it
from pallas.features.tools.config import ToolsConfig
from pallas.features.tools.registry import ToolRegistry, default_registry
from pallas.features.tools.service import (
    NO_TOOL,
    ToolPlan,
    ToolTurnContext,
    plan_turn_tool,
    run_planned_tool,
)

__all__ = [
    "NO_TOOL",
    "GroupActivityReader",
    "ToolPlan",
    "ToolRegistry",
    "ToolTurnContext",
    "ToolsConfig",
    "default_registry",
    "plan_turn_tool",
    "run_planned_tool",
]
