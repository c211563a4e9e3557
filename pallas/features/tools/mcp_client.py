"""MCP servers as tools, on the official `mcp` SDK: one `McpServer` per `[[servers]]` entry,
`McpHub` over all of them.

A server is started lazily, on the first turn that needs its tools (or `pallas mcp list`): one
task owns the SDK `Client` (its context is entered and left in that task) and waits until the
server is stopped; calls from turns go through the connected session. When the server dies
(the process exits, the connection drops, a call fails for any reason but its timeout) the
connection is torn down and the server rests: the next use after `backoff_s` (doubling per
failure in a row, up to `backoff_max_s`) starts it again. While it rests, its tools are simply
not offered. The tool list is cached: refreshed after the server's list-changed notification
(`notifications/tools/list_changed`, or a `subscriptions/listen` event on 2026 sessions) and
after `tools_ttl_s`. Nothing here raises into a turn: failures are `McpCallResult.reason`s.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pallas.core.errors import ProviderError
from pallas.features.tools.mcp_config import McpConfig, McpServerConfig, resolve_secrets
from pallas.features.tools.mcp_wire import result_text

log = logging.getLogger("pallas.tools.mcp")

Now = Callable[[], float]


class ServerState(StrEnum):
    IDLE = "idle"  # not started yet (started on first use)
    STARTING = "starting"
    READY = "ready"
    RESTING = "resting"  # failed; started again once its backoff is over
    CLOSED = "closed"


@dataclass(frozen=True, slots=True)
class McpTool:
    server: str
    name: str
    description: str
    input_schema: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class McpCallResult:
    ok: bool
    text: str = ""
    reason: str = "ok"  # ok | tool_error | timeout | unavailable | crashed | unknown_server
    ms: float = 0.0


@dataclass(frozen=True, slots=True)
class ServerStatus:
    name: str
    transport: str
    state: ServerState
    tools: tuple[str, ...]
    failures: int
    error: str
    missing_env: tuple[str, ...]


class Unavailable(ProviderError):
    """The server cannot be used now (resting after a crash, or failed to start)."""


class McpServer:
    def __init__(
        self,
        config: McpServerConfig,
        *,
        backoff_s: float = 2.0,
        backoff_max_s: float = 300.0,
        now: Now = time.monotonic,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.config = config
        self._backoff_s, self._backoff_max_s = backoff_s, backoff_max_s
        self._now = now
        self._secrets = resolve_secrets(config, environ)
        self.state = ServerState.IDLE
        self.failures = 0
        self.error = ""
        self._rest_until = 0.0
        self._client: Any = None
        self._runner: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._lock = asyncio.Lock()
        self._tools: tuple[McpTool, ...] = ()
        self._tools_at: float | None = None

    @property
    def name(self) -> str:
        return self.config.name

    def status(self) -> ServerStatus:
        return ServerStatus(
            self.name,
            self.config.transport,
            self.state,
            tuple(t.name for t in self._tools),
            self.failures,
            self.error,
            self._secrets.missing,
        )

    # -- the connection --------------------------------------------------------------------
    def _client_for(self) -> tuple[Any, Any]:
        """The SDK client for this server, and the HTTP client to close after it (None)."""
        from mcp import Client, StdioServerParameters

        if self.config.transport == "stdio":
            params = StdioServerParameters(
                command=self.config.command,
                args=list(self.config.args),
                env=dict(self._secrets.env),
                cwd=self.config.cwd or None,
            )
            return Client(params, message_handler=self._on_message), None
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        http = httpx2.AsyncClient(headers=self._secrets.headers, timeout=30.0)
        transport = streamable_http_client(self.config.url, http_client=http)
        return Client(transport, message_handler=self._on_message), http

    async def _on_message(self, message: Any) -> None:
        import mcp_types

        if isinstance(message, mcp_types.ToolListChangedNotification):
            self._tools_at = None  # refetched on the next use
        elif isinstance(message, Exception):
            log.warning("mcp server %s: transport error: %s", self.name, message)

    async def _run(self, started: asyncio.Future[None]) -> None:
        """Own the SDK client for the connection's whole life (entered and left here)."""
        sdk_client, http = self._client_for()
        try:
            async with sdk_client as client:
                self._client = client
                started.set_result(None)
                watcher = asyncio.create_task(self._watch(client))
                try:
                    await self._stop.wait()
                finally:
                    watcher.cancel()
                    with contextlib.suppress(BaseException):
                        await watcher
        except BaseException as exc:  # whatever ends the connection
            if not started.done():
                started.set_exception(Unavailable(_describe(exc)))
            elif not self._stop.is_set():
                self._crashed(_describe(exc))
        finally:
            self._client = None
            if http is not None:
                with contextlib.suppress(Exception):
                    await http.aclose()

    async def _watch(self, client: Any) -> None:
        """Tool-list changes on 2026 sessions (a `subscriptions/listen` stream)."""
        try:
            async with client.listen(tools_list_changed=True) as events:
                async for _event in events:
                    self._tools_at = None
        except Exception as exc:  # older protocol: notifications reach `_on_message`
            log.debug("mcp server %s: no listen stream (%s)", self.name, exc)

    async def _connected(self) -> Any:
        """The live client, starting the server if it is not running; `Unavailable` else."""
        if self.state is ServerState.READY and self._client is not None:
            return self._client
        async with self._lock:
            if self.state is ServerState.READY and self._client is not None:
                return self._client
            if self.state is ServerState.CLOSED:
                raise Unavailable("closed")
            if self.state is ServerState.RESTING and self._now() < self._rest_until:
                raise Unavailable(f"resting after a failure: {self.error}")
            await self._start()
            return self._client

    async def _start(self) -> None:
        self.state = ServerState.STARTING
        self._stop = asyncio.Event()
        started: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._runner = asyncio.create_task(self._run(started), name=f"mcp:{self.name}")
        try:
            async with asyncio.timeout(self.config.start_timeout_s):
                await asyncio.shield(started)
        except (TimeoutError, Unavailable) as exc:
            reason = "start timed out" if isinstance(exc, TimeoutError) else str(exc)
            await self._teardown()
            self._crashed(reason)
            raise Unavailable(reason) from None
        except asyncio.CancelledError:  # the turn was cancelled: leave nothing half-started
            await self._teardown()
            self.state = ServerState.IDLE
            raise
        self.state = ServerState.READY
        self._tools_at = None
        log.info("mcp server %s started (%s)", self.name, self.config.transport)

    def _crashed(self, reason: str) -> None:
        if self.state is ServerState.CLOSED:
            return
        self.failures += 1
        wait = min(self._backoff_max_s, self._backoff_s * 2 ** (self.failures - 1))
        self.state, self.error = ServerState.RESTING, reason
        self._rest_until = self._now() + wait
        log.warning("mcp server %s failed (%s); next try in %.0fs", self.name, reason, wait)

    async def _teardown(self) -> None:
        self._stop.set()
        runner, self._runner = self._runner, None
        if runner is not None and runner is not asyncio.current_task():
            try:
                async with asyncio.timeout(5):
                    await runner
            except BaseException:  # a wedged transport is cancelled
                runner.cancel()
        self._client = None

    async def _fail(self, reason: str) -> None:
        """A call found the connection broken: tear it down, rest, start again later."""
        await self._teardown()
        self._crashed(reason)

    # -- what turns use --------------------------------------------------------------------
    async def tools(self) -> tuple[McpTool, ...]:
        """The server's tools (cached); () when it cannot be used now."""
        listed_at = self._tools_at
        fresh = listed_at is not None and self._now() - listed_at < self.config.tools_ttl_s
        if fresh and self.state is ServerState.READY:
            return self._tools
        try:
            client = await self._connected()
            async with asyncio.timeout(self.config.start_timeout_s):
                listed = await client.list_tools(cache_mode="refresh")
        except Unavailable:
            return ()
        except Exception as exc:  # a server that cannot list is broken
            await self._fail(f"tools/list failed: {_describe(exc)}")
            return ()
        self._tools = tuple(
            McpTool(self.name, t.name, t.description or "", dict(t.input_schema or {}))
            for t in listed.tools
        )
        self._tools_at = self._now()
        self.failures = 0
        return self._tools

    async def call(self, tool: str, args: Mapping[str, Any], timeout_s: float) -> McpCallResult:
        started = time.perf_counter()

        def done(ok: bool, text: str = "", reason: str = "ok") -> McpCallResult:
            return McpCallResult(ok, text, reason, round((time.perf_counter() - started) * 1000, 1))

        try:
            client = await self._connected()
        except Unavailable as exc:
            return done(False, str(exc), "unavailable")
        try:
            async with asyncio.timeout(timeout_s):
                result = await client.call_tool(tool, dict(args))
        except TimeoutError:
            return done(False, f"no answer in {timeout_s:g}s", "timeout")
        except Exception as exc:  # the connection broke under the call
            await self._fail(f"tools/call failed: {_describe(exc)}")
            return done(False, _describe(exc), "crashed")
        text = result_text(result.content, getattr(result, "structured_content", None))
        if result.is_error:
            return done(False, text, "tool_error")
        self.failures = 0
        return done(True, text)

    async def close(self) -> None:
        await self._teardown()
        self.state = ServerState.CLOSED


def _describe(exc: BaseException) -> str:
    inner = getattr(exc, "exceptions", None)  # an ExceptionGroup from the SDK's task groups
    if inner:
        return _describe(inner[0])
    return f"{type(exc).__name__}: {exc}"[:300]


class McpHub:
    """Every configured MCP server, by name."""

    def __init__(
        self,
        config: McpConfig,
        *,
        now: Now = time.monotonic,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.config = config
        self.servers = {
            s.name: McpServer(
                s,
                backoff_s=config.backoff_s,
                backoff_max_s=config.backoff_max_s,
                now=now,
                environ=environ,
            )
            for s in config.servers
        }

    def server(self, name: str) -> McpServer | None:
        return self.servers.get(name)

    async def tools(self, names: tuple[str, ...]) -> tuple[McpTool, ...]:
        """The tools of the named servers, listed concurrently (unknown names skipped)."""
        wanted = [self.servers[n] for n in names if n in self.servers]
        lists = await asyncio.gather(*(s.tools() for s in wanted))
        return tuple(tool for listed in lists for tool in listed)

    async def call(
        self, server: str, tool: str, args: Mapping[str, Any], timeout_s: float
    ) -> McpCallResult:
        found = self.servers.get(server)
        if found is None:
            return McpCallResult(False, server, "unknown_server")
        return await found.call(tool, args, timeout_s)

    def statuses(self) -> list[ServerStatus]:
        return [s.status() for s in self.servers.values()]

    async def close(self) -> None:
        await asyncio.gather(*(s.close() for s in self.servers.values()))
