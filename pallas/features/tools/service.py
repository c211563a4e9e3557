"""Tool turns: pick a local tool by rules before routing, run it when routing says TOOL.

`plan_tool` is pure: the tool a message asks for (if any) and whether this member may use it
here. Routing turns a permitted request into a TOOL turn; the tool then runs locally (no
network, bounded by a timeout) and its result reaches the model as 【工具上下文】, so the reply
states the true dice roll / sum / date instead of a made-up one. A request that is not
permitted never runs the tool: the model is told the feature is closed here and says so.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any

from pallas.context.chat_prompt import ToolResult
from pallas.core.turn import TurnInput
from pallas.features.tools.base import GroupActivityReader, ToolCall, ToolEnv, ToolOutput
from pallas.features.tools.config import ToolsConfig
from pallas.features.tools.registry import ToolRegistry
from pallas.routing.text_signals import clean_text
from pallas.routing.triggers import without_call

log = logging.getLogger("pallas.tools")

NOT_PERMITTED_RULE = (
    "对方想用的「{label}」在本群没有开放（或只有管理员能用）：简短如实告诉对方，"
    "不要自己编一个结果。"
)
NOT_PERMITTED_RESULT = "本群没有开放，没有运行"
TOOL_RESULT_RULE = "结果以这里为准，原样说出数字和选项，不要改动，也不要重新计算。"
TOOL_FAILED_RULE = "这次没有得到结果（原因见下）：简短如实说明，不要自己编一个结果。"


@dataclass(frozen=True, slots=True)
class ToolPlan:
    call: ToolCall | None
    label: str = ""
    permitted: bool = False
    reason: str = "none"  # none | disabled | selected | not_allowed | admin_only

    @property
    def requested(self) -> bool:
        return self.call is not None

    def to_log_dict(self) -> dict[str, Any]:
        if self.call is None:
            return {"reason": self.reason}
        return {
            "tool": self.call.name,
            "args": dict(self.call.args),
            "matched": self.call.matched,
            "permitted": self.permitted,
            "reason": self.reason,
        }


NO_TOOL = ToolPlan(None)

MAX_TOOL_TEXT = 300  # longer messages are conversation, not a tool request


def tool_request_text(turn: TurnInput, aliases: Iterable[str]) -> str:
    """What the member asked, without @s and a vocative name ("牛牛，掷个骰子" → "掷个骰子"),
    line by line as retrieval reads it (`routing.triggers.without_call`)."""
    text = clean_text(turn.text, strip_mentions=bool(turn.mentions or turn.mentions_all)).strip()
    if not text or len(text) > MAX_TOOL_TEXT:
        return ""
    return without_call(text, aliases).strip()


def plan_turn_tool(
    turn: TurnInput,
    config: ToolsConfig,
    registry: ToolRegistry,
    aliases: Iterable[str],
    *,
    admins: Collection[int],
) -> ToolPlan:
    """`plan_tool` for a group turn: owner / admin roles and the ids in `admins` are admins."""
    text = tool_request_text(turn, aliases)
    if not text:
        return NO_TOOL
    is_admin = turn.speaker.is_admin or turn.user_id in admins
    return plan_tool(text, config, registry, is_admin=is_admin)


def plan_tool(
    text: str, config: ToolsConfig, registry: ToolRegistry, *, is_admin: bool
) -> ToolPlan:
    """The tool `text` asks for and whether it may run. Disallowed tools are still detected,
    so the member gets an honest "not here" instead of an invented result."""
    if not config.enabled:
        return ToolPlan(None, reason="disabled")
    call = registry.select(text, registry.names)
    if call is None:
        return NO_TOOL
    tool = registry.get(call.name)
    label = tool.label if tool is not None else call.name
    if config.permits(call.name, is_admin=is_admin):
        return ToolPlan(call, label, True, "selected")
    reason = "admin_only" if config.permits(call.name, is_admin=True) else "not_allowed"
    return ToolPlan(call, label, False, reason)


@dataclass(frozen=True, slots=True)
class ToolTurnContext:
    """What the prompt gets for this turn, and what the snapshot keeps."""

    results: tuple[ToolResult, ...] = ()
    rules: tuple[str, ...] = ()
    trace: dict[str, Any] | None = None


async def run_planned_tool(
    plan: ToolPlan,
    registry: ToolRegistry,
    *,
    tool_turn: bool,
    turn: TurnInput,
    now: float,
    rng: random.Random,
    activity: GroupActivityReader | None,
    timeout_s: float,
) -> ToolTurnContext:
    """On a TOOL turn run the tool; for a refused request explain it is closed; nothing for a
    turn without a tool, or one where routing chose something else (e.g. a QUOTE)."""
    if plan.call is None or (plan.permitted and not tool_turn):
        return ToolTurnContext()
    if not plan.permitted:
        label = plan.label or plan.call.name
        refused = ToolResult(label, NOT_PERMITTED_RESULT, source_token=f"tool:{plan.call.name}")
        rule = NOT_PERMITTED_RULE.format(label=label)
        return ToolTurnContext(results=(refused,), rules=(rule,), trace=plan.to_log_dict())
    env = ToolEnv(
        bot_id=turn.bot_id,
        group_id=turn.group_id,
        user_id=turn.user_id,
        now=now,
        rng=rng,
        activity=activity,
    )
    output: ToolOutput = await registry.run(plan.call, env, timeout_seconds=timeout_s)
    trace = {
        **plan.to_log_dict(),
        "ok": output.ok,
        "result": output.content,
        "why": output.reason,
    }
    result = ToolResult(output.label, output.content, source_token=f"tool:{output.name}")
    rule = TOOL_RESULT_RULE if output.ok else TOOL_FAILED_RULE
    log.info("group %s: tool %s", turn.group_id, trace)
    return ToolTurnContext(results=(result,), rules=(rule,), trace=trace)
