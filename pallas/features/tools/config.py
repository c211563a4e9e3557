"""Per-group tool settings: which local tools may run, and which only for admins."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from pallas.features.tools.mcp_policy import McpGroupConfig

ALL_TOOLS: tuple[str, ...] = ("calc", "dice", "choose", "countdown", "activity")


class ToolsConfig(BaseModel):
    """`[tools]` in a group file. A request for a tool not allowed here gets a plain reply
    that says so; the tool itself never runs."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True  # false: no local tools
    allowed: tuple[str, ...] = ALL_TOOLS  # tool names the group may use
    admin_only: tuple[str, ...] = ()  # owner / admins / configured admins / superusers only
    timeout_s: float = Field(default=2.0, gt=0, le=10)  # a tool taking longer is dropped
    mcp: McpGroupConfig = Field(default_factory=McpGroupConfig)  # model-chosen MCP tools

    @field_validator("allowed", "admin_only")
    @classmethod
    def _known_tools(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        unknown = sorted(set(names) - set(ALL_TOOLS))
        if unknown:
            raise ValueError(f"unknown tools {unknown}; known: {list(ALL_TOOLS)}")
        return names

    def permits(self, name: str, *, is_admin: bool) -> bool:
        if not self.enabled or name not in self.allowed:
            return False
        return is_admin or name not in self.admin_only
