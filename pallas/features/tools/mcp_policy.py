"""Which MCP tools a group offers the model, and to whom: `[tools.mcp]` and pure decisions.

A group uses no MCP tool until its file allows one::

    [tools.mcp]
    allow = ["weather"]          # a server's every tool, or one tool as "server.tool";
                                 # "local": the bot's own calc, dice, … (model_local.py)
    who = "everyone"             # everyone | admins | superusers
    timeout_s = 8                # one call
    max_result_chars = 1200      # what a result may put into the prompt
    daily_calls = 200            # the group's tool calls a day (0: none)

    [tools.mcp.tool."weather.forecast"]
    timeout_s = 15               # this tool's own timeout, cap, audience
    side_effects = true          # acts on the world: held until an admin confirms it

`decide_tool` says, with a reason, whether one tool may be offered on this turn; the turn
offers the model only the tools it allows, so a refused tool's schema is never sent.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Audience = Literal["everyone", "admins", "superusers"]
Role = Literal["member", "admin", "superuser"]
_RANK: dict[str, int] = {"member": 0, "everyone": 0, "admin": 1, "admins": 1}
_RANK.update({"superuser": 2, "superusers": 2})
MAX_ROUNDS = 2


class McpToolOverride(BaseModel):
    """`[tools.mcp.tool."server.tool"]`: one tool's own settings."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    who: Audience | None = None
    timeout_s: float | None = Field(default=None, gt=0, le=120)
    max_result_chars: int | None = Field(default=None, ge=50, le=20_000)
    side_effects: bool = False


class McpGroupConfig(BaseModel):
    """`[tools.mcp]` in a group file (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    allow: tuple[str, ...] = ()
    who: Audience = "everyone"
    timeout_s: float = Field(default=8.0, gt=0, le=120)
    max_result_chars: int = Field(default=1200, ge=50, le=20_000)
    daily_calls: int = Field(default=200, ge=0, le=100_000)
    rounds: int = Field(default=MAX_ROUNDS, ge=1, le=MAX_ROUNDS)  # model → tools → model
    turn_deadline_s: float = Field(default=20.0, gt=0, le=120)  # every tool of one turn
    tool: dict[str, McpToolOverride] = Field(default_factory=dict)

    @field_validator("allow")
    @classmethod
    def _names(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        bad = [n for n in names if not n or n.count(".") > 1 or n.startswith(".")]
        if bad:
            raise ValueError(f"allow entries are 'server' or 'server.tool', not {bad}")
        return names

    @field_validator("tool")
    @classmethod
    def _qualified(cls, tools: dict[str, McpToolOverride]) -> dict[str, McpToolOverride]:
        bad = [n for n in tools if n.count(".") != 1]
        if bad:
            raise ValueError(f"[tools.mcp.tool] keys are 'server.tool', not {bad}")
        return tools

    def allows(self, server: str, tool: str) -> bool:
        return server in self.allow or f"{server}.{tool}" in self.allow

    def override(self, server: str, tool: str) -> McpToolOverride:
        return self.tool.get(f"{server}.{tool}") or McpToolOverride()

    def timeout_for(self, server: str, tool: str) -> float:
        return self.override(server, tool).timeout_s or self.timeout_s

    def cap_for(self, server: str, tool: str) -> int:
        return self.override(server, tool).max_result_chars or self.max_result_chars


@dataclass(frozen=True, slots=True)
class ToolPermission:
    allowed: bool
    reason: str  # ok | needs_confirmation | tools_disabled | not_allowed | audience | budget
    confirm: bool = False  # side effects: the call is held until an admin confirms it


def member_role(
    user_id: int, *, is_group_admin: bool, admins: Collection[int], superusers: Collection[int]
) -> Role:
    """Superusers (SUPERUSERS) > admins (owner / admin role, the group's `admins`) > members."""
    if user_id in superusers:
        return "superuser"
    if is_group_admin or user_id in admins:
        return "admin"
    return "member"


def may_use_any(config: McpGroupConfig, role: Role) -> bool:
    """Whether some allowed tool could be offered to this role at all (else no server is
    started or listed for the turn)."""
    if not config.allow:
        return False
    audiences = [config.who, *(o.who for o in config.tool.values() if o.who is not None)]
    return any(_RANK[role] >= _RANK[who] for who in audiences)


def decide_tool(
    config: McpGroupConfig,
    server: str,
    tool: str,
    *,
    role: Role,
    tools_enabled: bool,
    server_side_effects: Collection[str],
    calls_today: int,
) -> ToolPermission:
    """Whether `server.tool` may be offered to the model on this member's turn."""
    if not tools_enabled:
        return ToolPermission(False, "tools_disabled")
    if not config.allows(server, tool):
        return ToolPermission(False, "not_allowed")
    override = config.override(server, tool)
    if _RANK[role] < _RANK[override.who or config.who]:
        return ToolPermission(False, "audience")
    if calls_today >= config.daily_calls:
        return ToolPermission(False, "budget")
    if override.side_effects or tool in server_side_effects:
        return ToolPermission(True, "needs_confirmation", confirm=True)
    return ToolPermission(True, "ok")
