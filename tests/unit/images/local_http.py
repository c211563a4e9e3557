"""A tiny raw-HTTP/1.1 server on 127.0.0.1 for image-fetch tests (no aiohttp needed)."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from dataclasses import dataclass, field

PNG_1X1 = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


@dataclass
class Route:
    status: int = 200
    headers: list[tuple[str, str]] = field(default_factory=lambda: [("Content-Type", "image/png")])
    body: bytes = PNG_1X1
    chunked: bool = False  # stream `body` in chunks without Content-Length
    chunk_size: int = 64 * 1024
    chunk_delay: float = 0.0
    stall: bool = False  # accept the request and never answer


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]


class LocalHttpServer:
    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.requests: list[RecordedRequest] = []
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.port = 0
        self.sni_names: list[str] = []

    def _record_sni(self, _sock: object, name: str | None, _ctx: object) -> None:
        self.sni_names.append(name or "")

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def paths(self) -> list[str]:
        return [r.path for r in self.requests]

    async def start(self, ssl_context: ssl.SSLContext | None = None) -> None:
        if ssl_context is not None:
            ssl_context.sni_callback = self._record_sni
        self._server = await asyncio.start_server(self._on_client, "127.0.0.1", 0, ssl=ssl_context)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await self._server.wait_closed()

    async def _on_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)  # type: ignore[arg-type]
        try:
            await self._handle(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError, TimeoutError):
            pass
        finally:
            self._tasks.discard(task)  # type: ignore[arg-type]
            writer.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _version = lines[0].split(" ", 2)
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        self.requests.append(RecordedRequest(method, path, headers))
        route = self.routes.get(path, Route(status=404, headers=[], body=b"not found"))
        if route.stall:
            await asyncio.wait_for(reader.read(), timeout=10)  # until the client gives up
            return
        out = [f"HTTP/1.1 {route.status} X".encode(), b"Connection: close"]
        out += [f"{k}: {v}".encode() for k, v in route.headers]
        if route.chunked:
            out.append(b"Transfer-Encoding: chunked")
        elif not any(k.lower() == "content-length" for k, _ in route.headers):
            out.append(f"Content-Length: {len(route.body)}".encode())
        writer.write(b"\r\n".join(out) + b"\r\n\r\n")
        if not route.chunked:
            writer.write(route.body)
            await writer.drain()
            return
        for start in range(0, len(route.body), route.chunk_size):
            piece = route.body[start : start + route.chunk_size]
            writer.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            await writer.drain()
            if route.chunk_delay:
                await asyncio.sleep(route.chunk_delay)
        writer.write(b"0\r\n\r\n")
        await writer.drain()
