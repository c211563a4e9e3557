"""Which MCP servers the deployment runs: `config/mcp.toml` (operator-owned, read at start-up).

Each `[[servers]]` entry is one server, over stdio (a command the bot starts) or streamable
HTTP (a URL)::

    [[servers]]
    name = "weather"
    command = "uvx"
    args = ["mcp-weather"]
    env = ["WEATHER_API_KEY"]          # variable *names*: values come from the environment

    [[servers]]
    name = "search"
    url = "https://mcp.example.com/mcp"
    headers = { Authorization = "SEARCH_MCP_AUTH" }   # header → the variable holding it
    side_effects = ["bookmark"]        # tools that change something: an admin confirms each call

Secrets come only from the environment, as in `config/providers.toml`: a literal value for
`env` or a header is refused. A missing file means no servers; a broken one is logged and
ignored, so a typo never silences the bot. Which groups may use which tools is the group's
`[tools.mcp]` (`McpGroupConfig`); a group uses none by default.
"""

from __future__ import annotations

import logging
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

log = logging.getLogger("pallas.tools.mcp")

MCP_FILE = "mcp.toml"
ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]{0,127}$"
SERVER_NAME = r"^[A-Za-z0-9_-]{1,24}$"
_SECRET_KEYS = ("api_key", "token", "password", "secret")


def _is_env_name(value: str) -> bool:
    return re.fullmatch(ENV_NAME, value) is not None


class McpServerConfig(BaseModel):
    """One MCP server: stdio (`command`) or streamable HTTP (`url`), never both."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=SERVER_NAME)
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[str, ...] = ()  # names of environment variables handed to the process
    cwd: str = ""
    url: str = Field(default="", pattern=r"^(https?://.*)?$")
    headers: dict[str, str] = Field(default_factory=dict)  # header name → variable name
    side_effects: tuple[str, ...] = ()  # tool names that act on the world (need confirmation)
    start_timeout_s: float = Field(default=10.0, gt=0, le=120)
    tools_ttl_s: float = Field(default=600.0, ge=10, le=86_400)  # the cached tool list
    description_chars: int = Field(default=300, ge=20, le=2000)  # per tool, offered to models

    @model_validator(mode="before")
    @classmethod
    def _no_literal_secrets(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        for key in _SECRET_KEYS:
            if key in data:
                raise ValueError(
                    f"{key} in a config file is refused: secrets only come from the "
                    "environment; list the variable's name in env or headers"
                )
        env = data.get("env")
        if isinstance(env, Mapping):
            raise ValueError(
                'env takes variable names (env = ["WEATHER_API_KEY"]), not values: '
                "secrets only come from the environment"
            )
        for item in env or ():
            if isinstance(item, str) and not _is_env_name(item):
                raise ValueError(f"env entry {item!r} is not an environment variable name")
        for header, variable in dict(data.get("headers") or {}).items():
            if not isinstance(variable, str) or not _is_env_name(variable):
                raise ValueError(
                    f"header {header!r} must name the environment variable holding its value "
                    "(a literal header value is refused)"
                )
        return data

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if bool(self.command) == bool(self.url):
            raise ValueError(f"server {self.name!r}: set either command (stdio) or url (http)")
        if self.url and (self.args or self.env or self.cwd):
            raise ValueError(f"server {self.name!r}: args / env / cwd are for stdio servers")
        if self.command and self.headers:
            raise ValueError(f"server {self.name!r}: headers are for http servers")
        return self

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "stdio" if self.command else "http"


class McpConfig(BaseModel):
    """`config/mcp.toml`: the servers, and how a crashed one is restarted."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    servers: tuple[McpServerConfig, ...] = ()
    backoff_s: float = Field(default=2.0, ge=0.1, le=600)  # first wait after a crash
    backoff_max_s: float = Field(default=300.0, ge=1, le=3600)  # doubling stops here

    @model_validator(mode="after")
    def _unique_names(self) -> McpConfig:
        names = [s.name for s in self.servers]
        if len(set(names)) != len(names):
            raise ValueError("[[servers]] names must be unique")
        if "local" in names:
            raise ValueError("'local' is reserved for the bot's own tools (calc, dice, …)")
        return self

    def server(self, name: str) -> McpServerConfig | None:
        return next((s for s in self.servers if s.name == name), None)


def load_mcp(config_dir: Path) -> McpConfig:
    """`config/mcp.toml`, or no servers when it is missing or broken (logged)."""
    path = config_dir / MCP_FILE
    if not path.is_file():
        return McpConfig()
    try:
        return McpConfig.model_validate(tomllib.loads(path.read_text("utf-8")))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, ValidationError) as exc:
        log.error("%s ignored, no MCP servers: %s", path, exc)
        return McpConfig()


@dataclass(frozen=True, slots=True)
class Secrets:
    """A server's environment and headers with their values, read from the environment;
    `missing` names the variables that were not set."""

    env: dict[str, str]
    headers: dict[str, str]
    missing: tuple[str, ...]


def resolve_secrets(server: McpServerConfig, environ: Mapping[str, str] | None = None) -> Secrets:
    source = os.environ if environ is None else environ
    env = {name: source[name] for name in server.env if name in source}
    headers = {h: source[v] for h, v in server.headers.items() if v in source}
    wanted = (*server.env, *server.headers.values())
    missing = tuple(name for name in wanted if name not in source)
    return Secrets(env, headers, missing)
