"""The fake OpenAI-compatible server in a process of its own, as a real model is remote.

In the bot's process the server's request handling (FastAPI, JSON, its connection's
clean-up after the response) runs on the bot's event loop and allocates on the bot's heap:
its CPU and the collections it triggers land in whatever the bot does next. A benchmark of
the bot's own work runs the server here instead (`python -m benchmarks.llm_process`).

    async with LLMProcess(reply="好呀") as llm:
        settings = PallasSettings(openai_base_url=llm.base_url, ...)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import socket
import sys
import time
from pathlib import Path
from types import TracebackType

from tests.harness.fake_openai import FakeOpenAI, free_port

REPO = Path(__file__).resolve().parents[1]


class LLMProcess:
    """`python -m benchmarks.llm_process --port P --reply TEXT`, stopped on exit."""

    def __init__(self, reply: str, *, start_timeout: float = 20.0) -> None:
        self.reply = reply
        self.port = free_port()
        self.start_timeout = start_timeout
        self._proc: asyncio.subprocess.Process | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def __aenter__(self) -> LLMProcess:
        self._proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "benchmarks.llm_process",
            "--port",
            str(self.port),
            "--reply",
            self.reply,
            cwd=REPO,
        )
        deadline = time.monotonic() + self.start_timeout
        while not _accepts(self.port):
            if self._proc.returncode is not None or time.monotonic() > deadline:
                await self.__aexit__(None, None, None)
                raise RuntimeError(f"the fake LLM server did not start on port {self.port}")
            await asyncio.sleep(0.05)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        proc, self._proc = self._proc, None
        if proc is None or proc.returncode is not None:
            return
        proc.terminate()
        try:
            await asyncio.wait_for(proc.wait(), 10)
        except TimeoutError:
            proc.kill()
            await proc.wait()


def _accepts(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
        return True
    return False


async def _serve(port: int, reply: str) -> None:
    llm = FakeOpenAI(default_reply=reply)
    llm.port = port
    await llm.start()
    try:
        await asyncio.Event().wait()  # until terminated
    finally:
        await llm.stop()


def _serve_cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--reply", default="好呀")
    args = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(args.port, args.reply))


if __name__ == "__main__":
    _serve_cli()
