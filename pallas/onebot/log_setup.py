"""The bot's log sink: NoneBot's own handler, made cheap per message (called by `bot.py`).

NoneBot adds its stdout handler at level 0 and drops records below `LOG_LEVEL` in a filter, so
every `logger.debug` / `logger.trace` of its dispatch (seven per message) builds a whole loguru
record — frame, time, formatting — only to throw it away (~7 µs each). `install` replaces that
handler with the same sink, format and filter at `LOG_LEVEL` itself: loguru then drops those
calls at its first check (~0.3 µs).

NoneBot also writes three INFO lines for every message it dispatches ("OneBot V11 … [message.
group.normal]: Message …", "Event will be handled by Matcher(…)", "Matcher(…) running
complete"). A busy bot logs per message only at DEBUG, so those three lines are
shown only when `LOG_LEVEL` is DEBUG or lower. Everything else NoneBot logs at INFO or above
(start-up, plugins loaded, connections, warnings and errors of the dispatch itself) is kept, and
Pallas's own INFO lines (decisions that speak or call a model, the periodic counters) too.

`install_ring` keeps the newest lines in memory for the console's log tail.
`install_file` adds a rotating log file (`PALLAS_LOG_FILE`, `PALLAS_LOG_FILE_MAX_MB`,
`PALLAS_LOG_FILE_KEEP`): the same lines, a size cap.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from nonebot import log as nonebot_log
from nonebot import message as nonebot_message
from nonebot.internal.matcher import matcher as nonebot_matcher
from nonebot.log import default_filter, default_format, logger

from pallas.core.log_ring import LOG_RING, LogRing

if TYPE_CHECKING:
    from loguru import Record

# NoneBot's dispatch modules, by file (NoneBot's log patcher shortens a record's `name` to
# "nonebot"); their INFO / SUCCESS lines are one per message (or per matcher run)
PER_MESSAGE_FILES = frozenset({nonebot_message.__file__, nonebot_matcher.__file__})
_PER_MESSAGE_LEVELS = frozenset({"INFO", "SUCCESS"})


def level_number(level: int | str) -> int:
    """A loguru level (name or number) as its number; unknown names count as INFO."""
    if isinstance(level, int):
        return level
    try:
        return logger.level(level.upper()).no
    except ValueError:
        return logger.level("INFO").no


def keep_record(record: Record, threshold: int) -> bool:
    """NoneBot's `default_filter`, with its per-message INFO lines moved to DEBUG."""
    if not default_filter(record):
        return False
    if record["level"].name in _PER_MESSAGE_LEVELS and record["file"].path in PER_MESSAGE_FILES:
        return threshold <= logger.level("DEBUG").no
    return True


def install(level: int | str, sink: Any = None) -> int:
    """Replace NoneBot's default handler (or the one an earlier call installed); returns the
    new handler's id. A handler an operator already removed stays removed."""
    threshold = level_number(level)
    handler_id = nonebot_log.logger_id
    try:
        logger.remove(handler_id)
    except ValueError:  # already replaced (or removed by an operator's own setup): keep theirs
        return handler_id
    new_id = logger.add(
        sys.stdout if sink is None else sink,
        level=threshold,
        diagnose=False,
        filter=lambda record: keep_record(record, threshold),
        format=default_format,
    )
    nonebot_log.logger_id = new_id
    return new_id


def install_file(path: str, level: int | str, *, max_mb: float = 20.0, keep: int = 5) -> int | None:
    """Also write the log to `path` (the same records and format as stdout), rotated at
    `max_mb` megabytes with `keep` old files kept: a bot under attack or running for years
    cannot fill the disk. None (nothing added) when `path` is empty."""
    if not path.strip():
        return None
    threshold = level_number(level)
    return logger.add(
        path,
        level=threshold,
        diagnose=False,
        filter=lambda record: keep_record(record, threshold),
        format=default_format,
        rotation=int(max(1.0, max_mb) * 1_000_000),
        retention=max(1, keep),
        encoding="utf-8",
    )


def install_ring(level: int | str, ring: LogRing = LOG_RING) -> int:
    """Also keep the newest lines in memory (`pallas.core.log_ring`) for the console's log
    tail: the same records and format as stdout, secrets masked, with or without a file."""
    threshold = level_number(level)

    def sink(message: Any) -> None:
        ring.add(message.record["level"].name, str(message))

    return logger.add(
        sink,
        level=threshold,
        diagnose=False,
        colorize=False,
        filter=lambda record: keep_record(record, threshold),
        format=default_format,
    )


def _number(environ: Mapping[str, str], name: str, default: float) -> float:
    raw = environ.get(name, "").strip()
    try:
        return float(raw) if raw else default
    except ValueError:
        logger.warning(f"{name}={raw!r} is not a number; using {default}")
        return default


def install_file_from_env(environ: Mapping[str, str], level: int | str) -> int | None:
    """`install_file` from `PALLAS_LOG_FILE` / `_MAX_MB` (20) / `_KEEP` (5); a value that is
    not a number is reported and its default used."""
    return install_file(
        environ.get("PALLAS_LOG_FILE", ""),
        level,
        max_mb=_number(environ, "PALLAS_LOG_FILE_MAX_MB", 20.0),
        keep=int(_number(environ, "PALLAS_LOG_FILE_KEEP", 5)),
    )


__all__ = [
    "PER_MESSAGE_FILES",
    "install",
    "install_file",
    "install_file_from_env",
    "install_ring",
    "keep_record",
    "level_number",
]
