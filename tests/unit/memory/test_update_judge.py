"""The teaching judge's guards: a slow cheap model never holds the reply past `teach_timeout_s`,
the day's budget and a member with nothing stored cost no call, and the answer is used only for
the member's own listed facts."""

from __future__ import annotations

import asyncio
import time
from typing import Any, cast

from pallas.core.clock import FakeClock
from pallas.core.db.repositories.usage import UsageRepository, UsageTotals
from pallas.features.memory.config import RetrievalConfig
from pallas.features.memory.judgement import Judgement
from pallas.features.memory.records import MemoryItem
from pallas.features.memory_upkeep.update_judge import JUDGE_SCHEMA, TeachJudge
from pallas.providers.cheap_calls import CheapCalls
from pallas.providers.client import CompletionResult, LLMClient

SCOPE, ALICE, BOB = "group:1:2", 11, 22


class StubLLM:
    def __init__(self, text: str, delay: float = 0.0) -> None:
        self.text, self.delay = text, delay
        self.calls: list[dict[str, Any]] = []
        self.finished = 0

    async def complete(self, task: str, messages: list[dict[str, Any]], **kw: Any) -> Any:
        self.calls.append({"task": task, "messages": messages, **kw})
        await asyncio.sleep(self.delay)
        self.finished += 1
        return CompletionResult(True, self.text, prompt_tokens=50, completion_tokens=10)


class StubUsage:
    def __init__(self, spent: int = 0) -> None:
        self.spent = spent

    async def totals(self, **_: Any) -> UsageTotals:
        return UsageTotals(prompt_tokens=self.spent)


def item(item_id: int, text: str, subject: int = ALICE) -> MemoryItem:
    return MemoryItem(item_id, 1, SCOPE, "person_facts", f"k{item_id}", text, "teach", 0.0, 0.0,
                      subject_user_id=subject)  # fmt: skip


def judge(llm: StubLLM, *, spent: int = 0, toml: dict[str, Any] | None = None) -> TeachJudge:
    extraction = {"teach_timeout_s": 0.5, **(toml or {})}
    config = RetrievalConfig.model_validate({"extraction": extraction})
    cheap = CheapCalls(
        clock=FakeClock(1_000.0),
        usage=cast(UsageRepository, StubUsage(spent)),
        llm=cast(LLMClient, llm),
    )
    return TeachJudge(cheap=cheap, memory_config=lambda _group: config)


async def ask(j: TeachJudge, live: list[MemoryItem]) -> Any:
    return await j.judge(
        "TA搬到朝阳了", live, bot_id=1, group_id=2, scope=SCOPE, subject_user_id=ALICE
    )


async def test_the_model_decides_for_the_members_own_facts_only() -> None:
    llm = StubLLM('{"op": "update", "replaces": ["f1", "f2"]}')
    verdict = await ask(judge(llm), [item(7, "TA住在海淀区"), item(8, "TA住在西城区", BOB)])
    assert verdict.judgement == Judgement("update", (7,), "model", "model_update")
    [call] = llm.calls
    assert call["json_schema"] is JUDGE_SCHEMA and call["task"] == "cheap"
    assert "西城" not in call["messages"][-1]["content"], "another member's fact is not listed"


async def test_a_slow_model_never_holds_the_reply_past_the_timeout() -> None:
    llm = StubLLM('{"op": "update", "replaces": ["f1"]}', delay=1.5)
    j = judge(llm)
    started = time.monotonic()
    verdict = await ask(j, [item(7, "TA住在海淀区")])
    assert time.monotonic() - started < 1.0
    assert (verdict.judgement, verdict.reason) == (None, "timeout")  # the rules decide
    await asyncio.sleep(1.2)
    assert llm.finished == 1, "the late call still finishes: its tokens reach the ledger"


async def test_no_call_without_stored_facts_over_budget_or_when_off() -> None:
    llm = StubLLM('{"op": "add", "replaces": []}')
    assert (await ask(judge(llm), [])).reason == "no_stored_facts"
    assert (await ask(judge(llm), [item(8, "TA住在西城区", BOB)])).reason == "no_stored_facts"
    assert (await ask(judge(llm, spent=40_000), [item(7, "x")])).reason == "budget"
    off = judge(llm, toml={"teach_judge": False})
    assert (await ask(off, [item(7, "x")])).reason == "off"
    assert llm.calls == []
