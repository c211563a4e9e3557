"""Local time per REPLY turn, everything except the LLM call, over a big database.

Runs the real `ChatTurnService` in-process: SQLite (WAL) holding `--messages` group messages
(a hot group with a fifth of them, the rest spread over 999 other groups), 10,000 memory items
in the hot group (stored through the memory repository as the product stores them), session
history for the hot group's members, the real routing, context pipeline, budget (real BPE),
delivery to an in-memory sender, session append and snapshot storage; the LLM is the fake
OpenAI-compatible server on 127.0.0.1, in a process of its own as a real model is remote
(`benchmarks.llm_process`), and its latency is subtracted. Prints the fill time and
p50/p90/p99 per stage and per context source, and the machine's own tail: a fixed piece of
pure-Python work timed between the turns (`benchmarks.cpu_floor`).

"Local" is the turn's wall time minus the LLM call's latency as the client measures it around
the chat request (`LLMClient.complete`). The event-loop thread's CPU inside that call (the
openai client building, sending and parsing the request, and whatever else the loop runs
meanwhile, e.g. the turn's snapshot) is CPU on the bot's loop too: it is printed on its own
line, neither hidden in nor double-counted with "local".

    python -m benchmarks.reply_turn [--messages 1000000] [--memories 10000] [--turns 300]
                                    [--encoder [--interleave]]

`--encoder` loads the offline sentence encoder (as the bot does once it is up) and embeds the
memory rows before the turns, so each turn encodes its question (on the encoder's thread) and
ranks by meaning — the reply path's cost of issue #47. `--interleave` alternates turns with and
without it in the same process (two and two) and prints both and their difference: on a
shared machine whose speed drifts between runs (the same fixed work 3 to 7 ms p50 from one
run to the next), separate runs cannot resolve a few milliseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import random
import shutil
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from benchmarks.cpu_floor import FixedWork
from benchmarks.gc_watch import GcWatch, gc_summary
from benchmarks.llm_process import LLMProcess
from benchmarks.stats import describe, difference_interval, percentile
from pallas.app import build_app
from pallas.core import gc_tuning, gil_tuning
from pallas.core.db.models import MessageRow
from pallas.core.db.repositories.messages import _row_values
from pallas.core.records import SessionTurn, StoredMessage
from pallas.core.sending import Target
from pallas.core.settings import PallasSettings
from pallas.core.turn import Segment, Sender, TurnInput
from pallas.features.memory.isolation import group_scope
from pallas.features.memory.items import fingerprint
from pallas.features.memory.records import NewMemory
from pallas.features.memory.repository import MemoryRepository
from pallas.onebot.convert import stored_message_from_sent, stored_message_from_turn
from pallas.onebot.lifespan import startup_loaders
from pallas.providers.encoder_slot import EncoderSlot
from pallas.runtime import PallasRuntime
from pallas.turn.service import ChatTurnService

BOT, GROUP = 2_900_000_001, 777_000_001
REPO = Path(__file__).resolve().parents[1]
LINES = [
    "今天吃什么",
    "有人打活动吗",
    "哈哈哈哈",
    "这个版本的新干员好强",
    "下班了",
    "周末去哪玩",
    "我觉得还行吧",
    "有没有人组队",
    "刚才那个视频好好笑",
    "明天要早起",
]


class RecordingSender:
    """Delivery to memory; each sent line is recorded as the OneBot edge records it."""

    def __init__(self, runtime: PallasRuntime) -> None:
        self.runtime = runtime
        self.next_id = -5_000_000_000

    async def send(self, target: Target, segments: list[dict]) -> int | None:
        self.next_id -= 1
        self.runtime.writer.submit(
            stored_message_from_sent(
                bot_id=BOT,
                group_id=target.group_id,
                message_id=self.next_id,
                segments=segments,
                time=self.runtime.clock.now(),
                nickname="帕拉斯",
            )
        )
        return self.next_id


OTHER_GROUPS = 999
MEMBERS = 40  # speakers of the hot group
DISPATCH_S = 0.001  # between the edge recording a message and the turn starting
FACTS = ["喜欢", "讨厌", "在玩", "养了", "住在", "最近在学", "周末常去", "想买"]
THINGS = ["猫", "明日方舟", "火锅", "吉他", "上海", "日语", "爬山", "机械键盘", "咖啡", "原神"]


def _message(rng: random.Random, group: int, message_id: int, t: float) -> dict:
    user = 10_000 + rng.randrange(40)
    return _row_values(
        StoredMessage(
            bot_id=BOT,
            group_id=group,
            message_id=message_id,
            user_id=user,
            time=t,
            text=rng.choice(LINES),
            card=f"群友{user % 100}",
            raw_message="",
            segments=({"type": "text", "data": {"text": rng.choice(LINES)}},),
        )
    )


async def fill_messages(engine: AsyncEngine, count: int, now: float) -> None:
    """Core bulk inserts: the hot group holds a fifth, 999 other groups share the rest."""
    rng = random.Random(7)
    hot = count // 5
    start = now - count * 2
    table = MessageRow.__table__
    batch: list[dict] = []
    async with engine.begin() as conn:
        for i in range(count):
            group = GROUP if i % 5 == 0 and i // 5 < hot else GROUP + 1 + i % OTHER_GROUPS
            batch.append(_message(rng, group, i + 1, start + i * 2))
            if len(batch) == 20_000:
                await conn.execute(table.insert(), batch)
                batch = []
        if batch:
            await conn.execute(table.insert(), batch)


async def _fill_memories(runtime: PallasRuntime, count: int) -> None:
    """Realistic rows through the memory repository (dedup / key rules included)."""
    rng = random.Random(11)
    scope = group_scope(BOT, GROUP)
    repo = MemoryRepository(runtime.sessions)
    now = runtime.clock.now()
    for i in range(count):
        user = 10_000 + i % 40
        text = f"群友{user % 100}{rng.choice(FACTS)}{rng.choice(THINGS)}（记录{i}）"
        kind = "person_facts" if i % 2 else "knowledge"
        await repo.upsert(
            NewMemory(
                bot_id=BOT,
                scope=scope,
                kind=kind,
                key=f"k{i}",
                fingerprint=fingerprint(text),
                text=text,
                origin="extracted",
                now=now - (count - i),
                subject_user_id=user if kind == "person_facts" else None,
                subject_name=f"群友{user % 100}" if kind == "person_facts" else "",
            )
        )


async def _fill_sessions(runtime: PallasRuntime) -> None:
    """Twenty exchanges of history per member of the hot group."""
    now = runtime.clock.now() - 3600
    turns = []
    for user in range(10_000, 10_000 + MEMBERS):
        for k in range(20):
            base = {"bot_id": BOT, "group_id": GROUP, "user_id": user, "created_at": now + k}
            turns.append(SessionTurn(**base, role="user", content=LINES[k % len(LINES)]))
            turns.append(SessionTurn(**base, role="assistant", content="好呀\n我也这么想"))
    await runtime.repos.chat_sessions.append(turns)


async def _fill(runtime: PallasRuntime, messages: int, memories: int) -> None:
    for name, step in (
        (f"{messages} messages", fill_messages(runtime.engine, messages, runtime.clock.now())),
        (f"{memories} memory items", _fill_memories(runtime, memories)),
        ("session history", _fill_sessions(runtime)),
    ):
        t = time.perf_counter()
        await step
        print(f"stored {name} in {time.perf_counter() - t:.1f}s", flush=True)


async def _load_encoder(runtime: PallasRuntime) -> None:
    """Load the encoder and give every memory row of the hot group its vector up front (the
    bot does it in the background; here it must not run during the timed turns)."""
    await runtime.encoder.load()
    encoder = runtime.encoder.encoder
    if encoder is None:
        raise SystemExit("--encoder: the sentence encoder did not load")
    repo = MemoryRepository(runtime.sessions)
    started, done = time.perf_counter(), 0
    for kind in ("person_facts", "knowledge"):
        while rows := await repo.needing_vectors(
            group_scope(BOT, GROUP), kind, encoder.model_id, limit=256
        ):
            vectors = (await encoder.encode([t for _, t in rows])).astype("float64").round(4)
            vectors = vectors.tolist()
            for (item_id, _), vector in zip(rows, vectors, strict=True):
                await repo.set_embedding(item_id, vector, encoder.model_id)
            done += len(rows)
    print(f"embedded {done} memory rows with {encoder.model_id} in "
          f"{time.perf_counter() - started:.1f}s")  # fmt: skip


def _workdir(args: argparse.Namespace) -> tuple[Path, bool]:
    """A temp dir with the config and (when `--db` is filled) a pristine copy of the DB."""
    workdir = Path(tempfile.mkdtemp(prefix="pallas-bench-"))
    fill = not (args.db and Path(args.db).exists())
    if not fill:  # a pristine copy: runs do not see each other's sessions or usage
        shutil.copyfile(args.db, workdir / "bench.db")
    shutil.copytree(REPO / "config", workdir / "config")
    (workdir / "config/groups/default.toml").write_text(
        "[chat]\nmerge_window_s = 0\n[routing.cooldown]\nchat_cooldown_s = 0\n"
        # no daily reply budget: past 600 calls its ladder shortened the context and then
        # answered with a phrase, so turns beyond ~740 added no reply turn to the figures
        "[cost.member]\nburst = 1000\n[cost.budget]\nchat_calls = 0\nchat_tokens = 0\n",
        encoding="utf-8",
    )
    return workdir, fill


async def run(args: argparse.Namespace, workdir: Path, fill: bool) -> None:
    try:
        async with LLMProcess(reply="好呀\n我也这么想") as llm:
            await _run(args, workdir, fill, llm.base_url)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


async def _run(args: argparse.Namespace, workdir: Path, fill: bool, llm_url: str) -> None:
    db = workdir / "bench.db"
    settings = PallasSettings(
        database_url=f"sqlite+aiosqlite:///{db}",
        pallas_config_dir=workdir / "config",
        openai_base_url=llm_url,
        openai_api_key="sk-bench",
    )
    runtime = await PallasRuntime.start(settings, nicknames=("帕拉斯",))
    try:
        if fill:
            await _fill(runtime, args.messages, args.memories)
            if args.db:
                await runtime.stop()
                shutil.copyfile(db, args.db)
                runtime = await PallasRuntime.start(settings, nicknames=("帕拉斯",))
        else:
            print(f"copied {args.db} ({await runtime.repos.messages.count()} messages)")

        async def no_sleep(_: float) -> None:
            return None

        if args.encoder:
            await _load_encoder(runtime)
        app = build_app(runtime, rng=random.Random(1), sleep=no_sleep)
        service = app.chat
        # the bot's start-up loads, in a worker thread as the bot runs them; the heap settled
        await asyncio.to_thread(lambda: [loader() for loader in startup_loaders(app)])
        print(f"start-up heap settled (gc_tuning) in {gc_tuning.settle():.0f} ms")
        profiler = cProfile.Profile() if args.profile else None
        cold, _, _, _, _ = await _turns(runtime, service, range(MEMBERS), None, args.gap)
        print(describe("first turn of each member", cold))
        steady = range(MEMBERS, MEMBERS + args.turns)
        floor = FixedWork(target_ms=5.0)
        interleave = runtime.encoder if args.encoder and args.interleave else None
        turns = await _turns(runtime, service, steady, profiler, args.gap, floor, interleave)
        local_ms, stages, outcomes, call_cpu, slow = turns
        await service.drain_background()
        print(LOCAL_NOTE)
        print(describe("local per REPLY turn", local_ms))
        for name, values in stages.items():
            if "processor" not in name or sorted(values)[len(values) // 2] >= 0.05:
                print(describe(f"  {name}", values))  # processors: those with p50 >= 0.05 ms
        print(describe("loop cpu inside the LLM call", call_cpu))
        print(FLOOR_NOTE)
        print("\n".join(floor.report("local per turn", local_ms)))
        print(f"outcomes: {dict(outcomes)}")
        _print_slow(local_ms, slow, args.slow)
        if interleave is not None:
            _print_interleaved(slow)
        if profiler is not None:
            profiler.dump_stats(args.profile)
            print(f"profile of the turns written to {args.profile} (python -m pstats)")
    finally:
        await runtime.stop()


async def _turns(
    runtime: PallasRuntime,
    service: ChatTurnService,
    turns: range,
    profiler: cProfile.Profile | None,
    gap: float,
    floor: FixedWork | None = None,
    interleave: EncoderSlot | None = None,
) -> tuple[list[float], dict[str, list[float]], Counter[str], list[float], list[TurnDetail]]:
    sender = RecordingSender(runtime)
    details: list[TurnDetail] = []
    watch = GcWatch().__enter__()  # every collection of the run: in a turn or between
    llm_cpu = _count_llm_cpu(runtime)
    cpu_ms: list[float] = []
    between: list[tuple[int, float]] = []
    call_cpu: list[float] = []  # the loop thread's CPU inside each LLM call
    local_ms: list[float] = []
    stages: dict[str, list[float]] = {}
    outcomes: Counter[str] = Counter()
    encoder = interleave.encoder if interleave is not None else None
    for i in turns:
        if interleave is not None:  # two turns with the encoder, two without (`_with_encoder`)
            interleave.encoder = encoder if _with_encoder(i) else None
        if floor is not None:  # the machine's own tail, after the same idle gap as a turn
            floor.sample()
            await asyncio.sleep(gap)
        user = 10_000 + i % MEMBERS
        turn = TurnInput(
            bot_id=BOT,
            group_id=GROUP,
            user_id=user,
            message_id=10_000_000 + i,
            time=runtime.clock.now(),
            text=f"帕拉斯，{LINES[i % len(LINES)]}，{THINGS[i // 10 % len(THINGS)]}呢（{i}）？",
            segments=(Segment("at", {"qq": str(BOT)}),),
            sender=Sender(user, card=f"群友{user}"),
            mentions=(BOT,),
            to_me=True,
        )
        runtime.writer.submit(stored_message_from_turn(turn))  # recorded at the edge
        service.anticipate(turn)  # the edge reads it addressed: its question is encoded ahead
        # then NoneBot dispatches the event to the turn (eight loop rounds, ~1 ms when idle):
        # the writer thread's wake-up for the recorded row happens there, not in the turn
        await asyncio.sleep(DISPATCH_S)
        if profiler is not None:
            profiler.enable()
        between += watch.take()
        started, cpu_started, llm_cpu[0] = time.perf_counter(), time.thread_time(), 0.0
        outcome = await service.handle(turn, sender)
        elapsed = (time.perf_counter() - started) * 1000
        cpu = (time.thread_time() - cpu_started - llm_cpu[0]) * 1000
        pauses = watch.take()
        if profiler is not None:
            profiler.disable()
        outcomes[f"{outcome.outcome.value}:{outcome.reason}"] += 1
        if outcome.outcome != "delivered" or outcome.turn_id is None:
            continue
        snap = await runtime.repos.snapshots.by_turn(outcome.turn_id)
        assert snap is not None
        latency = float(snap.data.get("usage", {}).get("latency_ms", 0))
        local_ms.append(elapsed - latency)
        cpu_ms.append(cpu)
        details.append(
            TurnDetail(i, elapsed - latency, cpu, dict(snap.data.get("stage_ms", {})), pauses)
        )
        details[-1].stages.update(
            (f"src:{k}", v)
            for k, v in (snap.data.get("retrieval") or {}).get("stage_ms", {}).items()
        )
        details[-1].stages.update(
            (f"proc:{s['id']}", s["ms"]) for s in snap.data.get("pipeline") or [] if s["ms"] >= 0.5
        )
        call_cpu.append(llm_cpu[0] * 1000)
        for name, ms in snap.data.get("stage_ms", {}).items():
            stages.setdefault(f"stage {name}", []).append(float(ms))
        for name, ms in (snap.data.get("retrieval") or {}).get("stage_ms", {}).items():
            stages.setdefault(f"  source {name}", []).append(float(ms))
        for step in snap.data.get("pipeline") or []:
            stages.setdefault(f"  processor {step.get('id')}", []).append(float(step["ms"]))
        await asyncio.sleep(gap)  # a real LLM call takes longer: background work of the turn
    watch.__exit__()
    stages = {"cpu of it (loop thread)": cpu_ms, **stages}
    if turns:
        print(f"gc between the turns (LLM call, background work): {gc_summary(between)}")
    return local_ms, stages, outcomes, call_cpu, details


def _with_encoder(turn: int) -> bool:
    """`--interleave`: turns 0, 1 with the encoder, 2, 3 without, …: both halves see every
    member and the same drift of a shared machine's speed."""
    return (turn // 2) % 2 == 0


def _print_interleaved(details: list[TurnDetail]) -> None:
    """The same process's turns with and without the encoder, and the difference."""
    on = [d.local_ms for d in details if _with_encoder(d.index)]
    off = [d.local_ms for d in details if not _with_encoder(d.index)]
    on_cpu = [d.cpu_ms for d in details if _with_encoder(d.index)]
    off_cpu = [d.cpu_ms for d in details if not _with_encoder(d.index)]
    if not on or not off:
        return
    print("interleaved in one process (two turns with the encoder, two without):")
    print(describe("  local, encoder on", on))
    print(describe("  local, encoder off", off))
    print(describe("  loop cpu, encoder on", on_cpu))
    print(describe("  loop cpu, encoder off", off_cpu))
    for q in (50, 90, 99):
        low, high = difference_interval(on, off, q)
        print(f"  on − off p{q}: local {percentile(on, q) - percentile(off, q):+.2f} ms "
              f"(95 % interval {low:+.1f} … {high:+.1f}), "
              f"loop cpu {percentile(on_cpu, q) - percentile(off_cpu, q):+.2f} ms")  # fmt: skip
    print("  where it goes (stages that differ by 0.3 ms or more at p50 or p99; sources overlap):")
    for name in sorted({k for d in details for k in d.stages}):
        with_ = [d.stages.get(name, 0.0) for d in details if _with_encoder(d.index)]
        without = [d.stages.get(name, 0.0) for d in details if not _with_encoder(d.index)]
        p50 = percentile(with_, 50) - percentile(without, 50)
        p99 = percentile(with_, 99) - percentile(without, 99)
        if abs(p50) >= 0.3 or abs(p99) >= 0.3:
            on_q = f"on p50 {percentile(with_, 50):6.2f} p99 {percentile(with_, 99):6.2f}"
            off_q = f"off p50 {percentile(without, 50):6.2f} p99 {percentile(without, 99):6.2f}"
            print(f"    {name:<28} {on_q} · {off_q} · on − off {p50:+6.2f} / {p99:+6.2f} ms")


def _count_llm_cpu(runtime: PallasRuntime) -> list[float]:
    """Wrap the LLM call so the event-loop thread's CPU time inside it (the openai client,
    whatever else the loop runs during the wait) can be left out of a turn's local CPU time."""
    spent = [0.0]
    complete = runtime.llm.complete

    async def counted(*args: Any, **kwargs: Any) -> Any:
        started = time.thread_time()
        try:
            return await complete(*args, **kwargs)
        finally:
            spent[0] += time.thread_time() - started

    runtime.llm.complete = counted  # type: ignore[method-assign]
    return spent


@dataclass
class TurnDetail:
    index: int
    local_ms: float
    cpu_ms: float
    stages: dict[str, float]
    gc: list[tuple[int, float]]  # (generation, pause ms) of the collections during the turn


def _print_slow(local_ms: list[float], details: list[TurnDetail], show: bool) -> None:
    """GC pauses inside the turns; with `--slow`, each turn above p90 with its stages."""
    pauses = [p for d in details for p in d.gc]
    print(f"gc during the turns: {gc_summary(pauses)}")
    if not show:
        return
    p90 = percentile(local_ms, 90)
    for d in sorted(details, key=lambda d: -d.local_ms):
        if d.local_ms < p90:
            break
        parts = " ".join(f"{k}={v:.1f}" for k, v in d.stages.items() if v >= 0.5)
        print(
            f"  slow turn {d.index}: {d.local_ms:.1f}ms (cpu {d.cpu_ms:.1f}ms) "
            f"gc[{gc_summary(d.gc)}] {parts}"
        )


FLOOR_NOTE = (
    "the machine's own tail: the same fixed pure-Python work, timed before each turn after the"
    "\n  same idle gap (benchmarks.cpu_floor); its p99/p50 is what the machine adds to a tail,"
    "\n  its p50 against the back-to-back time what an idle gap costs (cold caches)"
)

LOCAL_NOTE = (
    "local = the turn's wall time minus the LLM call (measured around the chat request);"
    "\n  cpu = the event-loop thread's CPU time in the same span (wall minus cpu: waiting for"
    "\n  the GIL, the disk or a CPU shared with other processes)"
    "\n  the loop thread's CPU inside the LLM call (the openai client sending and parsing, and"
    "\n  the turn's snapshot built meanwhile) is printed on its own line below"
)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--encoder", action="store_true", help="rank memory by meaning (#47)")
    parser.add_argument(
        "--interleave",
        action="store_true",
        help="with --encoder: turns with and without it alternate (two and two) in one process",
    )
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--gap", type=float, default=0.1, help="seconds between turns")
    parser.add_argument("--db", default="", help="fill this SQLite file once, later runs copy it")
    parser.add_argument("--profile", default="", help="write a cProfile of the turns here")
    parser.add_argument("--slow", action="store_true", help="print the turns above p90")
    parser.add_argument(
        "--loop",
        choices=("asyncio", "uvloop"),
        default="asyncio",
        help="the event loop (the running bot's is uvloop: uvicorn picks it when installed)",
    )
    args = parser.parse_args(argv or [])
    gc_tuning.tune()  # as bot.py does at import
    gil_tuning.tune()
    factory = None
    if args.loop == "uvloop":
        import uvloop

        factory = uvloop.new_event_loop
    with asyncio.Runner(loop_factory=factory) as runner:
        runner.run(run(args, *_workdir(args)))


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
