"""Member recall at 10 / 50 / 200 facts a member (issue 47): the right few facts, not all of them.

Sets: `_member_recall_data` (dev half, tune on it), `_member_recall_frozen` (test half, written
before any tuning; never tune on it), `_member_recall_frozen2` (test2: a second test half,
written before any further tuning; never tune on it either) and `_member_recall_frozen3` (test3:
a third test half, written blind to how the product ranks memory; never tune on it either;
"both" stays dev + test). Each member teaches its facts with "@牛牛 记住 …" through the real
member-command path (`memory_heldout.say`'s path), padded with the set's distractor facts to the
size (targets spread among them); days later it asks in other words, and the real sources and
request assembly run in-process (`memory_heldout.assemble`). At size 10 a member's facts are
split over several users (at most size / 2 targets each).

    python -m benchmarks.member_recall [--facts 10,50,200] [--half dev|test|test2|test3|both]
                                       [--verbose] [--no-updates] [--no-encoder]

Per half and size:
- acc@1 / rec@5: the needed fact first / among the first five of the member's own facts as the
  product ranks them (`MemoryService.retrieve` of person facts for the question, the group's
  config with top-k and char cap opened up and no recency fallback: the relevance order);
  rec@5 ungated: the same with the similarity gate and threshold at 0 (how the product orders
  the member's facts before the gate cuts);
- in req: the share of questions whose fact (its answer fragment) is in the request;
- neg empty (ranked / req): negative controls (never said) with no fact of the member above the
  relevance threshold / none of the member's facts in the request;
- mem tok p50: tokens (`count_tokens`, cl100k as the product counts) of the memory blocks of a
  request; facts/req p50: the member's facts in it; retrieval p50 / p99: the person-facts source
  (retrieval + profile) for one question;
- stored p50: the member's live facts at ask time (the teaching cap, 50 today, is lifted while
  padding so 200 means 200 — see `cap_lifted`); padding refused: teachings refused anyway;
  guard-refused, replaced: distractors the fact guard refused, replaced by unused ones.

Corrections and denials, once per half: a fresh member teaches the old fact, is padded to 10
facts ("below") or to the teaching cap ("at cap"), then teaches the correction with 记住 (a denial
with 记住 or in plain chat). Right: the update retired the old row and (corrections) the new
value is stored; refused: the reply is the cap's "关于你的事我已经记了好多啦"; old lost: a padding
fact had retired the old one already (a slot rule), so the update could not be right; old
dropped by the cap: the cap dropped it as the oldest unused fact, which is not the update.

Stored vectors: rows with a vector in the bench database and their mean bytes as stored (a JSON
column), scaled to 100,000 facts. When `pallas.providers.sentence_encoder` exists: the local
encoder's load time, RSS delta (budget +150 MB), one encode's latency, and float32 vector bytes
at 100,000 facts, measured in a fresh process (`_encoder_figures`). Offline: no endpoint is
configured; nothing goes to the network.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import sqlite3
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from benchmarks import (
    _member_recall_data,
    _member_recall_frozen,
    _member_recall_frozen2,
    _member_recall_frozen3,
)
from benchmarks._encoder_figures import encoder_figures, print_encoder_figures
from benchmarks._member_recall_shape import Correction, Denial, MemberFact
from benchmarks.memory_heldout import DAY, START, _turn, assemble, bench_runtime, say
from benchmarks.memory_quality import BOT, BOT_ALIAS, END, GROUP, USER0
from benchmarks.stats import percentile
from pallas.app_wiring import memory_service_for, memory_sources_for
from pallas.context.context import GatherRequest
from pallas.core.clock import FakeClock
from pallas.core.tokens import count_tokens
from pallas.features.memory import (
    PERSON_FACTS,
    MemoryItem,
    MemoryService,
    group_scope,
    readable_scopes,
)
from pallas.features.memory_commands import handle_member_message
from pallas.features.memory_prompt.profile import ASIDE
from pallas.ranking import warm_up
from pallas.runtime import PallasRuntime

HALVES: dict[str, ModuleType] = {
    "dev": _member_recall_data,
    "test": _member_recall_frozen,
    "test2": _member_recall_frozen2,
    "test3": _member_recall_frozen3,
}
USERS = USER0 + 10_000
UPDATE_USERS = USER0 + 20_000
TEACH_GAP = 600.0  # seconds between two teachings of the bench (clock only)
_COMMANDS = sys.modules[handle_member_message.__module__]  # where the cap and its reply live
CAP_REPLY = str(getattr(_COMMANDS, "REPLY_TOO_MANY", "关于你的事我已经记了好多啦"))
# A distractor the fact guard refuses ("…身份证" reads as the bot's persona) is replaced by the
# next unused one, so every member has exactly the size's facts.
REFUSED_REPLY = str(getattr(_COMMANDS, "REPLY_REFUSED", "这个我可记不了哦"))


def teaching_cap() -> int:
    return int(getattr(_COMMANDS, "MAX_TAUGHT_PER_USER", 50))


@contextmanager
def cap_lifted() -> Iterator[None]:
    """Padding to 200 facts passes the teaching cap (50 on main): the cap is measured apart."""
    had = hasattr(_COMMANDS, "MAX_TAUGHT_PER_USER")
    old = getattr(_COMMANDS, "MAX_TAUGHT_PER_USER", None)
    if had:
        _COMMANDS.MAX_TAUGHT_PER_USER = 1_000_000  # type: ignore[attr-defined]
    try:
        yield
    finally:
        if had:
            _COMMANDS.MAX_TAUGHT_PER_USER = old  # type: ignore[attr-defined]


ENCODER: dict[str, Any] = {"use": True, "state": "none (no pallas.runtime encoder slot)"}
# Where the member-command path takes the encoder (corrections and "忘掉我…" by meaning), it is
# handed the runtime's loaded one, as the plugin is meant to.
_COMMANDS_TAKE_ENCODER = "encoder" in inspect.signature(handle_member_message).parameters


async def load_encoder(rt: PallasRuntime) -> None:
    """Load the runtime's local sentence encoder when the product has one (the bot's edge does
    it at start-up; tests and the CLI do not), before anything is taught: steady state."""
    slot = getattr(rt, "encoder", None)
    if slot is None or not ENCODER["use"]:
        if slot is not None:
            ENCODER["state"] = "off (--no-encoder)"
        return
    await slot.load()
    ENCODER["state"] = f"{slot.phase} {slot.model_id}".strip()
    ENCODER["model"] = slot.encoder
    if _COMMANDS_TAKE_ENCODER:
        ENCODER["state"] += "; handed to the member commands"


# ---------------------------------------------------------------- the plan of who teaches what
@dataclass(frozen=True, slots=True)
class Learner:
    user: int
    member: int
    targets: tuple[MemberFact, ...]
    lines: tuple[str, ...]  # taught in this order (targets spread among distractors)
    spares: tuple[str, ...]  # unused distractors, in order: stand-ins for refused ones


def _rotated(pool: Sequence[str], by: int) -> list[str]:
    by %= len(pool)
    return [*pool[by:], *pool[:by]]


def plan(half: ModuleType, size: int) -> list[Learner]:
    facts: tuple[MemberFact, ...] = half.FACTS
    pool: tuple[str, ...] = half.DISTRACTORS
    learners: list[Learner] = []
    for member in sorted({f.member for f in facts}):
        mine = [f for f in facts if f.member == member]
        per_user = max(1, min(len(mine), size // 2))
        for n, start in enumerate(range(0, len(mine), per_user)):
            chunk = mine[start : start + per_user]
            order = _rotated(pool, member * 37 + n * 11)
            pad, spares = order[: size - len(chunk)], order[size - len(chunk) :]
            slots = {int((j + 0.5) * size / len(chunk)): f.taught for j, f in enumerate(chunk)}
            lines, rest = [], iter(pad)
            for pos in range(size):
                lines.append(slots[pos] if pos in slots else next(rest))
            user = USERS + member * 100 + n
            learners.append(Learner(user, member, tuple(chunk), tuple(lines), tuple(spares)))
    return learners


# ---------------------------------------------------------------- teaching and asking
async def teach(service: MemoryService, clock: FakeClock, user: int, text: str, at: float) -> str:
    """A "@牛牛 <text>" line through the member-command path; its reply ("" = none)."""
    clock.set(at)
    turn = _turn(user, f"{BOT_ALIAS} {text}", at)
    extra: dict[str, Any] = {"encoder": ENCODER.get("model")} if _COMMANDS_TAKE_ENCODER else {}
    return await handle_member_message(service, turn, aliases=(BOT_ALIAS,), **extra) or ""


async def teach_padded(
    service: MemoryService,
    clock: FakeClock,
    user: int,
    lines: Sequence[str],
    spares: Sequence[str],
    at: float,
) -> tuple[float, int, int]:
    """Teach `lines` ("记住 …" each), a refused distractor replaced by the next spare:
    (the clock after, teachings refused by the cap, distractors replaced)."""
    capped = replaced = 0
    spare = iter(spares)
    for line in lines:
        while True:
            at += TEACH_GAP
            reply = await teach(service, clock, user, f"记住 {line}", at)
            capped += reply == CAP_REPLY
            if reply != REFUSED_REPLY or (line := next(spare, "")) == "":
                break
            replaced += 1
    return at, capped, replaced


async def live(service: MemoryService, user: int) -> list[MemoryItem]:
    return await service.repo.list_items(
        scopes=[group_scope(BOT, GROUP)], kind=PERSON_FACTS, subject_user_id=user, limit=100_000
    )


@dataclass(frozen=True, slots=True)
class Asked:
    rank: int | None  # 0-based rank of the needed fact among the member's ranked facts
    above: int  # the member's facts above the relevance threshold
    rank_ungated: int | None  # the same rank with the gate and threshold at 0 (ranking only)
    in_request: bool
    facts_in_request: int
    in_told: bool  # in the request as relevant, not only aside (a small profile's rest)
    facts_told: int
    memory_tokens: int
    retrieval_ms: float


def _request_for(rt: PallasRuntime, user: int, question: str) -> GatherRequest[Any]:
    turn = _turn(user, question, END)
    config = rt.group_configs.get(GROUP)
    return GatherRequest(turn, question, END, config, "帕拉斯", True, False, True)


async def ask(
    rt: PallasRuntime,
    service: MemoryService,
    sources: Sequence[Any],
    user: int,
    question: str,
    answer: str,
    own: set[str],
) -> Asked:
    person = next(s for s in sources if getattr(s, "name", "") == "person_facts")
    t0 = time.perf_counter()
    await person.gather(_request_for(rt, user, question))
    retrieval_ms = (time.perf_counter() - t0) * 1000
    memory = rt.group_configs.get(GROUP).memory
    block = memory.block(PERSON_FACTS).model_copy(update={"top_k": 100_000, "max_chars": 10**9})
    ranked = await service.retrieve(
        PERSON_FACTS, question, scopes=readable_scopes(BOT, GROUP, (), user_id=user),
        config=memory.model_copy(update={PERSON_FACTS: block}), now=END, bot_id=BOT,
        group_id=GROUP, subject_user_id=user, fallback_k=0,
    )  # fmt: skip
    rank = next((i for i, item in enumerate(ranked.items) if answer and answer in item.text), None)
    open_block = block.model_copy(
        update={"min_similarity": 0.0, "min_similarity_with_vectors": None, "threshold": 0.0}
    )
    every = await service.retrieve(
        PERSON_FACTS, question, scopes=readable_scopes(BOT, GROUP, (), user_id=user),
        config=memory.model_copy(update={PERSON_FACTS: open_block}), now=END, bot_id=BOT,
        group_id=GROUP, subject_user_id=user, fallback_k=0,
    )  # fmt: skip
    ungated = next(
        (i for i, item in enumerate(every.items) if answer and answer in item.text), None
    )
    bundle, request = await assemble(rt, sources, user, question)
    text = "\n".join(str(m.get("content", "")) for m in request.messages)
    refs = {r for b in bundle.blocks.values() for r in b.memory_ids}
    aside_refs, told_text = _aside(bundle, text)
    return Asked(
        rank=rank,
        above=len(ranked.items),
        rank_ungated=ungated,
        in_request=bool(answer) and answer in text,
        facts_in_request=len(refs & own),
        in_told=bool(answer) and answer in told_text,
        facts_told=len((refs - aside_refs) & own),
        memory_tokens=sum(count_tokens(b.text) for b in bundle.blocks.values()),
        retrieval_ms=retrieval_ms,
    )


@dataclass(frozen=True, slots=True)
class SizeResult:
    size: int
    questions: list[tuple[MemberFact, Asked]]
    negatives: list[Asked]
    stored: list[int]
    targets_lost: int  # target facts no longer live at ask time (retired by padding)
    padding_refused: int
    replaced: int  # distractors the fact guard refused, replaced by spares
    vectors: tuple[int, int, float]  # rows, rows with a stored vector, mean bytes of one


async def run_size(half: ModuleType, size: int) -> SizeResult:
    learners = plan(half, size)
    async with bench_runtime() as (rt, clock):
        await load_encoder(rt)
        service = memory_service_for(rt)
        sources = memory_sources_for(rt, service)
        warm_up()
        refused = replaced = 0
        at = START
        with cap_lifted():
            for learner in learners:
                at, capped, swapped = await teach_padded(
                    service, clock, learner.user, learner.lines, learner.spares, at
                )
                refused, replaced = refused + capped, replaced + swapped
        await service.drain()
        clock.set(END)
        questions: list[tuple[MemberFact, Asked]] = []
        negatives: list[Asked] = []
        stored: list[int] = []
        lost = 0
        first_user: dict[int, int] = {}
        for learner in learners:
            items = await live(service, learner.user)
            own = {i.ref for i in items}
            stored.append(len(items))
            first_user.setdefault(learner.member, learner.user)
            for fact in learner.targets:
                lost += not any(fact.answer in i.text for i in items)
                asked = await ask(
                    rt, service, sources, learner.user, fact.question, fact.answer, own
                )
                questions.append((fact, asked))
        for negative in half.NEGATIVES:
            user = first_user[negative.member]
            own = {i.ref for i in await live(service, user)}
            negatives.append(await ask(rt, service, sources, user, negative.question, "", own))
        vectors = stored_vectors(rt)
        return SizeResult(size, questions, negatives, stored, lost, refused, replaced, vectors)


def stored_vectors(rt: PallasRuntime) -> tuple[int, int, float]:
    """(memory rows, rows with a vector, mean bytes of a stored vector) in the bench's SQLite
    file: what vectors cost as the product stores them (a JSON column)."""
    path = rt.settings.database_url.split("///", 1)[1]
    with sqlite3.connect(path) as db:
        (rows,) = db.execute("SELECT count(*) FROM memory_item").fetchone()
        with_vector, mean = db.execute(  # a JSON column: no vector is SQL NULL or JSON null
            "SELECT count(*), avg(length(embedding)) FROM memory_item"
            " WHERE embedding IS NOT NULL AND embedding != 'null'"
        ).fetchone()
    return int(rows), int(with_vector), float(mean or 0.0)


# ---------------------------------------------------------------- corrections and denials
@dataclass(frozen=True, slots=True)
class Update:
    what: str  # "correction+marker" | "correction" | "denial 记住" | "denial chat"
    where: str  # "below" | "at cap"
    right: bool
    refused: bool
    lost: bool  # the old fact was retired by a padding fact before the update was said
    dropped: bool  # the old fact was dropped by the cap (oldest unused), not by the update
    line: str


async def _update(
    service: MemoryService,
    clock: FakeClock,
    user: int,
    case: Correction | Denial,
    pad: Sequence[str],
    spares: Sequence[str],
    at: float,
) -> tuple[bool, bool, bool, bool]:
    """(right, refused, old lost while padding, old dropped by the cap) for one correction or
    denial after `pad` distractors. Right: the update itself retired the old row (and stored
    the new value); a row the cap dropped as the oldest unused ("cap_drop") does not count."""
    await teach(service, clock, user, f"记住 {case.old}", at)
    first = await live(service, user)
    old_ref = first[0].ref if first else ""
    at, _, _ = await teach_padded(service, clock, user, pad, spares, at)
    lost = old_ref not in {i.ref for i in await live(service, user)}
    at += 2 * DAY
    if isinstance(case, Correction):
        reply = await teach(service, clock, user, f"记住 {case.new}", at)
    elif case.via == "teach":
        reply = await teach(service, clock, user, case.line, at)
    else:
        reply = ""
        await say(service, clock, user, case.line, at)
    await service.drain()
    after = await live(service, user)
    every = await service.repo.list_items(
        scopes=[group_scope(BOT, GROUP)], kind=PERSON_FACTS, subject_user_id=user,
        include_deleted=True, limit=100_000,
    )  # fmt: skip
    old = next((i for i in every if i.ref == old_ref), None)
    dropped = old is not None and old.replaced_by is None and old.delete_reason == "cap_drop"
    retired = bool(old_ref) and not lost and not dropped and old_ref not in {i.ref for i in after}
    if isinstance(case, Correction):
        stored_new = any(case.new_answer in i.text for i in after if i.ref != old_ref)
        return retired and stored_new, reply == CAP_REPLY, lost, dropped
    return retired, reply == CAP_REPLY, lost, dropped


async def run_updates(half: ModuleType) -> list[Update]:
    cases: list[tuple[str, Correction | Denial]] = []
    for c in half.CORRECTIONS:
        cases.append(("correction+marker" if c.marker else "correction", c))
    for d in half.DENIALS:
        cases.append(("denial 记住" if d.via == "teach" else "denial chat", d))
    out: list[Update] = []
    async with bench_runtime() as (rt, clock):
        await load_encoder(rt)
        service = memory_service_for(rt)
        warm_up()
        at = START
        for where, pad_to in (("below", 10), ("at cap", teaching_cap())):
            for j, (what, case) in enumerate(cases):
                user = UPDATE_USERS + (1000 if where == "at cap" else 0) + j
                order = _rotated(half.DISTRACTORS, j * 13)
                pad, spares = order[: pad_to - 1], order[pad_to - 1 :]
                right, refused, lost, dropped = await _update(
                    service, clock, user, case, pad, spares, at
                )
                at += (pad_to + 2) * TEACH_GAP + 2 * DAY
                line = case.new if isinstance(case, Correction) else case.line
                out.append(Update(what, where, right, refused, lost, dropped, line))
    return out


# ---------------------------------------------------------------- report
def _pct(hits: int, n: int) -> str:
    return f"{hits}/{n} {100 * hits / max(1, n):3.0f}%"


def _aside(bundle: Any, text: str) -> tuple[set[str], str]:
    """The refs the person-facts block sets aside (a small profile's facts not relevant to
    the question: the last `aside` of its refs) and the request's text without them."""
    block = next((b for b in bundle.blocks.values() if b.source == PERSON_FACTS), None)
    n = int(bundle.traces.get(PERSON_FACTS, {}).get("profile", {}).get("aside", 0))
    if block is None or not n or ASIDE not in block.text:
        return set(), text
    return set(block.memory_ids[-n:]), text.replace(block.text[block.text.index(ASIDE) :], "")


def size_row(half: str, r: SizeResult) -> str:
    asked = [a for _, a in r.questions]
    n = len(asked)
    acc1 = sum(a.rank == 0 for a in asked)
    rec5 = sum(a.rank is not None and a.rank < 5 for a in asked)
    rec5_open = sum(a.rank_ungated is not None and a.rank_ungated < 5 for a in asked)
    in_req = sum(a.in_request for a in asked)
    in_told = sum(a.in_told for a in asked)
    neg_ranked = sum(a.above == 0 for a in r.negatives)
    neg_req = sum(a.facts_in_request == 0 for a in r.negatives)
    neg_told = sum(a.facts_told == 0 for a in r.negatives)
    every = [*asked, *r.negatives]
    tokens = percentile([float(a.memory_tokens) for a in every], 50)
    facts = percentile([float(a.facts_in_request) for a in every], 50)
    ms = [a.retrieval_ms for a in every]
    return (
        f"| {half} | {r.size} | {_pct(acc1, n)} | {_pct(rec5, n)} | {_pct(rec5_open, n)} "
        f"| {_pct(in_req, n)} | {_pct(in_told, n)} "
        f"| {_pct(neg_ranked, len(r.negatives))} | {_pct(neg_req, len(r.negatives))} "
        f"| {_pct(neg_told, len(r.negatives))} "
        f"| {tokens:.0f} | {facts:.0f} | {percentile(ms, 50):.1f} | {percentile(ms, 99):.1f} "
        f"| {percentile([float(s) for s in r.stored], 50):.0f} | {r.targets_lost} "
        f"| {r.padding_refused} | {r.replaced} |"
    )


SIZE_HEADER = (
    "| half | facts/member | acc@1 | rec@5 | rec@5 ungated | in req | in req (told) "
    "| neg empty (ranked) | neg empty (req) | neg empty (told) "
    "| mem tok p50 | facts/req p50 | retrieval p50 ms | p99 ms | stored p50 | targets lost "
    "| padding refused | guard-refused, replaced |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def kind_rows(half: str, r: SizeResult) -> list[str]:
    rows = []
    for kind in ("direct", "paraphrase", "category"):
        asked = [a for f, a in r.questions if f.kind == kind]
        n = len(asked)
        rows.append(
            f"| {half} | {r.size} | {kind} | {_pct(sum(a.rank == 0 for a in asked), n)} "
            f"| {_pct(sum(a.rank is not None and a.rank < 5 for a in asked), n)} "
            f"| {_pct(sum(a.in_request for a in asked), n)} |"
        )
    return rows


def update_rows(half: str, updates: list[Update]) -> list[str]:
    rows = []
    for where in ("below", "at cap"):
        for what in ("correction+marker", "correction", "denial 记住", "denial chat"):
            us = [u for u in updates if u.where == where and u.what == what]
            if us:
                rows.append(
                    f"| {half} | {where} | {what} | {_pct(sum(u.right for u in us), len(us))} "
                    f"| {sum(u.refused for u in us)}/{len(us)} | {sum(u.lost for u in us)} "
                    f"| {sum(u.dropped for u in us)} |"
                )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.member_recall")
    parser.add_argument("--facts", default="10,50,200", help="facts per member, comma-separated")
    parser.add_argument("--half", default="dev", choices=["dev", "test", "test2", "test3", "both"])
    parser.add_argument("--verbose", action="store_true", help="list the misses (dev half only)")
    parser.add_argument(
        "--no-encoder",
        dest="encoder",
        action="store_false",
        help="leave the runtime's local sentence encoder unloaded (BM25 and concepts)",
    )
    parser.add_argument(
        "--no-updates",
        dest="updates",
        action="store_false",
        help="skip corrections and denials (a quicker ranking run)",
    )
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.facts.split(",")]
    halves = ["dev", "test"] if args.half == "both" else [args.half]
    ENCODER["use"] = args.encoder
    print(f"member recall: halves {', '.join(halves)}; teaching cap {teaching_cap()}; offline")
    sized: list[tuple[str, SizeResult]] = []
    updates: list[tuple[str, list[Update]]] = []
    for half in halves:
        module = HALVES[half]
        for size in sizes:
            t0 = time.perf_counter()
            result = asyncio.run(run_size(module, size))
            print(f"  {half} {size}: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
            sized.append((half, result))
            if args.verbose and half == "dev":
                for fact, a in result.questions:
                    if a.rank != 0:
                        print(f"    miss@{size}: {fact.question} → {fact.answer} (rank {a.rank})")
        if args.updates:
            updates.append((half, asyncio.run(run_updates(module))))
    print(f"runtime's sentence encoder: {ENCODER['state']}")
    print("\n" + SIZE_HEADER)
    for half, result in sized:
        print(size_row(half, result))
    print("\n| half | facts/member | kind | acc@1 | rec@5 | in req |\n|---|---|---|---|---|---|")
    for half, result in sized:
        print("\n".join(kind_rows(half, result)))
    print(
        "\n| half | where | update | right | refused by cap | old lost while padding "
        "| old dropped by the cap |\n|---|---|---|---|---|---|---|"
    )
    for half, cases in updates:
        print("\n".join(update_rows(half, cases)))
    print()
    for half, result in sized:
        total, with_vector, mean = result.vectors
        print(
            f"stored vectors ({half} {result.size}): {with_vector} of {total} rows, mean "
            f"{mean:.0f} bytes as stored → {100_000 * mean / 1e6:.0f} MB at 100,000 facts"
        )
    with tempfile.TemporaryDirectory() as cache:
        for table_dir in (None, Path(cache)):
            print_encoder_figures(encoder_figures(table_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
