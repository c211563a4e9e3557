"""The reply path's token counts of real prompts are the whole-text BPE counts.

The bot (composition root, fake LLM) answers @s inside the benchmark transcripts, so its
system prompts carry the real persona, guard, contract, group timeline and session history.
Every text the reply step's `PieceTokenCounter` counts (each section, each whole system
prompt) is checked against `len(encode_ordinary(text))`, and the budget processor runs both
ways on every turn — with the counter and with the process-wide whole-text count — and must
decide exactly the same (kept / trimmed items, counts in the report, the prompt). The request
built with the reply step's cached pipeline equals one built with a fresh pipeline. A tight
budget in the second case makes it trim.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pallas.context import processors
from pallas.context.budget import BudgetResult
from pallas.context.chat_prompt import SECTION_SEPARATOR
from pallas.context.request import ChatRequest
from pallas.core.clock import FakeClock
from pallas.core.token_pieces import PieceTokenCounter
from pallas.core.tokens import count_message_tokens, get_encoding
from pallas.core.turn import Segment, Sender, TurnInput
from pallas.onebot.convert import stored_message_from_turn
from pallas.turn import prepare as reply_step
from pallas.turn.parts.chat_pipeline import build_chat_pipeline, chat_pipelines
from tests.harness.fake_openai import FakeOpenAI
from tests.integration.chat_app import BOT, GROUP, REPO, RecordingSender, start_chat_app

TRANSCRIPTS = REPO / "benchmarks" / "transcripts"


class CheckedCounter(PieceTokenCounter):
    """The reply path's counter, every answer compared with a whole-text encode."""

    def __init__(self) -> None:
        super().__init__(max_entries=256)
        self.checked: list[str] = []

    def count(self, text: str) -> int:
        got = super().count(text)
        assert got == len(get_encoding().encode_ordinary(text)), text
        self.checked.append(text)
        return got


@pytest.fixture
async def fake_llm() -> AsyncIterator[FakeOpenAI]:
    server = FakeOpenAI(default_reply="好呀\n我也这么想", in_process=True)
    await server.start()
    yield server
    await server.stop()


def _lines(name: str) -> list[dict[str, Any]]:
    text = (TRANSCRIPTS / f"{name}.jsonl").read_text("utf-8")
    rows = [json.loads(line) for line in text.split("\n") if line]
    return [
        r for r in rows if r.get("post_type") == "message" and r.get("user_id") != r.get("self_id")
    ]


def _turn(row: dict[str, Any], message_id: int, at_bot: bool) -> TurnInput:
    text = "".join(
        str(s.get("data", {}).get("text", "")) for s in row["message"] if s.get("type") == "text"
    )
    user = int(row["user_id"])
    segments = [Segment("at", {"qq": str(BOT)})] if at_bot else []
    segments.append(Segment("text", {"text": text}))
    card = str(row.get("sender", {}).get("card") or row.get("sender", {}).get("nickname") or "")
    return TurnInput(
        bot_id=BOT,
        group_id=GROUP,
        user_id=user,
        message_id=message_id,
        time=float(row["time"]),
        text=text,
        segments=tuple(segments),
        sender=Sender(user_id=user, card=card),
        mentions=(BOT,) if at_bot else (),
        to_me=at_bot,
    )


def _same(a: BudgetResult, b: BudgetResult) -> None:
    assert replace(a.report, elapsed_ms=0.0) == replace(b.report, elapsed_ms=0.0)
    assert a.system_prompt == b.system_prompt
    assert a.draft.sections == b.draft.sections
    assert a.draft.messages == b.draft.messages


@pytest.mark.parametrize(
    ("name", "group_toml"),
    [
        ("campus_group", "[context]\ntimeline_width = 30\n"),
        ("game_group", "[context]\nchar_budget = 700\ntimeline_width = 30\n"),
    ],
)
async def test_reply_path_counts_equal_whole_text_counts(
    name: str, group_toml: str, tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: Any
) -> None:
    results: list[BudgetResult] = []
    apply_budget = processors.apply_budget

    def both_ways(draft: Any, **kwargs: Any) -> BudgetResult:
        piecewise = apply_budget(draft, **kwargs)
        whole = apply_budget(draft, **{**kwargs, "count": None})
        _same(piecewise, whole)
        results.append(piecewise)
        return piecewise

    monkeypatch.setattr(processors, "apply_budget", both_ways)
    requests: list[ChatRequest] = []
    assemble = reply_step.assemble_chat_request

    async def against_a_fresh_pipeline(ctx: Any, pipeline: Any) -> ChatRequest:
        request = await assemble(ctx, pipeline)  # the reply step's cached pipeline
        fresh = await assemble(ctx, build_chat_pipeline(ctx.config))  # built for this turn
        assert request.messages == fresh.messages
        assert request.draft.sections == fresh.draft.sections
        assert request.draft.messages == fresh.draft.messages
        requests.append(request)
        return request

    monkeypatch.setattr(reply_step, "assemble_chat_request", against_a_fresh_pipeline)
    rows = _lines(name)
    clock = FakeClock(float(rows[0]["time"]))
    app, _ = await start_chat_app(tmp_path, fake_llm, clock, group_toml=group_toml)
    counter = CheckedCounter()
    app.chat.prepare.pipelines = chat_pipelines(counter)
    sender = RecordingSender()
    try:
        for i, row in enumerate(rows[:160]):
            clock.set(max(clock.now(), float(row["time"])))
            at_bot = i % 8 == 7
            turn = _turn(row, 5_000_000 + i, at_bot)
            app.runtime.writer.submit(stored_message_from_turn(turn))
            if at_bot:
                await app.chat.handle(turn, sender)
                clock.advance(30)
        await app.chat.drain_background()
    finally:
        await app.stop()
    systems = [r.system_prompt for r in results]
    assert len(results) >= 15 and all(SECTION_SEPARATOR in s for s in systems)
    assert len(requests) == len(results) // 2  # both ways: the fresh pipeline's budget too
    for request in requests:  # the cache layout sends the system prompt in two messages
        sent = "\n".join(str(m["content"]) for m in request.messages if m["role"] == "system")
        assert all(section.text in sent for section in request.draft.sections)
    assert set(systems) <= set(counter.checked)  # each whole prompt went through the counter
    for result in results:
        report = result.report
        request = [{"role": "system", "content": result.system_prompt}] + [
            m.to_openai() for m in result.draft.messages
        ]
        assert report.tokens_after == count_message_tokens(request)
    if "char_budget" in group_toml:
        assert any(r.report.trims for r in results)
    assert counter.hits > counter.misses  # the lines of the prompts repeat across turns
