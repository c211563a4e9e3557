"""Updates and denials: of the corrections taught with 记住 and the denials said in plain chat,
how many leave a member's memory right — the old fact retired, the new one live (or, for a bare
denial, nothing in its place), their unrelated fact kept — offline (the rules) and with a
scripted cheap model answering the structured judgement.

Each case runs for a fresh member in a group of its own, through the real paths: teachings
through `handle_member_message` (the teaching judge, then the rules), chat lines through the
extraction job (`MemoryExtractionHook.run_job`: the model's add / update / deny answer, or the
rule fallback when the call fails). The scripted model answers what a model that understood the
line would (`CASES[...].model`): it measures the plumbing — refs listed, checked, retired —
not a real model's judgement. The cases marked "meaning" had no rule on purpose when they were
written; the slot rules of h-upd (issue 34) know them now.

Two sets: the first one (`_memory_updates_data`, 23 cases with the issue's six corrections and
two denials) and the development set (`_memory_updates_dev`, 89 cases across slots and everyday
phrasing, written before the rules were generalised). The rules were developed on both, so the
offline figures are not held-out results; `benchmarks.memory_heldout` is the held-out run.

    python -m benchmarks.memory_updates [--set first|dev|all] [--verbose]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks._memory_updates_data import CASES as FIRST_CASES
from benchmarks._memory_updates_data import UNRELATED, UpdateCase
from benchmarks._memory_updates_dev import DEV_CASES
from pallas.app_wiring import extraction_hook_for, memory_service_for
from pallas.core.clock import FakeClock
from pallas.core.records import StoredMessage
from pallas.core.settings import PallasSettings
from pallas.core.state import MemoryStateStore
from pallas.core.turn import Sender, TurnInput
from pallas.features.memory.isolation import group_scope
from pallas.features.memory.service import MemoryService
from pallas.features.memory_commands.member_commands import handle_member_message
from pallas.features.memory_commands.teaching import third_person
from pallas.runtime import PallasRuntime
from tests.harness.fake_openai import FakeOpenAI, Scripted

BOT, GROUP0, USER0 = 2_900_000_001, 779_000_001, 40_001
CASES: tuple[UpdateCase, ...] = FIRST_CASES + DEV_CASES
SETS = {"first": FIRST_CASES, "dev": DEV_CASES, "all": CASES}
REPO = Path(__file__).resolve().parents[1]
ALIAS = "牛牛"
_NEW_FACT = re.compile(r"新事实：(.+)$")
_LISTED = re.compile(r"^\[(f\d+)\] (?:u\d+: )?(.+)$", re.MULTILINE)
_LINE = re.compile(r"^\[(m\d+)\] u\d+（[^）]*）: (.+)$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Outcome:
    case: UpdateCase
    right: bool
    live: tuple[str, ...]


class ScriptedJudge(FakeOpenAI):
    """Answers the teaching judge and the extraction job as `CASES` script them."""

    def _completion(self, body: dict[str, Any], item: Scripted) -> dict[str, Any]:  # type: ignore[override]
        prompt = str(body["messages"][-1]["content"])
        listed = {text: ref for ref, text in _LISTED.findall(prompt)}
        new = _NEW_FACT.search(prompt)
        if new is not None:
            answer: dict[str, Any] = _judge_answer(new.group(1).strip(), listed)
        else:
            answer = _extraction_answer(prompt, listed)
        text = json.dumps(answer, ensure_ascii=False)
        return FakeOpenAI._completion(body, Scripted(text=text, usage=(200, 30)))


def _case_for(said: str) -> UpdateCase | None:
    return next((c for c in CASES if c.how == "chat" and said.endswith(c.said)), None)


def _refs(case: UpdateCase, listed: dict[str, str]) -> list[str]:
    return [listed[t] for t in case.model_replaces if t in listed]


def _judge_answer(new_fact: str, listed: dict[str, str]) -> dict[str, Any]:
    case = next((c for c in CASES if c.how == "teach" and c.fact == new_fact), None)
    if case is None or case.model is None:  # the earlier teachings: nothing to replace
        return {"op": "add", "replaces": []}
    return {"op": case.model, "replaces": _refs(case, listed)}


def _extraction_answer(prompt: str, listed: dict[str, str]) -> dict[str, Any]:
    facts = []
    for ref, line in _LINE.findall(prompt):
        case = _case_for(line.strip())
        if case is None or case.model is None:
            continue
        facts.append({"subject": "u1", "kind": "person", "key": case.key, "text": case.fact,
                      "source": [ref], "op": case.model,
                      "replaces": _refs(case, listed)})  # fmt: skip
    return {"facts": facts}


async def _say(service: MemoryService, group: int, user: int, text: str, mid: int) -> None:
    turn = TurnInput(BOT, group, user, mid, 0.0, f"{ALIAS} 记住 {text}",
                     sender=Sender(user, card="群友"), to_me=True)  # fmt: skip
    await handle_member_message(service, turn, aliases=(ALIAS,))


async def run_case(rt: PallasRuntime, service: MemoryService, n: int, case: UpdateCase) -> Outcome:
    group, user = GROUP0 + n, USER0 + n
    for k, old in enumerate((*case.old, UNRELATED)):
        await _say(service, group, user, old, 10 * n + k)
    if case.how == "teach":
        await _say(service, group, user, case.said, 10 * n + 9)
    else:
        message = StoredMessage(BOT, group, 10 * n + 9, user, rt.clock.now(), case.said,
                                card="群友")  # fmt: skip
        await rt.repos.messages.add_many([message])
        hook = extraction_hook_for(rt, service)
        await hook.run_job(BOT, group, rt.group_configs.get(group).memory.extraction)
    items = await service.repo.list_items(scopes=[group_scope(BOT, group)], subject_user_id=user)
    live = tuple(sorted(i.text for i in items))
    return Outcome(case, is_right(case, set(live)), live)


def is_right(case: UpdateCase, live: set[str]) -> bool:
    """The retired old facts gone, the others and the unrelated one kept, and the new fact live
    (holding `new_marker`) or, for a bare denial, nothing new in their place."""
    stored = {third_person(o) or o for o in case.old}
    retired = {third_person(o) or o for o in case.retired}
    kept = (stored - retired) | {third_person(UNRELATED) or UNRELATED}
    if retired & live or not kept <= live:
        return False
    new = live - kept
    if not case.new_marker:
        return not new
    return any(case.new_marker in text for text in new)


async def run(model: bool, cases: tuple[UpdateCase, ...] = CASES) -> list[Outcome]:
    workdir = Path(tempfile.mkdtemp(prefix="pallas-memu-"))
    shutil.copytree(REPO / "config", workdir / "config")
    server = ScriptedJudge() if model else None
    if server is not None:
        await server.start()
    llm = {"openai_api_key": "sk-bench", "openai_base_url": server.base_url} if server else {}
    settings = PallasSettings(
        database_url=f"sqlite+aiosqlite:///{workdir / 'u.db'}",
        pallas_config_dir=workdir / "config",
        **llm,
    )
    clock = FakeClock(1_765_000_000.0)
    rt = await PallasRuntime.start(settings, clock=clock, state=MemoryStateStore(clock))
    try:
        service = memory_service_for(rt)
        outcomes = []
        for n, case in enumerate(cases):
            clock.advance(60)
            outcomes.append(await run_case(rt, service, n, case))
        await service.drain()
        return outcomes
    finally:
        await rt.stop()
        if server is not None:
            await server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def _count(outcomes: list[Outcome], group: str) -> str:
    rows = [o for o in outcomes if o.case.group == group]
    return f"{sum(o.right for o in rows)} / {len(rows)}"


def report(offline: list[Outcome], scripted: list[Outcome], verbose: bool) -> None:
    print(f"updates and denials: {len(offline)} cases, right = old retired, new as expected")
    print(f"{'':34}{'offline (rules)':>18}{'scripted model':>18}")
    for group, label in (
        ("issue", "issue: 6 corrections, 2 denials"),
        ("correction", "more corrections (taught)"),
        ("denial", "more denials (said in chat)"),
        ("meaning", "meaning (no rule before)"),
        ("keep", "not a denial: nothing retires"),
        ("dev-correction", "dev: corrections (taught)"),
        ("dev-denial", "dev: denials (said in chat)"),
        ("dev-keep", "dev: nothing may retire"),
    ):
        if not any(o.case.group == group for o in offline):
            continue
        print(f"  {label:<32}{_count(offline, group):>18}{_count(scripted, group):>18}")
    print(f"  {'all':<32}{_all(offline):>18}{_all(scripted):>18}")
    if verbose:
        for name, outcomes in (("offline", offline), ("scripted", scripted)):
            for o in outcomes:
                if not o.right:
                    print(f"  {name} wrong: {o.case.said!r}: live {list(o.live)}")


def _all(outcomes: list[Outcome]) -> str:
    return f"{sum(o.right for o in outcomes)} / {len(outcomes)}"


def main(argv: list[str] | None = None) -> int:
    logging.getLogger("pallas").setLevel(logging.ERROR)  # the offline run's failed calls
    parser = argparse.ArgumentParser(prog="python -m benchmarks.memory_updates")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--set", choices=sorted(SETS), default="all")
    args = parser.parse_args(argv or [])
    offline = asyncio.run(run(model=False, cases=SETS[args.set]))
    scripted = asyncio.run(run(model=True, cases=SETS[args.set]))
    report(offline, scripted, args.verbose)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
