"""The last lines of the bot's log, kept in memory for the console's log tail.

`LOG_RING` is one bounded buffer per process (2,000 lines by default): the edge adds it as a
loguru sink next to stderr and the optional log file (`pallas.onebot.log_setup.install_ring`),
so the console can show recent lines without a log file. Every line passes `redact` on the way
in: anything shaped like an API key or a bearer token is masked, whatever logged it.
"""

from __future__ import annotations

import re
import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

DEFAULT_CAPACITY = 2_000
MAX_LINE_CHARS = 4_000

# key-shaped strings: OpenAI-style keys, bearer tokens, key / token / secret assignments
_SECRETS = (
    re.compile(r"\b(sk|rk|pk)-[A-Za-z0-9_-]{8,}"),
    re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=-]{8,}"),
    re.compile(
        r"(?i)\b([a-z_]*(?:api_?key|token|secret|password))(['\"]?\s*[=:]\s*)(['\"]?)"
        r"(?![\d.]+\b)[^\s'\",;}]{4,}"
    ),
)


def redact(text: str) -> str:
    """`text` with key-shaped substrings masked (`sk-…` → `sk-***`)."""
    text = _SECRETS[1].sub(lambda m: f"{m.group(1)} ***", text)
    text = _SECRETS[0].sub(lambda m: f"{m.group(1)}-***", text)
    return _SECRETS[2].sub(lambda m: f"{m.group(1)}{m.group(2)}{m.group(3)}***", text)


@dataclass(frozen=True, slots=True)
class LogLine:
    seq: int  # increasing: a page can ask for lines after the last one it showed
    level: str
    text: str  # one formatted, redacted line (time, level, source, message)


def mentions_group(text: str, group_id: int) -> bool:
    """The line names the group id as a whole number (`group 1001`, `g=1001`, `[1001]`)."""
    return re.search(rf"(?<!\d){group_id}(?!\d)", text) is not None


class LogRing:
    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self._lines: deque[LogLine] = deque(maxlen=max(1, capacity))
        self._seq = 0
        self._lock = threading.Lock()  # loguru sinks may be called from worker threads
        self._secrets: tuple[str, ...] = ()

    def mask(self, *secrets: str) -> None:
        """Also mask these exact values (the deployment's API key, the console token) in every
        line added from now on."""
        kept = {s for s in (*self._secrets, *secrets) if len(s) >= 6}
        self._secrets = tuple(sorted(kept, key=len, reverse=True))

    @property
    def capacity(self) -> int:
        return self._lines.maxlen or 0

    def add(self, level: str, text: str) -> None:
        line = text.rstrip("\n")[:MAX_LINE_CHARS]
        for secret in self._secrets:
            line = line.replace(secret, "***")
        line = redact(line)
        with self._lock:
            self._seq += 1
            self._lines.append(LogLine(self._seq, level, line))

    def tail(self, limit: int, *, group_id: int | None = None, text: str = "") -> list[LogLine]:
        """The newest `limit` lines (oldest first), only those naming `group_id` / containing
        `text` when given."""
        with self._lock:
            lines: Iterable[LogLine] = list(self._lines)
        if group_id is not None:
            lines = [line for line in lines if mentions_group(line.text, group_id)]
        if text:
            lines = [line for line in lines if text in line.text]
        kept = list(lines)
        return kept[-limit:] if limit > 0 else []

    def clear(self) -> None:
        with self._lock:
            self._lines.clear()


LOG_RING = LogRing()
