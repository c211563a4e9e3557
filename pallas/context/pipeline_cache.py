"""The reply path's chat pipelines, built once per (order, disabled) setting, and its counter.

`build_chat_pipeline` creates ~27 processor objects and plans their order; the processors are
stateless (they read the turn's `ChatTurnContext` only), so the same pipeline serves every turn
of every group with the same `[context] processor_order` / `disabled_processors`. A changed
group config simply maps to another key; the map is bounded (cleared when full).
"""

from __future__ import annotations

from pallas.context.config import ContextConfig
from pallas.context.pipeline import ContextPipeline
from pallas.context.processors import build_chat_pipeline
from pallas.core.token_pieces import PieceTokenCounter

MAX_PIPELINES = 64


class ChatPipelines:
    """Pipelines by per-group setting, sharing one `PieceTokenCounter` (the budget's)."""

    def __init__(self, tokens: PieceTokenCounter | None = None) -> None:
        self.tokens = PieceTokenCounter() if tokens is None else tokens
        self._pipelines: dict[tuple[tuple[str, ...], tuple[str, ...]], ContextPipeline] = {}

    def for_config(self, config: ContextConfig) -> ContextPipeline:
        key = (tuple(config.processor_order), tuple(config.disabled_processors))
        pipeline = self._pipelines.get(key)
        if pipeline is None:
            if len(self._pipelines) >= MAX_PIPELINES:
                self._pipelines.clear()
            pipeline = build_chat_pipeline(config, token_counter=self.tokens)
            self._pipelines[key] = pipeline
        return pipeline
