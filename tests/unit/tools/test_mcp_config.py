"""config/mcp.toml: what an operator may write, and what is refused (secrets, mixed transports)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from pallas.features.tools import McpConfig, McpGroupConfig, ToolsConfig, load_mcp
from pallas.features.tools.mcp_config import resolve_secrets

STDIO = {"name": "weather", "command": "uvx", "args": ["mcp-weather"], "env": ["WEATHER_KEY"]}
HTTP = {"name": "search", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "S"}}


@pytest.mark.parametrize(
    ("server", "error"),
    [
        ({**STDIO, "api_key": "sk-1"}, "api_key in a config file is refused"),
        ({**STDIO, "env": {"WEATHER_KEY": "abc"}}, "env takes variable names"),
        ({**STDIO, "env": ["NOT A NAME"]}, "is not an environment variable name"),
        ({**HTTP, "headers": {"Authorization": "Bearer abc123"}}, "a literal header value"),
        ({**HTTP, "token": "x"}, "token in a config file is refused"),
        ({"name": "both", "command": "x", "url": "http://h/mcp"}, "either command"),
        ({"name": "none"}, "either command"),
        ({**HTTP, "args": ["--x"]}, "args / env / cwd are for stdio"),
        ({**STDIO, "headers": {"A": "B"}}, "headers are for http"),
        ({**STDIO, "name": "has space"}, "String should match pattern"),
        ({**HTTP, "url": "file:///etc/passwd"}, "String should match pattern"),
    ],
)
def test_refused_server_entries(server: dict[str, Any], error: str) -> None:
    with pytest.raises(ValidationError, match=error):
        McpConfig.model_validate({"servers": [server]})


def test_valid_servers_and_their_transports() -> None:
    config = McpConfig.model_validate({"servers": [STDIO, HTTP]})
    assert [s.transport for s in config.servers] == ["stdio", "http"]
    with pytest.raises(ValidationError, match="unique"):
        McpConfig.model_validate({"servers": [STDIO, STDIO]})
    with pytest.raises(ValidationError, match="'local' is reserved"):
        McpConfig.model_validate({"servers": [{**STDIO, "name": "local"}]})


def test_secrets_come_from_the_environment_and_unset_ones_are_named() -> None:
    config = McpConfig.model_validate({"servers": [STDIO, HTTP]})
    stdio = resolve_secrets(config.servers[0], {"WEATHER_KEY": "k", "OTHER": "x"})
    assert stdio.env == {"WEATHER_KEY": "k"} and stdio.missing == ()  # nothing else leaks
    http = resolve_secrets(config.servers[1], {})
    assert http.headers == {} and http.missing == ("S",)


def test_a_missing_or_broken_file_means_no_servers(tmp_path: Path) -> None:
    assert load_mcp(tmp_path).servers == ()
    (tmp_path / "mcp.toml").write_text('[[servers]]\nname = "x"\napi_key = "sk"\n', "utf-8")
    assert load_mcp(tmp_path).servers == ()


@pytest.mark.parametrize(
    ("toml", "error"),
    [
        ('allow = ["a.b.c"]', "allow entries"),
        ('who = "owners"', "Input should be"),
        ("rounds = 3", "less than or equal to 2"),
        ("[tool.weather]\ntimeout_s = 3", "server.tool"),
        ('[tool."w.t"]\nside_effect = true', "Extra inputs"),
        ("max_result_chars = 10", "greater than or equal to 50"),
    ],
)
def test_group_tools_mcp_validation(toml: str, error: str) -> None:
    with pytest.raises(ValidationError, match=error):
        McpGroupConfig.model_validate(tomllib.loads(toml))


def test_a_group_uses_no_mcp_tool_by_default() -> None:
    mcp = ToolsConfig().mcp
    assert mcp.allow == () and not mcp.allows("weather", "forecast")
    group = ToolsConfig.model_validate(
        {"mcp": {"allow": ["weather", "search.web"], "tool": {"weather.f": {"timeout_s": 2}}}}
    ).mcp
    assert group.allows("weather", "anything") and group.allows("search", "web")
    assert not group.allows("search", "bookmark")
    assert group.timeout_for("weather", "f") == 2 and group.timeout_for("weather", "g") == 8
