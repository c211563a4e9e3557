"""`pallas mcp list`: the MCP servers of `config/mcp.toml`, their state and their tools.

Each server is started (as the bot would on first use), listed and stopped again, so the
command shows whether a server actually runs with this environment — a missing variable, a
wrong command or an unreachable URL is named in its line.
"""

from __future__ import annotations

import argparse

from pallas.core.settings import PallasSettings
from pallas.features.tools import MCP_STATE_ZH as STATE_ZH
from pallas.features.tools import McpHub, ServerStatus, load_mcp


def render_status(status: ServerStatus, descriptions: dict[str, str]) -> list[str]:
    line = f"{status.name} [{status.transport}] {STATE_ZH.get(status.state, status.state)}"
    if status.error:
        line += f" — {status.error}"
    if status.missing_env:
        line += f" (unset: {', '.join(status.missing_env)})"
    out = [line]
    out.extend(f"  - {name}: {descriptions.get(name, '')}".rstrip(": ") for name in status.tools)
    return out


async def _mcp_list(args: argparse.Namespace) -> int:
    settings = PallasSettings.from_env()
    config = load_mcp(settings.pallas_config_dir)
    if not config.servers:
        print(f"no MCP servers in {settings.pallas_config_dir / 'mcp.toml'}")
        return 0
    hub = McpHub(config)
    failed = 0
    try:
        for server in hub.servers.values():
            tools = await server.tools() if not args.no_start else ()
            descriptions = {t.name: " ".join(t.description.split())[:80] for t in tools}
            status = server.status()
            failed += status.state != "ready" and not args.no_start
            print("\n".join(render_status(status, descriptions)))
    finally:
        await hub.close()
    return 1 if failed else 0


def register_mcp(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mcp = sub.add_parser("mcp", help="MCP servers (config/mcp.toml)")
    mcp_sub = mcp.add_subparsers(dest="mcp_command", required=True)
    show = mcp_sub.add_parser("list", help="start each server once: state and tools")
    show.add_argument("--no-start", action="store_true", help="only show the configuration")
    show.set_defaults(handler=_mcp_list)
