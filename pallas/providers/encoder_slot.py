"""The bot's sentence encoder as it loads: `loading`, then `on` or `off` with a reason.

`PALLAS_SENTENCE_ENCODER` chooses how it runs:
- `local` (the default): in a process of its own (`encoder_process`), so a busy event loop
  never slows it down through the GIL;
- `thread`: in this process on one worker thread (`sentence_encoder.LocalEncoder`); also what
  `local` falls back to where the event loop cannot start a subprocess;
- `off` (none, no, false, 0, disabled): not loaded; memory recall uses BM25 and concepts.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Literal

from pallas.providers.encoder_process import EncoderUnavailable, ProcessEncoder
from pallas.providers.encoder_worker import rss_mb
from pallas.providers.sentence_encoder import (
    LOCAL_PACKAGE,
    SentenceEncoder,
    load_local_encoder,
    one_blas_thread,
)

log = logging.getLogger("pallas.memory")

OFF_WORDS = frozenset({"off", "none", "no", "false", "0", "disabled"})
THREAD_WORDS = frozenset({"thread", "in-process", "inprocess"})
PROBE_TEXT = "你好"  # the start-up round trip's question
SlotPhase = Literal["loading", "on", "off"]
Placement = Literal["process", "thread"]


class EncoderSlot:
    """The process's local encoder as it loads: `loading` until `load()` ends (recall stays
    BM25 + concepts meanwhile; no reply waits for it), then `on` or `off` with a reason."""

    def __init__(self, setting: str = "local", table_dir: Path | None = None) -> None:
        self.encoder: SentenceEncoder | None = None
        self.load_seconds = 0.0
        self.rss_mb = 0.0
        # where the model's embedding table is kept as a file (None: in memory, ~60 MB more)
        self.table_dir = table_dir
        self.table = "in memory"
        word = setting.strip().lower()
        self.placement: Placement = "thread" if word in THREAD_WORDS else "process"
        self.pid = 0  # the encoder process's pid once it runs there
        if word in OFF_WORDS:
            self.phase: SlotPhase = "off"
            self.reason = f"PALLAS_SENTENCE_ENCODER={setting.strip()}"
            self.reason_zh = "PALLAS_SENTENCE_ENCODER 设为关闭"
        else:
            self.phase = "loading"
            self.reason, self.reason_zh = "loading", "加载中"

    @classmethod
    def ready(cls, encoder: SentenceEncoder) -> EncoderSlot:
        """A slot holding an already loaded encoder (tests, benchmarks)."""
        slot = cls()
        if isinstance(encoder, ProcessEncoder):
            slot.pid = encoder.pid
        else:
            slot.placement = "thread"
        slot._set(encoder)
        return slot

    @property
    def model_id(self) -> str:
        """The encoder's model id once loaded ("" while loading or off)."""
        return self.encoder.model_id if self.encoder is not None else ""

    def _set(self, encoder: SentenceEncoder | None, why: str = "") -> None:
        self.encoder = encoder
        if encoder is None:
            self.phase = "off"
            self.reason = f"{LOCAL_PACKAGE} could not be loaded ({why or 'see the warning above'})"
            self.reason_zh = f"{LOCAL_PACKAGE} 加载失败"
        else:
            self.phase = "on"
            self.reason, self.reason_zh = "in the wheel, no network", "模型在安装包内，无需联网"

    async def load(self) -> None:
        """Start the encoder (seconds, off the event loop) and log ONE line saying what
        happened."""
        # this process's own BLAS too, wherever the encoder runs: the vector index's matrix
        # pass runs here on the event loop, and OpenBLAS's threads on a shared machine gave
        # it a 10-18 ms p90 / p99 (against 4-5 ms on one thread, benchmarks.reply_turn)
        one_blas_thread()
        if self.phase != "loading":
            log.info(self.log_line())
            return
        why = ""
        encoder: SentenceEncoder | None = None
        if self.placement == "process":
            try:
                started = await ProcessEncoder.start(table_dir=self.table_dir)
            except NotImplementedError:  # this event loop cannot run subprocesses
                log.info("sentence encoder: no subprocess on this event loop; using a thread")
                self.placement = "thread"
            except (EncoderUnavailable, OSError) as exc:
                why = str(exc)
                log.warning("sentence encoder unavailable (%s)", why)
            else:
                encoder, why = await _answering(started)
                if encoder is not None:
                    self.pid = started.pid
                    self.load_seconds, self.rss_mb = started.load_seconds, started.rss_mb
                    self.table = started.table
        if self.placement == "thread":
            before = rss_mb()
            local = await asyncio.to_thread(load_local_encoder, self.table_dir)
            self.rss_mb = max(0.0, rss_mb() - before)
            if local is not None:
                self.load_seconds, self.table = local.load_seconds, local.table
            encoder = local
        self._set(encoder, why)
        log.info(self.log_line())

    async def aclose(self) -> None:
        """Stop the encoder's process or thread (at shutdown)."""
        if self.encoder is not None:
            await self.encoder.aclose()

    def log_line(self) -> str:
        if self.phase == "on":
            where = f"own process, pid {self.pid}" if self.placement == "process" else "a thread"
            return (
                f"sentence encoder on ({self.model_id}, {self.reason}; {where}): loaded in "
                f"{self.load_seconds:.1f} s, +{self.rss_mb:.0f} MB, embedding table {self.table}; "
                "memory recall ranks by meaning"
            )
        if self.phase == "loading":
            return "sentence encoder loading; memory recall uses BM25 and concept classes meanwhile"
        return f"sentence encoder off ({self.reason}): memory recall uses BM25 and concept classes"

    def status_zh(self) -> str:
        if self.phase == "on":
            down = "" if self.encoder is None or self.encoder.available else "，进程重启中"
            return f"本地语义模型：开启（{self.model_id}，{self.reason_zh}{down}）"
        if self.phase == "loading":
            return "本地语义模型：加载中，暂用关键词与概念检索"
        return f"本地语义模型：关闭（{self.reason_zh}），用关键词与概念检索"


async def _answering(encoder: ProcessEncoder) -> tuple[ProcessEncoder | None, str]:
    """The started encoder once a question went there and back through the bot's own path
    (its pipes, on this event loop): "on" is said only then. A worker that loaded but cannot
    answer here (under uvloop a transport check once stopped it at its first encode, while
    the start-up line said "on") is stopped, and the reason is the slot's."""
    try:
        vectors = await encoder.encode([PROBE_TEXT])
    except EncoderUnavailable as exc:
        why = f"it started but did not answer: {exc}"
    else:
        if vectors.shape == (1, encoder.dim):
            return encoder, ""
        why = f"it started but answered shape {vectors.shape}"
    log.warning("sentence encoder %s", why)
    await encoder.aclose()
    return None, why


__all__ = ["EncoderSlot"]
