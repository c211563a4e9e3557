"""Who may have which MCP tool offered on a turn: one decision, one reason."""

from __future__ import annotations

import pytest

from pallas.features.tools import McpGroupConfig, decide_tool, may_use_any, member_role

ALLOW = McpGroupConfig(allow=("weather",), daily_calls=10)
ADMINS = McpGroupConfig(allow=("weather",), who="admins")
PER_TOOL = McpGroupConfig.model_validate(
    {
        "allow": ["weather", "mail.send"],
        "who": "everyone",
        "tool": {
            "weather.radar": {"who": "superusers"},
            "mail.send": {"side_effects": True},
        },
    }
)


@pytest.mark.parametrize(
    ("config", "server", "tool", "role", "enabled", "side", "used", "allowed", "reason"),
    [
        (McpGroupConfig(), "weather", "forecast", "superuser", True, (), 0, False, "not_allowed"),
        (ALLOW, "weather", "forecast", "member", True, (), 0, True, "ok"),
        (ALLOW, "weather", "forecast", "member", False, (), 0, False, "tools_disabled"),
        (ALLOW, "search", "web", "member", True, (), 0, False, "not_allowed"),
        (ALLOW, "weather", "forecast", "member", True, (), 10, False, "budget"),
        (ALLOW, "weather", "forecast", "member", True, (), 9, True, "ok"),
        (
            ALLOW,
            "weather",
            "forecast",
            "member",
            True,
            ("forecast",),
            0,
            True,
            "needs_confirmation",
        ),
        (ALLOW, "weather", "forecast", "member", True, ("forecast",), 10, False, "budget"),
        (ADMINS, "weather", "forecast", "member", True, (), 0, False, "audience"),
        (ADMINS, "weather", "forecast", "admin", True, (), 0, True, "ok"),
        (ADMINS, "weather", "forecast", "superuser", True, (), 0, True, "ok"),
        (PER_TOOL, "weather", "radar", "admin", True, (), 0, False, "audience"),
        (PER_TOOL, "weather", "radar", "superuser", True, (), 0, True, "ok"),
        (PER_TOOL, "weather", "forecast", "member", True, (), 0, True, "ok"),
        (PER_TOOL, "mail", "send", "superuser", True, (), 0, True, "needs_confirmation"),
        (PER_TOOL, "mail", "read", "superuser", True, (), 0, False, "not_allowed"),
    ],
)
def test_decide_tool(
    config: McpGroupConfig,
    server: str,
    tool: str,
    role: str,
    enabled: bool,
    side: tuple[str, ...],
    used: int,
    allowed: bool,
    reason: str,
) -> None:
    decision = decide_tool(
        config, server, tool, role=role, tools_enabled=enabled,  # type: ignore[arg-type]
        server_side_effects=side, calls_today=used,
    )  # fmt: skip
    assert (decision.allowed, decision.reason) == (allowed, reason)
    assert decision.confirm is (reason == "needs_confirmation")


@pytest.mark.parametrize(
    ("user", "group_admin", "expected"),
    [(1, False, "member"), (1, True, "admin"), (2, False, "admin"), (3, False, "superuser"),
     (3, True, "superuser")],
)  # fmt: skip
def test_member_role(user: int, group_admin: bool, expected: str) -> None:
    role = member_role(user, is_group_admin=group_admin, admins={2}, superusers={3})
    assert role == expected


@pytest.mark.parametrize(
    ("config", "role", "expected"),
    [
        (McpGroupConfig(), "superuser", False),  # nothing allowed: no server is started
        (ALLOW, "member", True),
        (ADMINS, "member", False),
        (ADMINS, "admin", True),
        (McpGroupConfig.model_validate(
            {"allow": ["w"], "who": "superusers", "tool": {"w.f": {"who": "admins"}}}
        ), "admin", True),
    ],
)  # fmt: skip
def test_may_use_any(config: McpGroupConfig, role: str, expected: bool) -> None:
    assert may_use_any(config, role) is expected  # type: ignore[arg-type]
