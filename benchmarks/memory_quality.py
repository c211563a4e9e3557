"""Context quality: does the assembled request carry the fact a question needs, and at what cost?

A generated group (default 30 speakers, 5,400 messages over 62 days) with planted facts: each
person fact is a line its subject really said, stored the way extraction / teaching stores it
(`MemoryService.remember`, subject = the speaker's user id, source = the message id); group
memory, events and IP knowledge are stored as admin commands do. At the end every fact gets a
probe question (person facts asked by their subject).

For each probe the real pipeline runs in-process: the memory sources
(`assemble_direct_chat_context`), the last 8 timeline messages, and `assemble_chat_request`
(sections, budget, formatter). "Hit" = the answer keyword is somewhere in the request. The
baseline is a naive request: the persona plus the group's last N messages, N as large as fits
in the *same* token count as the memory request of that probe. Bigger naive windows are
printed too, for scale.

    python -m benchmarks.memory_quality [--days 62] [--per-day 87] [--seed 7] [--verbose]
                                        [--expansion] [--embedding]

`--expansion`: index-time expansion answered by a scripted cheap model; `--embedding`:
embeddings on, answered by a scripted character n-gram hashing model
(`benchmarks/_memory_embedding_script.py`); both together for both.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from benchmarks._memory_embedding_script import MODEL as EMBEDDING_MODEL
from benchmarks._memory_embedding_script import with_embeddings
from benchmarks._memory_expansion_script import ScriptedExpansionModel
from benchmarks._memory_meaning_data import (
    DISTRACTORS,
    DISTRACTORS_PER_PROBE,
    MEANING_PROBES,
)
from benchmarks._memory_quality_data import (
    BOT_LINES,
    DECOY_GROUP,
    DECOY_PERSON,
    DECOYS_PER_PERSON,
    NAMES,
    PlantedFact,
    chatter,
    planted_facts,
)
from benchmarks.stats import describe
from pallas.app_wiring import memory_service_for, memory_sources_for
from pallas.context.context import GatherRequest, assemble_direct_chat_context
from pallas.context.processor_inputs import ChatTurnContext
from pallas.context.processors import DEFAULT_PERSONA_BASE
from pallas.core.clock import FakeClock
from pallas.core.records import StoredMessage
from pallas.core.settings import PallasSettings
from pallas.core.state import MemoryStateStore
from pallas.core.tokens import count_message_tokens, count_tokens
from pallas.core.turn import Sender, TurnInput
from pallas.features.memory.isolation import group_scope
from pallas.features.memory.service import MemoryService
from pallas.features.memory.slots import parse_slot
from pallas.features.memory_commands.member_commands import handle_member_message
from pallas.features.memory_commands.teaching import third_person
from pallas.ranking.text import warm_up
from pallas.runtime import PallasRuntime
from pallas.turn.parts.chat_pipeline import assemble_chat_request

BOT, GROUP = 2_900_000_001, 778_000_001
USER0 = 30_001
REPO = Path(__file__).resolve().parents[1]
END = 1_765_000_000.0
NAIVE_SCALES = (2_000, 4_000, 8_000)
BOT_ALIAS = "牛牛"
PROBE_KINDS = ("lexical", "paraphrase", "category")


@dataclass(frozen=True, slots=True)
class ProbeResult:
    fact: PlantedFact
    hit: bool
    tokens: int
    naive_hit: bool
    naive_messages: int
    naive_tokens: int
    retrieval_ms: float
    injected: int
    foreign: int  # other people's person facts that leaked into this request
    noise: int  # memory rows injected that are not the probe's fact


@dataclass(frozen=True, slots=True)
class Teaching:
    at: float
    user: int
    message_id: int
    taught: str  # first person, after "记住"
    fact: PlantedFact | None  # None = a distractor


def slot_of(text: str) -> str | None:
    slot = parse_slot(text)
    return slot.name if slot is not None and slot.single else None


def plan_teachings(
    rng: random.Random, start: float, days: int, slots: dict[int, set[str]]
) -> list[Teaching]:
    """Each meaning probe is taught by one member, then three distractors by the same member.

    A member never gets two facts of one single-valued slot (two places they live): the newer
    would rightly replace the older (`slots`), and the probe would ask about a retired fact.
    `slots` (member → slot names already taken) is updated.
    """
    plan: list[Teaching] = []
    used: dict[int, set[str]] = {}
    for n, probe in enumerate(MEANING_PROBES):
        slot = slot_of(third_person(probe.taught) or probe.taught)
        order = ((n * 7 + 5 + d) % len(NAMES) for d in range(len(NAMES)))
        subject = next(s for s in order if slot is None or slot not in slots.setdefault(s, set()))
        if slot is not None:
            slots[subject].add(slot)
        user = USER0 + subject
        at = start + rng.random() * (days - 2) * 86_400
        fact = PlantedFact(
            "person_facts", subject, f"{BOT_ALIAS} 记住 {probe.taught}",
            third_person(probe.taught) or probe.taught, "", probe.probe, probe.taught,
            probe_kind=probe.kind, source=probe.source,
        )  # fmt: skip
        plan.append(Teaching(at, user, 2_000_000 + len(plan), probe.taught, fact))
        free = [d for d in DISTRACTORS if d not in used.setdefault(subject, set())]
        for k, text in enumerate(rng.sample(free, DISTRACTORS_PER_PROBE)):
            used[subject].add(text)
            plan.append(Teaching(at + (k + 1) * 3_600, user, 2_000_000 + len(plan), text, None))
    return plan


async def teach(service: MemoryService, clock: FakeClock, t: Teaching) -> str | None:
    """Store one teaching through the member-command path; returns the new row's ref."""
    clock.set(t.at + 1)
    turn = TurnInput(BOT, GROUP, t.user, t.message_id, t.at, f"{BOT_ALIAS} 记住 {t.taught}",
                     sender=Sender(t.user, card=NAMES[t.user - USER0]), to_me=True)  # fmt: skip
    reply = await handle_member_message(service, turn, aliases=(BOT_ALIAS,))
    assert reply is not None, t
    items = await service.repo.list_items(
        scopes=[group_scope(BOT, GROUP)], subject_user_id=t.user, limit=1
    )
    return items[0].ref if items else None


async def build_history(
    rt: PallasRuntime, service: MemoryService, args: argparse.Namespace
) -> tuple[list[StoredMessage], dict[PlantedFact, str]]:
    """Insert the history, store the planted facts; returns the messages and fact → row ref."""
    rng = random.Random(args.seed)
    clock = rt.clock
    assert isinstance(clock, FakeClock)
    speakers = len(NAMES)
    facts = planted_facts(rng, speakers)
    total = args.days * args.per_day
    start = END - args.days * 86_400
    times = sorted(start + rng.random() * (args.days * 86_400 - 3_600) for _ in range(total))
    slots = sorted(rng.sample(range(total), len(facts)))  # where each fact is said
    plan = dict(zip(slots, facts, strict=True))
    messages: list[StoredMessage] = []
    writes: list[tuple[float, PlantedFact, int]] = []
    for i, at in enumerate(times):
        mid = 1_000_000 + i
        fact = plan.get(i)
        if fact is not None and fact.subject is not None:
            user, text = USER0 + fact.subject, fact.statement
            writes.append((at + 120, fact, mid))
        elif fact is not None:
            user, text = USER0, fact.statement  # the admin announces it; an admin command stores it
            writes.append((at + 60, fact, mid))
        elif rng.random() < 0.04:
            user, text = BOT, rng.choice(BOT_LINES)
        else:
            user, text = USER0 + rng.randrange(speakers), chatter(rng)
        name = NAMES[user - USER0] if user != BOT else "帕拉斯"
        messages.append(StoredMessage(BOT, GROUP, mid, user, at, text, card=name,
                                      is_bot=user == BOT))  # fmt: skip
    taken: dict[int, set[str]] = {}
    for fact in facts:
        if fact.subject is not None and (slot := slot_of(fact.fact)) is not None:
            taken.setdefault(fact.subject, set()).add(slot)
    teachings = plan_teachings(rng, start, args.days, taken) if args.meaning else []
    for t in teachings:
        messages.append(StoredMessage(BOT, GROUP, t.message_id, t.user, t.at,
                                      f"{BOT_ALIAS} 记住 {t.taught}",
                                      card=NAMES[t.user - USER0]))  # fmt: skip
    messages.sort(key=lambda m: m.time)
    await rt.repos.messages.add_many(messages)
    refs: dict[PlantedFact, str] = {}
    for t in sorted(teachings, key=lambda t: t.at):
        ref = await teach(service, clock, t)
        if t.fact is not None and ref is not None:
            refs[t.fact] = ref
    for at, fact, mid in writes:
        clock.set(at)
        outcome = await service.remember(
            bot_id=BOT, scope=group_scope(BOT, GROUP), kind=fact.kind, text=fact.fact,
            origin="extract" if fact.subject is not None else "admin", key=fact.key,
            subject_user_id=None if fact.subject is None else USER0 + fact.subject,
            source={"message_ids": [mid]},
        )  # fmt: skip
        refs[fact] = outcome.item.ref
    for person in range(speakers):
        free = [(k, t) for k, t in DECOY_PERSON if slot_of(t) not in taken.get(person, set())]
        for key, text in rng.sample(free, DECOYS_PER_PERSON):
            clock.set(start + rng.random() * args.days * 86_400)
            await service.remember(bot_id=BOT, scope=group_scope(BOT, GROUP), kind="person_facts",
                                   text=text, origin="extract", key=key,
                                   subject_user_id=USER0 + person)  # fmt: skip
    for k, text in enumerate(DECOY_GROUP):
        clock.set(start + k * 3 * 86_400)
        await service.remember(bot_id=BOT, scope=group_scope(BOT, GROUP), kind="group_memory",
                               text=text, origin="admin")  # fmt: skip
    clock.set(END)
    return messages, refs


def carries(text: str, fact: PlantedFact) -> bool:
    """The request holds the fact: as stored, or as the member originally said it.

    (Not the bare keyword: names such as 芒果 / 石头 are also speakers' cards and would count
    a timeline line by chance.)
    """
    return fact.fact in text or fact.statement in text


def naive_request(history: list[StoredMessage], question: str, budget: int) -> tuple[str, int, int]:
    """Persona + as many of the newest group messages as fit in `budget` tokens + question.

    Returns (request text, messages included, request tokens)."""
    system = {"role": "system", "content": DEFAULT_PERSONA_BASE}
    lines: list[str] = []
    tokens = 0
    for msg in reversed(history):
        candidate = [f"{msg.display_name}：{msg.text}", *lines]
        request = [system, {"role": "user", "content": "\n".join([*candidate, question])}]
        cost = count_message_tokens(request)
        if cost > budget:
            break
        lines, tokens = candidate, cost
    return "\n".join([DEFAULT_PERSONA_BASE, *lines, question]), len(lines), tokens


async def run_probe(
    rt: PallasRuntime,
    sources: list,
    fact: PlantedFact,
    history: list[StoredMessage],
    refs: dict[PlantedFact, str],
    n: int,
    subjects: dict[str, int | None],
) -> ProbeResult:
    asker = fact.subject if fact.asker is None else fact.asker
    user = USER0 + (asker or 0)
    turn = TurnInput(BOT, GROUP, user, 9_000_000 + n, END, fact.probe,
                     sender=Sender(user, card=NAMES[user - USER0]), to_me=True)  # fmt: skip
    config = rt.group_configs.get(GROUP)
    started = time.perf_counter()
    bundle = await assemble_direct_chat_context(
        sources,
        GatherRequest(turn, fact.probe, END, config, "帕拉斯", True, False, True),
    )
    retrieval_ms = (time.perf_counter() - started) * 1000
    ctx = ChatTurnContext(
        bot_id=BOT, group_id=GROUP, user_id=user, now=datetime.fromtimestamp(END, UTC),
        current_text=fact.probe, config=config.context, message_id=turn.message_id,
        timeline_messages=tuple(history[-8:]), blocks=bundle.blocks, token_budget=31_200,
    )  # fmt: skip
    request = await assemble_chat_request(ctx)
    text = "\n".join(str(m.get("content", "")) for m in request.messages)
    tokens = count_message_tokens(request.messages)
    naive_text, naive_n, naive_tokens = naive_request(history, fact.probe, tokens)
    ids = [i for b in bundle.blocks.values() for i in b.memory_ids if i.startswith("mem:")]
    foreign = sum(1 for i in ids if subjects.get(i) not in (None, user))
    return ProbeResult(
        fact, carries(text, fact), tokens, carries(naive_text, fact), naive_n, naive_tokens,
        retrieval_ms, len(ids), foreign, len([i for i in ids if i != refs[fact]]),
    )  # fmt: skip


async def subjects_of(service: MemoryService) -> dict[str, int | None]:
    """Every stored row's ref → the member it is about (None for group rows)."""
    items = await service.repo.list_items(
        scopes=[group_scope(BOT, GROUP)], include_deleted=True, limit=100_000
    )
    return {i.ref: i.subject_user_id for i in items}


async def run(args: argparse.Namespace) -> tuple[list[ProbeResult], list[StoredMessage]]:
    workdir = Path(tempfile.mkdtemp(prefix="pallas-memq-"))
    shutil.copytree(REPO / "config", workdir / "config")
    toml = args.group_toml.replace("\\n", "\n")
    if args.no_fallback:
        toml = "[memory]\npersonal_fallback_k = 0\n" + toml
    model = ScriptedExpansionModel() if args.expansion or args.embedding else None
    if model is not None:  # it scripts expansions only: teachings are judged by the rules
        toml = (
            f"[memory.expansion]\nenabled = {str(args.expansion).lower()}\n"
            "daily_token_budget = 100000000\n[memory.extraction]\nteach_judge = false\n" + toml
        )
        if args.embedding:
            with_embeddings(model)
        await model.start()
    if toml:
        (workdir / "config" / "groups" / f"{GROUP}.toml").write_text(toml, encoding="utf-8")
    llm = {"openai_api_key": "sk-bench", "openai_base_url": model.base_url} if model else {}
    if args.embedding:
        llm["pallas_embedding_model"] = EMBEDDING_MODEL
    settings = PallasSettings(
        database_url=f"sqlite+aiosqlite:///{workdir / 'q.db'}",
        pallas_config_dir=workdir / "config",
        **llm,
    )
    clock = FakeClock(END)
    rt = await PallasRuntime.start(settings, clock=clock, state=MemoryStateStore(clock))
    try:
        service = memory_service_for(rt)
        history, refs = await build_history(rt, service, args)
        await service.drain()  # background expansions (--expansion)
        sources = memory_sources_for(rt, memory_service_for(rt))
        warm_up()  # jieba's dictionary, loaded at bot start-up in production
        subjects = await subjects_of(service)
        results = [
            await run_probe(rt, sources, fact, history, refs, n, subjects)
            for n, fact in enumerate(refs)
        ]
        return results, history
    finally:
        await rt.stop()
        if model is not None:
            await model.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def report(results: list[ProbeResult], args: argparse.Namespace, history_len: int) -> None:
    n = len(results)
    mem_recall = sum(r.hit for r in results) / n
    naive_recall = sum(r.naive_hit for r in results) / n
    mean_tokens = sum(r.tokens for r in results) / n
    print(f"history: {history_len} messages over {args.days} days, {n} planted facts / probes")
    if args.verbose:
        for r in results:
            print(
                f"  {'HIT ' if r.hit else 'miss'} {'hit ' if r.naive_hit else 'miss'} "
                f"{r.tokens:5d} tok {r.fact.probe_kind:<10} {r.fact.kind:<13} {r.fact.probe} "
                f"→ {r.fact.keyword}"
            )
    print(f"memory pipeline : recall {mem_recall:6.1%}  mean request tokens {mean_tokens:7.1f}")
    naive_tokens = sum(r.naive_tokens for r in results) / n
    print(
        f"naive last-N    : recall {naive_recall:6.1%}  mean request tokens {naive_tokens:7.1f} "
        f"(budget = the memory request's tokens, mean N = "
        f"{sum(r.naive_messages for r in results) / n:.1f} messages)"
    )
    by_kind: dict[str, list[ProbeResult]] = {}
    for r in results:
        by_kind.setdefault(r.fact.kind, []).append(r)
    for kind, rows in sorted(by_kind.items()):
        print(f"  {kind:<13} recall {sum(r.hit for r in rows) / len(rows):6.1%}  (n={len(rows)})")
    print_probe_kinds(results)
    print(
        f"  memory rows injected per probe: {sum(r.injected for r in results) / n:.2f} "
        f"(not the probe's fact: {sum(r.noise for r in results) / n:.2f})"
    )
    print(f"  other members' person facts in the system prompt: {sum(r.foreign for r in results)}")
    print(describe("retrieval (4 sources)", [r.retrieval_ms for r in results]))


def _recall_line(label: str, rows: list[ProbeResult]) -> str:
    hits = sum(r.hit for r in rows)
    share = hits / len(rows) if rows else 0.0
    return f"  {label:<22} recall {share:6.1%}  ({hits}/{len(rows)})"


def print_probe_kinds(results: list[ProbeResult]) -> None:
    """Recall per probe kind (all probes, then the meaning probes by origin)."""
    print("by probe kind (all probes):")
    for kind in PROBE_KINDS:
        print(_recall_line(kind, [r for r in results if r.fact.probe_kind == kind]))
    for source in ("issue", "own", "holdout", "holdout2"):
        rows = [r for r in results if r.fact.source == source]
        if not rows:
            continue
        print(f"meaning probes, {source} set:")
        for kind in PROBE_KINDS:
            print(_recall_line(kind, [r for r in rows if r.fact.probe_kind == kind]))
    meaning = [r for r in results if r.fact.source != "planted"]
    if meaning:
        pc = [r for r in meaning if r.fact.probe_kind != "lexical"]
        print(_recall_line("meaning para+category", pc))
        print(
            f"  meaning probes: foreign facts per request "
            f"{sum(r.foreign for r in meaning) / len(meaning):.2f}, person rows injected "
            f"{sum(r.injected for r in meaning) / len(meaning):.2f}"
        )
    print(f"  foreign facts per request (all probes): "
          f"{sum(r.foreign for r in results) / len(results):.3f}")  # fmt: skip


def naive_tokens_needed(history: list[StoredMessage], fact: PlantedFact) -> int | None:
    """Request tokens of the smallest naive window (newest messages) that holds the fact."""
    base = count_tokens(DEFAULT_PERSONA_BASE) + count_tokens(fact.probe) + 8
    total = base
    for msg in reversed(history):
        line = f"{msg.display_name}：{msg.text}"
        total += count_tokens(line) + 1
        if fact.fact in msg.text or fact.statement in msg.text:
            return total
    return None


def equal_recall(history: list[StoredMessage], results: list[ProbeResult]) -> None:
    """Tokens a naive window needs to reach the memory pipeline's recall, vs memory's tokens."""
    needed = sorted(
        t if (t := naive_tokens_needed(history, r.fact)) is not None else 10**9 for r in results
    )
    hits = sum(r.hit for r in results)
    mem_tokens = sum(r.tokens for r in results) / len(results)
    if hits == 0:
        return
    budget = needed[hits - 1]
    shown = f"{budget:,}" if budget < 10**9 else "more than the whole history"
    print(
        f"equal recall ({hits}/{len(results)}): naive window needs {shown} tokens per request; "
        f"memory pipeline uses {mem_tokens:,.0f} (ratio {budget / mem_tokens:.1f}x)"
    )


def naive_scale(history: list[StoredMessage], results: list[ProbeResult]) -> None:
    for budget in NAIVE_SCALES:
        hits = sum(fact_in_window(history, r.fact, budget) for r in results)
        print(f"naive last-N at {budget:5d} tokens: recall {hits / len(results):6.1%}")


def fact_in_window(history: list[StoredMessage], fact: PlantedFact, budget: int) -> bool:
    text, _, _ = naive_request(history, fact.probe, budget)
    return carries(text, fact)


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.memory_quality")
    parser.add_argument("--days", type=int, default=62)
    parser.add_argument("--per-day", type=int, default=87)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-fallback", action="store_true", help="personal_fallback_k = 0")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument(
        "--expansion", action="store_true",
        help="index-time expansion on, answered by a scripted fake cheap model",
    )  # fmt: skip
    parser.add_argument(
        "--embedding", action="store_true",
        help="embeddings on, answered by a scripted character n-gram hashing model",
    )  # fmt: skip
    parser.add_argument(
        "--no-meaning", dest="meaning", action="store_false", help="skip the meaning probes"
    )
    parser.add_argument(
        "--group-toml", default="", help=r"extra group config, e.g. '[memory.group_memory]\n…'"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv or [])
    results, history = asyncio.run(run(args))
    report(results, args, len(history))
    naive_scale(history, results)
    equal_recall(history, results)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
