"""The bot's log sink: NoneBot's per-message lines only at DEBUG, everything else as before."""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from nonebot import log as nonebot_log
from nonebot import message as nonebot_message
from nonebot.internal.matcher import matcher as nonebot_matcher
from nonebot.log import default_filter, default_format, logger

from pallas.core.log_ring import LogRing, redact
from pallas.onebot import log_setup

MESSAGE, MATCHER = nonebot_message.__file__, nonebot_matcher.__file__


@pytest.fixture
def sink() -> Iterator[io.StringIO]:
    out = io.StringIO()
    with contextlib.suppress(ValueError):  # NoneBot's default handler (nonebug's session)
        logger.remove(nonebot_log.logger_id)
    nonebot_log.logger_id = logger.add(io.StringIO(), level=0)  # stands for it
    yield out
    with contextlib.suppress(ValueError):
        logger.remove(nonebot_log.logger_id)
    nonebot_log.logger_id = logger.add(  # NoneBot's default handler, as nonebot.log adds it
        sys.stdout, level=0, diagnose=False, filter=default_filter, format=default_format
    )


def emit(path: str, level: str, text: str) -> None:
    """A line logged from the file at `path` (NoneBot's modules, or others by their name)."""
    where = SimpleNamespace(name=path.rsplit("/", 1)[-1], path=path)
    logger.patch(lambda record: record.update(file=where)).log(level, text)


@pytest.mark.parametrize(
    ("configured", "path", "level", "shown"),
    [
        ("INFO", MESSAGE, "SUCCESS", False),  # "OneBot V11 … [message.group.normal]: …"
        ("INFO", MESSAGE, "INFO", False),  # "Event will be handled by Matcher(…)"
        ("INFO", MATCHER, "INFO", False),  # "Matcher(…) running complete"
        ("INFO", MESSAGE, "DEBUG", False),
        ("INFO", MESSAGE, "WARNING", True),  # the dispatch's own problems stay
        ("INFO", MATCHER, "ERROR", True),
        ("INFO", nonebot_log.__file__, "SUCCESS", True),  # start-up, plugins, connections
        ("INFO", "/x/nonebot/adapters/onebot/v11/adapter.py", "INFO", True),
        ("INFO", "/x/pallas/onebot/counters.py", "INFO", True),  # Pallas's decisions and counters
        ("INFO", "/x/pallas/product/llm/routing/router.py", "DEBUG", False),
        ("DEBUG", MESSAGE, "SUCCESS", True),  # LOG_LEVEL=DEBUG shows every message again
        ("DEBUG", MATCHER, "INFO", True),
        ("DEBUG", MESSAGE, "TRACE", False),
        ("WARNING", "/x/pallas/onebot/counters.py", "INFO", False),
        (10, MESSAGE, "INFO", True),
    ],
)
def test_which_lines_are_written(
    sink: io.StringIO, configured: str | int, path: str, level: str, shown: bool
) -> None:
    log_setup.install(configured, sink)
    with logger.contextualize(nonebot_log_level=configured):
        emit(path, level, "the line")
    assert ("the line" in sink.getvalue()) is shown


def test_below_the_level_nothing_is_built(sink: io.StringIO) -> None:
    log_setup.install("INFO", sink)
    built = []
    with logger.contextualize(nonebot_log_level="INFO"):
        logger.patch(lambda record: built.append(record)).debug("x")
    assert built == []  # dropped at loguru's level check, before any record exists


def test_a_removed_default_handler_stays_removed(sink: io.StringIO) -> None:
    logger.remove(nonebot_log.logger_id)  # an operator's own logging setup
    assert log_setup.install("INFO", sink) == nonebot_log.logger_id
    logger.info("x")
    assert sink.getvalue() == ""


def test_level_names() -> None:
    assert log_setup.level_number("debug") == 10
    assert log_setup.level_number(25) == 25
    assert log_setup.level_number("nonsense") == 20


def test_the_log_file_rotates_at_its_size_cap(tmp_path: Path) -> None:
    """Issue 33: a log file cannot grow past its cap × the files kept."""
    path = tmp_path / "pallas.log"
    handler = log_setup.install_file_from_env(
        {"PALLAS_LOG_FILE": str(path), "PALLAS_LOG_FILE_MAX_MB": "1", "PALLAS_LOG_FILE_KEEP": "2"},
        "INFO",
    )
    assert handler is not None
    try:
        line = "refused a OneBot frame " + "x" * 1000
        for _ in range(4_000):  # ~4 MB of warnings
            logger.warning(line)
    finally:
        logger.remove(handler)
    files = sorted(tmp_path.iterdir())
    assert 2 <= len(files) <= 3  # the live file and at most two rotated ones
    assert all(f.stat().st_size <= 1_100_000 for f in files)
    assert "refused a OneBot frame" in path.read_text(encoding="utf-8")


def test_no_log_file_unless_asked_and_bad_numbers_fall_back(tmp_path: Path) -> None:
    assert log_setup.install_file_from_env({}, "INFO") is None
    handler = log_setup.install_file_from_env(
        {"PALLAS_LOG_FILE": str(tmp_path / "a.log"), "PALLAS_LOG_FILE_MAX_MB": "lots"}, "INFO"
    )
    assert handler is not None
    logger.remove(handler)


def test_the_ring_keeps_the_newest_lines_without_a_file_and_masks_secrets() -> None:
    """Issue 28: the console's log tail works without PALLAS_LOG_FILE and shows no key."""
    ring = LogRing(capacity=3)
    ring.mask("console-token-abcdef")
    handler = log_setup.install_ring("INFO", ring)
    try:
        logger.debug("too detailed for INFO")
        for i in range(4):
            logger.info(f"group 1001 line {i}")
        logger.warning("login with console-token-abcdef, key=sk-abcdefghijklmnop")
    finally:
        logger.remove(handler)
    lines = ring.tail(10)
    assert [line.level for line in lines] == ["INFO", "INFO", "WARNING"]
    assert lines[0].text.endswith("group 1001 line 2") and "[INFO]" in lines[0].text
    assert lines[-1].text.endswith("login with ***, key=sk-***")
    assert [line.text[-6:] for line in ring.tail(10, group_id=1001)] == ["line 2", "line 3"]
    assert ring.tail(10, group_id=100) == [] and ring.tail(1)[0] == lines[-1]


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("Authorization: Bearer sk-live1234567890", "Authorization: Bearer ***"),
        ("{'openai_api_key': 'zz-secret-value', 'x': 1}", "{'openai_api_key': '***', 'x': 1}"),
        ("OPENAI_API_KEY=abcd1234xyz", "OPENAI_API_KEY=***"),
        ("prompt_tokens=1234567 total_tokens: 9", "prompt_tokens=1234567 total_tokens: 9"),
        ("group 1001 config enabled = false", "group 1001 config enabled = false"),
    ],
)
def test_key_shaped_text_is_masked(line: str, shown: str) -> None:
    assert redact(line) == shown
