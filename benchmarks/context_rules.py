"""Cost of the context-rule processors: one chat request assembled with and without rules.

`python -m benchmarks context_rules`. "with rules" = 9 request regex rules, 3 placed
injections, 6 activated worldbook entries at all positions, macros in the persona, over an
18-row history; "+ ReDoS rule" adds a catastrophic rule on the current message (it times out
on the first `MAX_TIMEOUTS` requests, then is skipped). Prints per-request percentiles and the
ratio of medians.
"""

from __future__ import annotations

import asyncio
import logging
import time
from datetime import UTC, datetime

from benchmarks.stats import describe, percentile
from pallas.context.processor_inputs import ChatTurnContext, RetrievedBlock
from pallas.context.regex_rules import MAX_TIMEOUTS, RegexRuleConfig
from pallas.context.rules_config import ContextRulesConfig, InjectionConfig, build_turn_rules
from pallas.core.records import SessionTurn
from pallas.features.worldbook.model import WorldbookEntry, WorldbookPosition
from pallas.features.worldbook.result import ActivatedEntry
from pallas.turn.parts.chat_pipeline import assemble_chat_request

NOW = datetime(2026, 12, 1, 5, 0, tzinfo=UTC)
RUNS = 300


def _history() -> tuple[SessionTurn, ...]:
    rows = []
    for i in range(18):
        role = "user" if i % 2 == 0 else "assistant"
        text = f"第{i}条：今天罗德岛的天气不错喵喵，凯尔希医生在忙（旁白：翻病历）" * 3
        rows.append(SessionTurn(1, 2, 3, role, text, 1000.0 + i, row_id=i + 1))
    return tuple(rows)


def _rules(redos: bool = False):
    regex = [
        RegexRuleConfig(name=f"r{i}", pattern=f"第{i}条", replacement=f"#{i}") for i in range(8)
    ]
    regex.append(
        RegexRuleConfig(name="narration", pattern="（旁白：[^）]*）", roles=("assistant",))
    )
    if redos:
        regex.append(RegexRuleConfig(name="redos", pattern=r"^(a|aa)+$", max_depth=0))
    injections = [
        InjectionConfig(name="pre", text="（{{char}}的前言）", position="before_char"),
        InjectionConfig(name="loop", text="（提醒{{user}}）", position="depth", depth="2, 5~5"),
        InjectionConfig(
            name="anchor", text="（{{time}}）", position="after_section", anchor="current_time"
        ),
    ]
    config = ContextRulesConfig(regex=tuple(regex), injections=tuple(injections))
    return build_turn_rules(
        config, user="小红", char="帕拉斯", now=NOW, idle_seconds=60, tools="", seed="b"
    )


def _entries() -> tuple[ActivatedEntry, ...]:
    positions = [
        WorldbookPosition.BEFORE_PERSONA,
        WorldbookPosition.AFTER_PERSONA,
        WorldbookPosition.AT_DEPTH,
    ]
    return tuple(
        ActivatedEntry(
            WorldbookEntry("b", i, f"设定{i}：{{{{user}}}}是干员。" * 4, position=positions[i % 3]),
            "key",
            0,
            40,
        )
        for i in range(6)
    )


def _ctx(with_rules: bool, redos: bool = False) -> ChatTurnContext:
    return ChatTurnContext(
        bot_id=1,
        group_id=2,
        user_id=3,
        now=NOW,
        current_text="a" * 30 + "b 牛牛你觉得呢",
        message_id=99,
        persona_text="你是{{char}}，在{{group}}和{{user}}聊天。" if with_rules else "你是帕拉斯。",
        user_turns=_history(),
        blocks={"worldbook": RetrievedBlock("x", items=_entries())} if with_rules else {},
        rules=_rules(redos) if with_rules else None,
    )


async def _measure(with_rules: bool, redos: bool = False) -> list[float]:
    ctx = _ctx(with_rules, redos)
    if not redos:
        await assemble_chat_request(ctx)  # warm caches
    out = []
    for _ in range(RUNS):
        started = time.perf_counter()
        await assemble_chat_request(ctx)
        out.append((time.perf_counter() - started) * 1000)
    return out


def main() -> None:
    logging.getLogger("pallas.context.regex").setLevel(logging.CRITICAL)
    base = asyncio.run(_measure(False))
    rules = asyncio.run(_measure(True))
    redos = asyncio.run(_measure(True, redos=True))
    print(describe("assemble, no rules", base))
    print(describe("assemble, with rules", rules))
    print(describe("assemble, + ReDoS rule", redos))
    print(f"first {MAX_TIMEOUTS} ReDoS requests: {[round(v, 1) for v in redos[:MAX_TIMEOUTS]]} ms")
    print(f"ratio of medians (rules / none): {percentile(rules, 50) / percentile(base, 50):.2f}x")


if __name__ == "__main__":
    main()
