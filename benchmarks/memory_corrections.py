"""Offline corrections (issue 47): of the corrections taught with 记住 when no judge model answers,
how many retire the fact they replace — and of the controls, how many retire nothing.

The set is `benchmarks/_memory_corrections_offline.py` (written before the change, frozen).
Every case runs for a fresh member in a group of its own through the real member-command path
(`handle_member_message`) with no model configured, so the teaching judge is unavailable and the
offline fallback decides. `--pad N` first teaches N filler facts per member (50 = the teaching
cap: before issue 47 every correction there was refused).

    python -m benchmarks.memory_corrections [--set frozen|dev] [--pad 0|50] [--verbose]

`--set dev` runs the development half (`_memory_corrections_dev`), the one tuned on.

Before (main at 49271f9, measured 2026-12-06 before any change; slot rules only): corrections
0 / 26 right (不对 0/4, 更正一下 0/3, 纠正一下 0/3, 作废 0/3, 过时了 0/3, plain 0/10; every new line
was stored beside the old fact, the marker kept in it: "不对，TA的血型是O型"), controls 12 / 12;
at the cap (--pad 50) corrections 0 / 26 and controls 0 / 12 (every teaching refused).

After (issue 47: the marker read and left out, the slot rules, then the meaning step of
`corrections` with the in-wheel encoder; tuned on the dev half only, the frozen set run once
after): corrections 25 / 26 (不对 4/4, 更正一下 3/3, 纠正一下 3/3, 作废 3/3, 过时了 3/3, plain
9/10), controls 12 / 12; by the words alone (--no-encoder) 24 / 26 at that first run, 25 / 26
after a fix found by a flow test (a number was split inside a value: "172" / "178"); at the cap
(--pad 50) 25 / 26, 12 / 12 (each control stored, the oldest unused filler dropped and named).
The miss: "我的网名叫不想上班" — a value holding 不 reads as a negation to the same-frame rule.

2026-12-07, with a change told in words retired by meaning (`memory.meaning`, tuned on the
member-recall dev half): unchanged, 25 / 26 and 12 / 12 at 6 and at 50 facts (dev set 19 / 20,
10 / 10).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import shutil
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from benchmarks._memory_corrections_dev import DEV_CASES, DEV_CONTROLS
from benchmarks._memory_corrections_offline import CASES, CONTROLS, PADDING, CorrectionCase
from pallas.app_wiring import memory_service_for
from pallas.core.clock import FakeClock
from pallas.core.settings import PallasSettings
from pallas.core.state import MemoryStateStore
from pallas.core.turn import Sender, TurnInput
from pallas.features.memory.isolation import group_scope
from pallas.features.memory.service import MemoryService
from pallas.features.memory_commands.member_commands import handle_member_message
from pallas.providers.sentence_encoder import SentenceEncoder, load_local_encoder
from pallas.runtime import PallasRuntime

BOT, GROUP0, USER0 = 2_900_000_002, 781_000_001, 47_001
REPO = Path(__file__).resolve().parents[1]
ALIAS = "牛牛"
_FILLER_PLACES = (
    "北京", "上海", "广州", "深圳", "成都", "重庆", "西安", "杭州", "南京", "武汉", "长沙", "厦门",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Outcome:
    case: CorrectionCase
    right: bool
    reply: str
    live: tuple[str, ...]


def filler(n: int) -> str:
    """The n-th filler fact: about a postcard collection, no topic of the set."""
    return f"我收藏的第{n + 1}张明信片是从{_FILLER_PLACES[n % len(_FILLER_PLACES)]}寄来的"


async def _say(
    service: MemoryService, encoder: SentenceEncoder | None, group: int, user: int, text: str,
    mid: int,
) -> str:  # fmt: skip
    turn = TurnInput(BOT, group, user, mid, 0.0, f"{ALIAS} 记住 {text}",
                     sender=Sender(user, card="群友"), to_me=True)  # fmt: skip
    reply = await handle_member_message(service, turn, aliases=(ALIAS,), encoder=encoder)
    return reply or ""


async def run_case(
    service: MemoryService,
    encoder: SentenceEncoder | None,
    clock: FakeClock,
    n: int,
    case: CorrectionCase,
    pad: int,
) -> Outcome:
    group, user = GROUP0 + n, USER0 + n
    mid = 1000 * n
    before = (*(filler(k) for k in range(max(0, pad - len(PADDING) - len(case.old)))), *PADDING)
    for k, text in enumerate((*before, *case.old)):
        clock.advance(60)
        await _say(service, encoder, group, user, text, mid + k)
    clock.advance(3600)
    reply = await _say(service, encoder, group, user, case.said, mid + 999)
    items = await service.repo.list_items(
        scopes=[group_scope(BOT, group)], subject_user_id=user, limit=500
    )
    live = tuple(i.text for i in items)
    return Outcome(case, is_right(case, live), reply, live)


def _held(fact: str, live: tuple[str, ...]) -> bool:
    """`fact` (first person, as taught) is still live, in whatever words it was stored."""
    core = fact.removeprefix("我")
    return any(core in text for text in live)


def is_right(case: CorrectionCase, live: tuple[str, ...]) -> bool:
    """The retired old fact gone, the other old facts and the six padding facts kept, the new
    value live. (The fillers of `--pad` only fill up to the cap: one may be dropped there.)"""
    kept = [f for f in (*PADDING, *case.old) if f not in case.retired]
    if any(_held(f, live) for f in case.retired) or not all(_held(f, live) for f in kept):
        return False
    return any(case.new_marker in text for text in live if not _is_old(text, case))


def _is_old(text: str, case: CorrectionCase) -> bool:
    return any(f.removeprefix("我") in text for f in (*PADDING, *case.old))


SETS = {"frozen": (CASES, CONTROLS), "dev": (DEV_CASES, DEV_CONTROLS)}


async def run(
    pad: int, cases: tuple[CorrectionCase, ...] = CASES, *, encoder: bool = True
) -> list[Outcome]:
    workdir = Path(tempfile.mkdtemp(prefix="pallas-memc-"))
    shutil.copytree(REPO / "config", workdir / "config")
    settings = PallasSettings(
        database_url=f"sqlite+aiosqlite:///{workdir / 'c.db'}",
        pallas_config_dir=workdir / "config",
    )
    clock = FakeClock(1_765_000_000.0)
    rt = await PallasRuntime.start(settings, clock=clock, state=MemoryStateStore(clock))
    try:
        service = memory_service_for(rt)
        model = load_local_encoder() if encoder else None
        outcomes = [await run_case(service, model, clock, n, c, pad) for n, c in enumerate(cases)]
        await service.drain()
        return outcomes
    finally:
        await rt.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def report(
    outcomes: list[Outcome], pad: int, verbose: bool, controls_of: tuple[CorrectionCase, ...]
) -> None:
    controls = set(controls_of)
    fixes = [o for o in outcomes if o.case not in controls]
    keeps = [o for o in outcomes if o.case in controls]
    by_marker: dict[str, list[Outcome]] = defaultdict(list)
    for o in fixes:
        by_marker[o.case.marker].append(o)
    print(f"offline corrections (no judge model), {pad or len(PADDING)} facts before each case")
    print(f"  corrections right  {sum(o.right for o in fixes)} / {len(fixes)}")
    for marker, rows in by_marker.items():
        print(f"    {marker:<10} {sum(o.right for o in rows)} / {len(rows)}")
    print(f"  controls right     {sum(o.right for o in keeps)} / {len(keeps)}")
    if verbose:
        for o in outcomes:
            if not o.right:
                print(f"  wrong: {o.case.said!r} -> {o.reply!r}; live {list(o.live)[:3]}")


def main(argv: list[str] | None = None) -> int:
    logging.getLogger("pallas").setLevel(logging.ERROR)
    parser = argparse.ArgumentParser(prog="python -m benchmarks.memory_corrections")
    parser.add_argument("--pad", type=int, default=0, help="facts taught before (50 = the cap)")
    parser.add_argument("--set", choices=sorted(SETS), default="frozen")
    parser.add_argument("--no-encoder", action="store_true", help="decide by the words alone")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv or [])
    cases, controls = SETS[args.set]
    print(f"set: {args.set}, encoder: {'off' if args.no_encoder else 'on'}")
    outcomes = asyncio.run(run(args.pad, cases, encoder=not args.no_encoder))
    report(outcomes, args.pad, args.verbose, controls)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
