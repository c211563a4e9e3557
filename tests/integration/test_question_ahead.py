"""An @ read at the edge has its memory question encoded before its turn runs (issue #47's
reply-path budget): through the real adapter (`onebot_link`), the edge's read of an addressed
line starts the encode, a plain line starts nothing, and the turn's retrievals reuse the
vector — the question goes to the encoder once."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from pallas.app import PallasApp
from pallas.core.clock import FakeClock
from pallas.core.turn import TurnInput
from pallas.features.memory import group_scope
from pallas.ranking.text import encoded_parts
from tests.harness.fake_openai import FakeOpenAI, RecordedRequest
from tests.harness.onebot_strategies import frame_text
from tests.integration.chat_app import ALICE, BOB, BOT, GROUP, start_chat_app
from tests.integration.onebot_link import EdgeLink
from tests.integration.test_memory_embedding_model import CountingEncoder

_ids = itertools.count(7_100_001)


def _frame(user: int, text: str, *, at_bot: bool) -> tuple[int, str]:
    message_id = next(_ids)
    segments: list[dict[str, Any]] = [{"type": "text", "data": {"text": text}}]
    if at_bot:
        segments.insert(0, {"type": "at", "data": {"qq": str(BOT)}})
    frame = {
        "time": 1_760_000_000, "self_id": BOT, "post_type": "message", "message_type": "group",
        "sub_type": "normal", "message_id": message_id, "group_id": GROUP, "user_id": user,
        "anonymous": None, "raw_message": text, "font": 0, "message": segments,
        "sender": {"user_id": user, "nickname": "", "card": "", "role": "member"},
    }  # fmt: skip
    return message_id, frame_text(frame)


async def _taught(app: PallasApp, *facts: str) -> CountingEncoder:
    """ALICE's `facts` stored and embedded by a counting encoder in the slot (loaded, as `make
    run` has it a second after start), its batches cleared: what follows is the question's."""
    encoder = CountingEncoder("enc-edge@1")
    app.runtime.encoder.encoder = encoder
    for fact in facts:
        await app.memory.remember(bot_id=BOT, scope=group_scope(BOT, GROUP), kind="person_facts",
                                  text=fact, origin="teach", subject_user_id=ALICE)  # fmt: skip
    await app.memory.drain()
    encoder.batches.clear()
    return encoder


async def _asked(link: EdgeLink, fake_llm: FakeOpenAI, text: str) -> list[RecordedRequest]:
    """ALICE asks `text` (a line calling the bot by name); the LLM requests once it is answered
    and memory's background work is done."""
    _, frame = _frame(ALICE, text, at_bot=False)
    await link.play(BOT, [frame])
    requests = await fake_llm.wait_for_requests(1)
    await link.app.memory.drain()
    return requests


@pytest.fixture
async def link(
    tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[EdgeLink]:
    app, _ = await start_chat_app(tmp_path, fake_llm, FakeClock())

    async def no_process() -> None:  # the test's counting encoder goes in the slot instead
        return None

    monkeypatch.setattr(app.runtime.encoder, "load", no_process)
    edge_link = await EdgeLink.start(app)
    edge_link.edge.neighbours.wait_s = 0.0  # no other plugin to wait for
    yield edge_link
    await edge_link.stop()
    await app.stop()


async def test_an_at_is_encoded_from_its_read_and_once(
    link: EdgeLink, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = link.app
    encoder = await _taught(app, "我在杭州上班")
    anticipated: list[int] = []
    real = app.chat.anticipate

    def spy(turn: TurnInput) -> None:
        anticipated.append(turn.message_id)
        real(turn)

    monkeypatch.setattr(app.chat, "anticipate", spy)
    question = "我在哪个城市上班来着"
    at_id, at_frame = _frame(ALICE, question, at_bot=True)
    plain_id, plain_frame = _frame(BOB, "今天好热啊", at_bot=False)
    await link.play(BOT, [plain_frame, at_frame])
    requests = await fake_llm.wait_for_requests(1)  # the @ is answered: its turn retrieved memory
    await app.memory.drain()
    assert anticipated == [at_id]
    assert len(requests) == 1 and "我在杭州上班" in str(requests[0].body)
    asked = [b for b in encoder.batches if b == list(encoded_parts(question))]
    assert len(asked) == 1, encoder.batches
    stored = await app.runtime.repos.messages.find_by_message_ids(BOT, GROUP, [at_id, plain_id])
    assert set(stored) == {at_id, plain_id}


async def test_a_call_by_name_is_no_part_of_the_question(
    link: EdgeLink, fake_llm: FakeOpenAI
) -> None:
    """ "帕拉斯，我在哪个城市上班来着": the name is how the member called the bot, not what
    they asked. Encoded as a part of its own it cost an encode and matched every row naming
    the bot; the edge's head start and the turn's retrievals agree on the question without it
    (one encode, its parts those of the bare question)."""
    encoder = await _taught(link.app, "我在杭州上班")
    requests = await _asked(link, fake_llm, "帕拉斯，我在哪个城市上班来着？")
    assert len(requests) == 1 and "我在杭州上班" in str(requests[0].body)
    questions = [b for b in encoder.batches if b != ["我在杭州上班"]]  # the fact's own backfill
    assert questions == [list(encoded_parts("我在哪个城市上班来着？"))], encoder.batches


async def test_a_question_in_clauses_is_encoded_clause_by_clause_once(
    link: EdgeLink, fake_llm: FakeOpenAI
) -> None:
    """ "帕拉斯，我在哪个城市上班，家里养了什么？" asks two things: each clause finds its own
    fact, and the whole question's vector beside them found nothing more
    (`benchmarks.compound_questions`) for a fifth more of the encode. The edge's head start and
    the turn's retrievals send the clauses once, and both facts reach the request."""
    encoder = await _taught(link.app, "我在杭州上班", "我养了一只橘猫")
    requests = await _asked(link, fake_llm, "帕拉斯，我在哪个城市上班，家里养了什么？")
    body = str(requests[0].body)
    assert len(requests) == 1 and "我在杭州上班" in body and "我养了一只橘猫" in body
    assert encoder.batches == [["我在哪个城市上班", "家里养了什么"]], encoder.batches
