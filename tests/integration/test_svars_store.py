"""Session variables over a real runtime: durable, versioned, per group / member, admin-run."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from pallas.admin import AdminContext, find_command
from pallas.app_wiring import admin_services_for, memory_service_for
from pallas.core.clock import FakeClock
from pallas.core.settings import PallasSettings
from pallas.core.state import MemoryStateStore
from pallas.features.svars.ops import split_svar_tags
from pallas.features.svars.pending import PendingCommits
from pallas.features.svars.repository import SessionVariableRepository, VariableWrite
from pallas.features.svars.service import SvarService
from pallas.runtime import PallasRuntime

REPO = Path(__file__).resolve().parents[2]
BOT, A, B = 7, 100, 200
ADMIN, ALICE, BOB = 10_001, 20_011, 20_022
SVARS = """
[[svars.variables]]
name = "hp"
label = "生命值"
default = 100
min = 0
max = 100

[[svars.variables]]
name = "mood"
default = 0
scope = "member"
"""


@pytest.fixture
async def runtime(tmp_path: Path, database_url: str) -> AsyncIterator[PallasRuntime]:
    shutil.copytree(REPO / "config", tmp_path / "config")
    for group in (A, B):
        (tmp_path / "config" / "groups" / f"{group}.toml").write_text(SVARS, encoding="utf-8")
    clock = FakeClock()
    rt = await PallasRuntime.start(
        PallasSettings(database_url=database_url, pallas_config_dir=tmp_path / "config"),
        clock=clock,
        state=MemoryStateStore(clock),
    )
    yield rt
    await rt.stop()


def service(rt: PallasRuntime) -> SvarService:
    return SvarService(SessionVariableRepository(rt.sessions), rt.clock)


async def admin(rt: PallasRuntime, group: int, *args: str) -> str:
    command = find_command("svar")
    assert command is not None
    return await command.handler(
        AdminContext(
            admin_services_for(rt, memory=memory_service_for(rt)), BOT, group, ADMIN, tuple(args)
        )
    )


async def test_answer_ops_commit_durably_per_group_and_member(runtime: PallasRuntime) -> None:
    config = runtime.group_configs.get(A).svars
    _, ops = split_svar_tags(
        '<svar name="hp" op="-" value="30"/><svar name="mood" op="+" value="2"/>'
    )
    result = await service(runtime).apply(BOT, A, ALICE, config, ops, turn_id="t1", actor="model")
    assert result.reason == "applied"
    view = await service(runtime).view(BOT, A, ALICE, config)
    assert view is not None and view.values == {(0, "hp"): 70, (ALICE, "mood"): 2}
    bob = await service(runtime).view(BOT, A, BOB, config)
    assert bob is not None and bob.values == {(0, "hp"): 70}  # Alice's mood is hers only
    other = await service(runtime).view(BOT, B, ALICE, config)
    assert other is not None and other.values == {}  # nothing crosses groups
    events = await service(runtime).repo.events(BOT, A)
    assert {(e.name, e.turn_id, e.actor) for e in events} == {
        ("hp", "t1", "model"),
        ("mood", "t1", "model"),
    }


async def test_stale_version_writes_nothing_and_apply_reapplies(runtime: PallasRuntime) -> None:
    repo = SessionVariableRepository(runtime.sessions)
    assert await repo.commit(BOT, A, [VariableWrite(0, "hp", 50, 0)], turn_id="a", actor="m", now=1)
    stale = [VariableWrite(0, "hp", 10, 0), VariableWrite(0, "gold", 1, 0)]
    assert not await repo.commit(BOT, A, stale, turn_id="b", actor="m", now=2)
    rows = await repo.load(BOT, A)
    assert set(rows) == {(0, "hp")} and rows[(0, "hp")].value == 50  # all or nothing
    assert rows[(0, "hp")].version == 1
    _, ops = split_svar_tags('<svar name="hp" op="+" value="5"/>')
    config = runtime.group_configs.get(A).svars
    await service(runtime).apply(BOT, A, ALICE, config, ops, turn_id="c", actor="model")
    rows = await repo.load(BOT, A)
    assert rows[(0, "hp")].value == 55 and rows[(0, "hp")].version == 2


async def test_admin_list_set_reset(runtime: PallasRuntime) -> None:
    assert "生命值（hp）= 100（0～100） 默认" in await admin(runtime, A, "list")
    assert await admin(runtime, A, "set", "hp", "150") == "生命值：100 → 100（已按上下限截断）"
    assert await admin(runtime, A, "set", "hp", "40") == "生命值：100 → 40"
    assert "每人一份" in await admin(runtime, A, "set", "mood", "3")
    assert await admin(runtime, A, "set", "mood", "3", str(ALICE)) == "mood：0 → 3"
    listing = await admin(runtime, A, "list", str(ALICE))
    assert "= 40" in listing and f"[{ALICE}]= 3" in listing
    assert await admin(runtime, A, "set", "mana", "1") == "没有声明变量 mana"
    assert await admin(runtime, A, "set", "hp", "abc") == "没改成：bad_value"
    assert "（1 个存储值回到默认）" in await admin(runtime, A, "reset", "hp")
    assert "生命值（hp）= 100" in await admin(runtime, A, "list")
    assert "（1 个存储值回到默认）" in await admin(runtime, A, "reset")


async def test_a_turn_read_during_a_commit_in_flight_sees_the_committed_values(
    runtime: PallasRuntime,
) -> None:
    """The reply's final bubble is out and its commit pending: the next @'s view waits for it."""
    svars = service(runtime)
    config = runtime.group_configs.get(A).svars
    _, ops = split_svar_tags('<svar name="hp" op="-" value="30"/>')
    hold = svars.pending.hold(BOT, A)
    hold.engage()  # delivery is about to send the final bubble
    reader = asyncio.create_task(svars.view(BOT, A, BOB, config))
    other_group = await svars.view(BOT, B, BOB, config)  # another group never waits
    assert other_group is not None and other_group.values == {}
    await asyncio.sleep(0.05)
    assert not reader.done()
    await svars.apply(BOT, A, ALICE, config, ops, turn_id="t1", actor="model")
    hold.release()
    view = await asyncio.wait_for(reader, 1)
    assert view is not None and view.values == {(0, "hp"): 70}
    assert svars.pending.pending(BOT, A) == 0


async def test_a_commit_that_never_comes_delays_a_turn_only_boundedly(
    runtime: PallasRuntime,
) -> None:
    svars = SvarService(
        SessionVariableRepository(runtime.sessions), runtime.clock, PendingCommits(0.05)
    )
    config = runtime.group_configs.get(A).svars
    svars.pending.hold(BOT, A).engage()  # e.g. a send that hangs
    view = await asyncio.wait_for(svars.view(BOT, A, BOB, config), 1)
    assert view is not None and view.values == {}  # read as is, after the timeout
