"""Refused OneBot frames, kept (capped) so an operator can look at them and replay them later.

The edge refuses a frame only when it is no OneBot event at all (`frame_guard`: too large, not
JSON, too deep, a 25-digit integer, not an object; `event_parse`: no event type, no ids, ids
past 64 bits). Each refusal is counted by kind (`counts`, shown in the counters line) and the
frame is appended to `<data dir>/refused/frames.jsonl`, one JSON object a line:

- a frame that is a JSON object is kept as it was sent, with one key added,
  `"_pallas_refused": {"kind": …, "reason": …, "at": <unix time>}`, so the file can be fed to
  `pallas replay` once a fix makes such frames events;
- anything else is kept as `{"_pallas_refused": {…}, "raw": "<the first 64 KiB as text>"}`.

The file rotates at `MAX_FILE_BYTES` with `BACKUPS` older files, and at most `KEPT_PER_MINUTE`
frames a minute are written (a flood of refusals is counted, not stored whole).
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import Callable
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import Any

from pallas.core.log_limit import LogLimiter

log = logging.getLogger("pallas.onebot")

MAX_FILE_BYTES = 4 * 1024 * 1024
BACKUPS = 2
KEPT_PER_MINUTE = 120
RAW_CHARS = 64 * 1024


class RefusedFrames:
    """Counts refusals by kind and keeps the refused frames in a rotating JSONL file."""

    def __init__(
        self,
        folder: Path | None,
        *,
        counts: Counter[str] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.counts: Counter[str] = counts if counts is not None else Counter()
        self._clock = clock
        self._limit = LogLimiter(per_window=KEPT_PER_MINUTE, window_s=60.0)
        self._writer: logging.Logger | None = None
        self._handler: RotatingFileHandler | None = None
        self.path = folder / "frames.jsonl" if folder is not None else None

    def keep(self, kind: str, reason: str, data: str | bytes | dict[str, Any]) -> None:
        self.counts[kind] += 1
        if self.path is None or not self._limit.allow("frames")[0]:
            return
        try:
            self._file().info("%s", self._line(kind, reason, data))
        except Exception as exc:  # the disk is full or read-only: counting goes on
            self.path = None
            log.warning("refused frames are no longer kept (%s: %s)", type(exc).__name__, exc)

    def _line(self, kind: str, reason: str, data: str | bytes | dict[str, Any]) -> str:
        note = {"kind": kind, "reason": reason[:300], "at": round(self._clock(), 3)}
        if isinstance(data, dict):
            return json.dumps({**data, "_pallas_refused": note}, ensure_ascii=False,
                              default=str).encode("utf-8", "replace").decode("utf-8")  # fmt: skip
        text = data if isinstance(data, str) else data.decode("utf-8", "replace")
        raw = text[:RAW_CHARS].encode("utf-8", "replace").decode("utf-8")
        return json.dumps({"_pallas_refused": note, "raw": raw}, ensure_ascii=False)

    def _file(self) -> logging.Logger:
        if self._writer is None:
            assert self.path is not None
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handler = RotatingFileHandler(
                self.path, maxBytes=MAX_FILE_BYTES, backupCount=BACKUPS, encoding="utf-8"
            )
            handler.setFormatter(logging.Formatter("%(message)s"))
            writer = logging.getLogger(f"pallas.refused_frames.{id(self)}")
            writer.propagate = False
            writer.setLevel(logging.INFO)
            writer.addHandler(handler)
            self._writer, self._handler = writer, handler
        return self._writer

    def close(self) -> None:
        if self._writer is not None and self._handler is not None:
            self._writer.removeHandler(self._handler)
            self._handler.close()
            self._writer = self._handler = None

    def summary(self) -> str:
        return ", ".join(f"{kind} {n}" for kind, n in self.counts.most_common(8)) or "none"


__all__ = ["RefusedFrames"]
