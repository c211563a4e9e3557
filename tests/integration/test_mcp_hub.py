"""The MCP client against a real MCP server (tests/harness/mcp_weather.py, stdio): started on
first use, a crash rests the server for its backoff, then it is started again."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

from pallas.features.tools import McpConfig, McpHub, ServerState
from tests.harness.bot_process import REPO


def _hub(
    tmp_path: Path,
    clock: list[float],
    delay_s: str = "0",
    *,
    learning: bool = False,
    **server: object,
) -> McpHub:
    config = McpConfig.model_validate(
        {
            "backoff_s": 30,
            "servers": [
                {
                    "name": "weather",
                    "command": sys.executable,
                    "args": ["-m", "tests.harness.mcp_weather"],
                    "cwd": str(REPO),
                    "env": ["MCP_PID_FILE", "MCP_WEATHER_DELAY_S", "MCP_LEARNING"],
                    **server,
                }
            ],
        }
    )
    environ = {"MCP_PID_FILE": str(tmp_path / "pid"), "MCP_WEATHER_DELAY_S": delay_s,
               "MCP_LEARNING": "1" if learning else "0"}  # fmt: skip
    return McpHub(config, now=lambda: clock[0], environ=environ)


async def test_started_lazily_restarted_after_a_crash_once_its_backoff_is_over(
    tmp_path: Path,
) -> None:
    clock = [1000.0]
    hub = _hub(tmp_path, clock)
    server = hub.servers["weather"]
    try:
        assert server.state is ServerState.IDLE and not (tmp_path / "pid").exists()
        tools = await hub.tools(("weather", "unknown"))
        assert [t.name for t in tools] == ["weather", "hostile"]
        ok = await hub.call("weather", "weather", {"city": "北京"}, 5)
        assert ok.ok and ok.text == "北京明天：晴转多云，3~12°C，北风3级"
        bad = await hub.call("weather", "weather", {"town": 1}, 5)
        assert (bad.ok, bad.reason) == (False, "tool_error")  # the server stays up

        os.kill(int((tmp_path / "pid").read_text()), signal.SIGKILL)
        dead = await hub.call("weather", "weather", {"city": "北京"}, 5)
        assert (dead.ok, dead.reason) == (False, "crashed")
        assert server.state is ServerState.RESTING and server.failures == 1
        resting = await hub.call("weather", "weather", {"city": "北京"}, 5)
        assert resting.reason == "unavailable" and await hub.tools(("weather",)) == ()

        clock[0] += 31  # the backoff is over: the next use starts it again
        again = await hub.call("weather", "weather", {"city": "上海"}, 5)
        assert again.ok and again.text.startswith("上海明天")
        assert server.state is ServerState.READY and server.failures == 0
    finally:
        await hub.close()
    assert server.state is ServerState.CLOSED


async def test_a_server_that_cannot_start_rests_with_a_doubling_backoff(tmp_path: Path) -> None:
    clock = [0.0]
    hub = _hub(tmp_path, clock, command="/nonexistent/mcp-server", start_timeout_s=5)
    server = hub.servers["weather"]
    try:
        assert await hub.tools(("weather",)) == ()
        first_error = server.error
        assert server.state is ServerState.RESTING and first_error
        clock[0] += 31
        assert await hub.tools(("weather",)) == ()
        assert server.failures == 2
        clock[0] += 31  # the second wait is 60 s
        failed = await hub.call("weather", "weather", {}, 5)
        assert failed.reason == "unavailable" and server.failures == 2
        status = hub.statuses()[0]
        assert (status.name, status.transport, status.state) == ("weather", "stdio", "resting")
    finally:
        await hub.close()


async def test_a_slow_call_times_out_and_the_server_stays_up(tmp_path: Path) -> None:
    clock = [0.0]
    hub = _hub(tmp_path, clock, delay_s="2")  # the weather tool waits 2 s
    server = hub.servers["weather"]
    try:
        slow = await hub.call("weather", "weather", {"city": "北京"}, 0.5)
        assert (slow.ok, slow.reason) == (False, "timeout")
        assert server.state is ServerState.READY and server.failures == 0
        quick = await hub.call("weather", "hostile", {}, 5)
        assert quick.ok and len(quick.text) > 1_000_000  # the hub passes it on; the turn caps
    finally:
        await hub.close()


async def test_the_tool_list_is_cached_and_refreshed_after_its_ttl_or_a_change_notice(
    tmp_path: Path,
) -> None:
    clock = [1000.0]
    hub = _hub(tmp_path, clock, learning=True, tools_ttl_s=600)
    try:
        assert "learn" in [t.name for t in await hub.tools(("weather",))]
        added = await hub.call("weather", "learn", {"name": "quiet", "notify": False}, 5)
        assert added.ok, added
        assert "quiet" not in [t.name for t in await hub.tools(("weather",))], "cached"
        clock[0] += 601  # the list's time to live is over
        assert "quiet" in [t.name for t in await hub.tools(("weather",))]

        added = await hub.call("weather", "learn", {"name": "loud", "notify": True}, 5)
        assert added.ok, added
        for _ in range(50):  # the notice arrives on the connection's own reader
            if "loud" in [t.name for t in await hub.tools(("weather",))]:
                break
            await asyncio.sleep(0.05)
        assert "loud" in [t.name for t in await hub.tools(("weather",))], "refreshed at once"
    finally:
        await hub.close()
