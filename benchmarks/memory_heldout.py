"""The held-out memory set (issue 34): recall on facts nobody tuned on, at 1 to 50 facts a member.

`benchmarks/_memory_heldout_data.py` was written once and frozen (see its docstring). Every
fact is taught by its own member with "@牛牛 记住 …" through the real member-command path, then
that member teaches `n - 1` newer facts (the issue's own setup is `n = 4`: three newer facts),
and days later asks the question. The real memory sources and request assembly run in-process
(as `benchmarks.memory_quality` does); a hit is the fact's answer fragment in the request.

Updates: each of 6 corrections is taught with 记住 after the old fact, each of 2 denials is said
to the bot in plain chat; afterwards the new state must reach the request and the old one must
not. Plain-chat lines go through the member-command path and, when the product has one, the
rule fallback for denials (`MemoryService.apply_plain_chat`, if present).

    python -m benchmarks.memory_heldout [--facts 1,4,10,50] [--expansion] [--embedding]
                                        [--all-modes] [--no-profile] [--verbose]

Prints recall per question kind and per area for each member size, the request tokens, foreign
facts (another member's facts in the request: must be 0), and corrections / denials right.
`--expansion`: index-time expansion answered by the scripted cheap model
(`_memory_expansion_script`, written for the meaning probes, not this set: the held-out facts
get its generic answer). `--embedding`: embeddings on, answered by the scripted character n-gram
hashing model (`_memory_embedding_script`, nothing from this set). `--all-modes` runs offline,
expansion, embedding and both, and ends with one table of recall per kind. `--no-profile`
turns the member profile off (a line per relevant or recent fact): the profile holds every fact
of a member up to 60, so only without it does the set measure what retrieval finds.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
from collections import defaultdict
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks._memory_embedding_script import MODEL as EMBEDDING_MODEL
from benchmarks._memory_embedding_script import with_embeddings
from benchmarks._memory_expansion_script import ScriptedExpansionModel
from benchmarks._memory_heldout_data import FACTS, FROZEN_ON, NEWER, UPDATES, HeldOutFact
from benchmarks.memory_quality import BOT, BOT_ALIAS, END, GROUP, REPO, USER0
from benchmarks.stats import describe
from pallas.app_wiring import memory_service_for, memory_sources_for
from pallas.context.context import (
    ChatContextBundle,
    GatherRequest,
    assemble_direct_chat_context,
)
from pallas.context.processor_inputs import ChatTurnContext
from pallas.context.request import ChatRequest
from pallas.core.clock import FakeClock
from pallas.core.settings import PallasSettings
from pallas.core.state import MemoryStateStore
from pallas.core.tokens import count_message_tokens
from pallas.core.turn import Sender, TurnInput
from pallas.features.memory.isolation import group_scope
from pallas.features.memory.service import MemoryService
from pallas.features.memory_commands.member_commands import handle_member_message
from pallas.ranking.text import warm_up
from pallas.runtime import PallasRuntime
from pallas.turn.parts.chat_pipeline import assemble_chat_request

DAY = 86_400.0
START = END - 20 * DAY
UPDATE_USER0 = USER0 + 500


@dataclass(frozen=True, slots=True)
class Probe:
    user: int
    question: str
    must: str  # "" = nothing required
    must_not: str = ""
    fact: HeldOutFact | None = None


@dataclass(frozen=True, slots=True)
class Outcome:
    probe: Probe
    hit: bool
    tokens: int
    foreign: int


_ids = iter(range(5_000_000, 9_000_000))


def _turn(user: int, text: str, at: float) -> TurnInput:
    return TurnInput(BOT, GROUP, user, next(_ids), at, text,
                     sender=Sender(user, card=f"成员{user - USER0}"), to_me=True)  # fmt: skip


async def say(service: MemoryService, clock: FakeClock, user: int, text: str, at: float) -> None:
    """A line addressed to the bot: a 记住 teaching, or plain chat (denials)."""
    clock.set(at)
    turn = _turn(user, f"{BOT_ALIAS} {text}", at)
    handled = await handle_member_message(service, turn, aliases=(BOT_ALIAS,))
    plain_chat = getattr(service, "apply_plain_chat", None)
    if handled is None and plain_chat is not None:
        await plain_chat(turn)


async def teach_all(service: MemoryService, clock: FakeClock, facts_per_member: int) -> list[Probe]:
    probes: list[Probe] = []
    for i, fact in enumerate(FACTS):
        user = USER0 + i
        at = START + i * 600
        await say(service, clock, user, f"记住 {fact.taught}", at)
        for k in range(facts_per_member - 1):
            newer = NEWER[(i * 7 + k) % len(NEWER)]
            await say(service, clock, user, f"记住 {newer}", at + (k + 1) * 3_600)
        probes.append(Probe(user, fact.question, fact.answer, fact=fact))
    for j, update in enumerate(UPDATES):
        user = UPDATE_USER0 + j
        at = START + 5 * DAY + j * 600
        await say(service, clock, user, f"记住 {update.old}", at)
        line = f"记住 {update.new}" if update.how == "correction" else update.new
        await say(service, clock, user, line, at + 2 * DAY)
        probes.append(Probe(user, update.question, update.new_answer, update.old_answer))
    await service.drain()
    clock.set(END)
    return probes


async def assemble(
    rt: PallasRuntime, sources: Sequence[Any], user: int, question: str
) -> tuple[ChatContextBundle, ChatRequest]:
    """The gathered blocks and the chat request for `user` asking `question` at END."""
    turn = _turn(user, question, END)
    config = rt.group_configs.get(GROUP)
    bundle = await assemble_direct_chat_context(
        sources, GatherRequest(turn, question, END, config, "帕拉斯", True, False, True)
    )
    ctx = ChatTurnContext(
        bot_id=BOT, group_id=GROUP, user_id=user, now=datetime.fromtimestamp(END, UTC),
        current_text=question, config=config.context, message_id=turn.message_id,
        timeline_messages=(), blocks=bundle.blocks, token_budget=31_200,
    )  # fmt: skip
    return bundle, await assemble_chat_request(ctx)


async def ask(
    rt: PallasRuntime, sources: Sequence[Any], probe: Probe, subjects: dict[str, int | None]
) -> Outcome:
    bundle, request = await assemble(rt, sources, probe.user, probe.question)
    text = "\n".join(str(m.get("content", "")) for m in request.messages)
    ids = [i for b in bundle.blocks.values() for i in b.memory_ids if i.startswith("mem:")]
    foreign = sum(1 for i in ids if subjects.get(i) not in (None, probe.user))
    hit = (not probe.must or probe.must in text) and not (probe.must_not and probe.must_not in text)
    return Outcome(probe, hit, count_message_tokens(request.messages), foreign)


def _model_for(expansion: bool, embedding: bool) -> tuple[ScriptedExpansionModel | None, str]:
    """The scripted endpoint (None offline) and the group's TOML for a mode."""
    if not expansion and not embedding:
        return None, ""
    model = ScriptedExpansionModel()
    toml = f"[memory.expansion]\nenabled = {str(expansion).lower()}\n"
    toml += "daily_token_budget = 100000000\n"
    if embedding:  # the teach judge stays on the rules, as offline: only the vectors differ
        with_embeddings(model)
        toml += "[memory.extraction]\nteach_judge = false\n"
    return model, toml


@asynccontextmanager
async def bench_runtime(
    toml: str = "", llm: dict[str, Any] | None = None
) -> AsyncIterator[tuple[PallasRuntime, FakeClock]]:
    """A runtime over a fresh SQLite file and a copy of `config/` (+ `toml` for the group)."""
    workdir = Path(tempfile.mkdtemp(prefix="pallas-heldout-"))
    shutil.copytree(REPO / "config", workdir / "config")
    if toml:
        (workdir / "config" / "groups" / f"{GROUP}.toml").write_text(toml, encoding="utf-8")
    settings = PallasSettings(
        database_url=f"sqlite+aiosqlite:///{workdir / 'h.db'}",
        pallas_config_dir=workdir / "config",
        **(llm or {}),
    )
    clock = FakeClock(START)
    rt = await PallasRuntime.start(settings, clock=clock, state=MemoryStateStore(clock))
    try:
        yield rt, clock
    finally:
        await rt.stop()
        shutil.rmtree(workdir, ignore_errors=True)


async def run_size(
    facts_per_member: int, *, expansion: bool, embedding: bool = False, profile: bool = True
) -> list[Outcome]:
    model, toml = _model_for(expansion, embedding)
    if not profile:  # the line-per-fact block: what retrieval alone finds among a member's facts
        toml += "[memory.profile]\nenabled = false\n"
    llm: dict[str, Any] = {}
    if model is not None:
        await model.start()
        llm = {"openai_api_key": "sk-bench", "openai_base_url": model.base_url}
        if embedding:
            llm["pallas_embedding_model"] = EMBEDDING_MODEL
    try:
        async with bench_runtime(toml, llm) as (rt, clock):
            service = memory_service_for(rt)
            warm_up()
            probes = await teach_all(service, clock, facts_per_member)
            items = await service.repo.list_items(
                scopes=[group_scope(BOT, GROUP)], include_deleted=True, limit=100_000
            )
            subjects = {i.ref: i.subject_user_id for i in items}
            sources = memory_sources_for(rt, memory_service_for(rt))
            return [await ask(rt, sources, p, subjects) for p in probes]
    finally:
        if model is not None:
            await model.stop()


def _share(rows: list[Outcome]) -> str:
    hits = sum(o.hit for o in rows)
    return f"{hits:2d}/{len(rows):2d} ({100 * hits / max(1, len(rows)):3.0f} %)"


def report(size: int, outcomes: list[Outcome], *, verbose: bool) -> None:
    facts = [o for o in outcomes if o.probe.fact is not None]
    updates = [o for o in outcomes if o.probe.fact is None]
    by_kind: dict[str, list[Outcome]] = defaultdict(list)
    by_area: dict[str, list[Outcome]] = defaultdict(list)
    for o in facts:
        assert o.probe.fact is not None
        by_kind[o.probe.fact.kind].append(o)
        by_area[o.probe.fact.area].append(o)
    corrections, denials = updates[:6], updates[6:]
    print(f"\n{size} fact(s) per member — recall {_share(facts)}")
    print("  " + "  ".join(f"{k} {_share(v)}" for k, v in sorted(by_kind.items())))
    print("  " + "  ".join(f"{k} {sum(o.hit for o in v)}/{len(v)}" for k, v in by_area.items()))
    print(f"  corrections right {sum(o.hit for o in corrections)}/6, "
          f"denials right {sum(o.hit for o in denials)}/2, "
          f"foreign facts in requests {sum(o.foreign for o in outcomes)}")  # fmt: skip
    print("  " + describe("request tokens", [float(o.tokens) for o in facts], unit=""))
    if verbose:
        for o in outcomes:
            if not o.hit:
                unwanted = f", not {o.probe.must_not!r}" if o.probe.must_not else ""
                print(f"    miss: {o.probe.question} (want {o.probe.must!r}{unwanted})")


MODES = {  # name → (expansion, embedding)
    "offline": (False, False),
    "expansion": (True, False),
    "embedding": (False, True),
    "both": (True, True),
}


def _kind_cell(outcomes: list[Outcome], kind: str | None) -> str:
    rows = [o for o in outcomes if o.probe.fact is not None]
    rows = [o for o in rows if kind is None or (o.probe.fact and o.probe.fact.kind == kind)]
    return f"{sum(o.hit for o in rows)}/{len(rows)}"


def summary(table: dict[tuple[str, int], list[Outcome]], sizes: list[int]) -> None:
    """One row per mode and size: recall overall and per kind, updates, foreign facts."""
    print("\n| mode | facts per member | recall | lexical | paraphrase | category "
          "| corrections | denials | foreign |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    for (mode, size), outcomes in table.items():
        updates = [o for o in outcomes if o.probe.fact is None]
        cells = [_kind_cell(outcomes, k) for k in (None, "lexical", "paraphrase", "category")]
        print(f"| {mode} | {size} | " + " | ".join(cells)
              + f" | {sum(o.hit for o in updates[:6])}/6 | {sum(o.hit for o in updates[6:])}/2"
              f" | {sum(o.foreign for o in outcomes)} |")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.memory_heldout")
    parser.add_argument("--facts", default="1,4,10,50", help="facts per member, comma-separated")
    parser.add_argument("--expansion", action="store_true", help="scripted expansion model on")
    parser.add_argument("--embedding", action="store_true", help="scripted embedding model on")
    parser.add_argument("--all-modes", action="store_true", help="offline, each, both; a table")
    parser.add_argument(
        "--no-profile", dest="profile", action="store_false",
        help="[memory.profile] enabled = false: a line per fact, chosen by retrieval",
    )  # fmt: skip
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.facts.split(",")]
    chosen = {m: f for m, f in MODES.items() if f == (args.expansion, args.embedding)}
    print(f"held-out set frozen on {FROZEN_ON}: {len(FACTS)} facts, {len(UPDATES)} updates")
    table: dict[tuple[str, int], list[Outcome]] = {}
    for mode, (expansion, embedding) in (MODES if args.all_modes else chosen).items():
        print(f"\n== {mode}")
        for size in sizes:
            outcomes = asyncio.run(
                run_size(size, expansion=expansion, embedding=embedding, profile=args.profile)
            )
            report(size, outcomes, verbose=args.verbose)
            table[(mode, size)] = outcomes
    summary(table, sizes)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
