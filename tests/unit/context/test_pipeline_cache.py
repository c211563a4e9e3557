"""`ChatPipelines`: one pipeline per (order, disabled) setting, sharing the budget's counter."""

from __future__ import annotations

from pallas.context import pipeline_cache
from pallas.context.config import ContextConfig
from pallas.context.processors import BudgetProcessor
from pallas.core.token_pieces import PieceTokenCounter
from pallas.turn.parts.chat_pipeline import build_chat_pipeline, chat_pipelines


def test_the_same_setting_reuses_the_pipeline_and_another_gets_its_own():
    pipelines = chat_pipelines()
    default = pipelines.for_config(ContextConfig())
    assert pipelines.for_config(ContextConfig(char_budget=900)) is default  # not in the key
    disabled = pipelines.for_config(ContextConfig(disabled_processors=["svars"]))
    reordered = pipelines.for_config(ContextConfig(processor_order=["macros", "regex"]))
    assert len({id(default), id(disabled), id(reordered)}) == 3
    for config in (ContextConfig(disabled_processors=["svars"]), ContextConfig()):
        fresh = build_chat_pipeline(config)
        cached = pipelines.for_config(config)
        assert cached.order == fresh.order and cached.warnings == fresh.warnings
        assert [s.enabled for s in cached.plan] == [s.enabled for s in fresh.plan]


def test_the_budget_counts_with_the_shared_counter():
    counter = PieceTokenCounter()
    budget = next(
        s.processor
        for s in chat_pipelines(counter).for_config(ContextConfig()).plan
        if isinstance(s.processor, BudgetProcessor)
    )
    assert budget._count == counter.count


def test_the_map_is_bounded(monkeypatch):
    monkeypatch.setattr(pipeline_cache, "MAX_PIPELINES", 3)
    pipelines = chat_pipelines()
    for name in ("a", "b", "c", "d", "e"):
        pipelines.for_config(ContextConfig(disabled_processors=[name]))
        assert len(pipelines._pipelines) <= 3
