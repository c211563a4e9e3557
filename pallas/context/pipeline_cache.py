"""The reply path's chat pipelines, built once per (order, disabled) setting, and its counter.

A pipeline holds ~27 processor objects and the plan of their order; the processors are
stateless (they read the turn's `ChatTurnContext` only), so the same pipeline serves every turn
of every group with the same `[context] processor_order` / `disabled_processors`. A changed
group config simply maps to another key; the map is bounded (cleared when full). The feature
slices' processors are handed in (`pallas.turn.parts.chat_pipeline.chat_pipelines`).
"""

from __future__ import annotations

from collections.abc import Sequence

from pallas.context.config import ContextConfig
from pallas.context.processor_inputs import ChatPipeline, ChatProcessor
from pallas.context.processors import build_context_pipeline
from pallas.core.token_pieces import PieceTokenCounter

MAX_PIPELINES = 64


class ChatPipelines:
    """Pipelines by per-group setting, sharing one `PieceTokenCounter` (the budget's) and the
    slices' processors (`features`, stateless like the context's own)."""

    def __init__(
        self, features: Sequence[ChatProcessor], tokens: PieceTokenCounter | None = None
    ) -> None:
        self.features = tuple(features)
        self.tokens = PieceTokenCounter() if tokens is None else tokens
        self._pipelines: dict[tuple[tuple[str, ...], tuple[str, ...]], ChatPipeline] = {}

    def for_config(self, config: ContextConfig) -> ChatPipeline:
        key = (tuple(config.processor_order), tuple(config.disabled_processors))
        pipeline = self._pipelines.get(key)
        if pipeline is None:
            if len(self._pipelines) >= MAX_PIPELINES:
                self._pipelines.clear()
            pipeline = build_context_pipeline(config, self.features, token_counter=self.tokens)
            self._pipelines[key] = pipeline
        return pipeline
