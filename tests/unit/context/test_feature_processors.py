"""The context layer builds a pipeline without any feature; the turn hands the slices'
processors in, and the chat pipeline's ids, priorities and order are spec 003's."""

from __future__ import annotations

import pytest

from pallas.context.config import ContextConfig
from pallas.context.processors import build_context_pipeline, default_processors
from pallas.features.svars.config import SvarConfig, SvarDef
from pallas.features.svars.render import SvarView, render_state_section
from pallas.turn.parts.chat_pipeline import build_chat_pipeline, chat_pipelines, feature_processors

FEATURES = {"attachments": 310, "kb_placeholders": 450, "svars": 500}


def test_the_context_layer_alone_has_no_feature_processor() -> None:
    ids = {p.id for p in default_processors()}
    assert ids.isdisjoint(FEATURES)
    assert set(build_context_pipeline().order).isdisjoint(FEATURES)


@pytest.mark.parametrize(("processor_id", "priority"), sorted(FEATURES.items()))
def test_the_turn_hands_in_each_slice_processor(processor_id: str, priority: int) -> None:
    processors = {p.id: p for p in feature_processors()}
    assert processors[processor_id].priority == priority
    assert not processors[processor_id].core


def test_the_chat_pipeline_is_the_context_order_with_the_slices_at_their_priorities() -> None:
    order = build_chat_pipeline().order
    assert order == (
        "guard",
        "persona",
        "self_identity",
        "group_expression",
        "behavior_reference",
        "memory",
        "knowledge",
        "relationship",
        "person_facts",
        "mid_term",
        "group_timeline",
        "reply_shape",
        "turn_policy",
        "current_time",
        "tool_context",
        "session_messages",
        "regex",
        "attachments",
        "worldbook",
        "timeline_images",
        "macros",
        "prompt_overrides",
        "injections",
        "kb_placeholders",
        "svars",
        "budget",
        "formatter",
    )


def test_the_reply_path_pipelines_carry_the_slices_too() -> None:
    config = ContextConfig(disabled_processors=["svars"])
    cached = chat_pipelines().for_config(config)
    assert cached.order == build_chat_pipeline(config).order
    assert [s.processor.id for s in cached.plan if not s.enabled] == ["svars"]


VIEW = SvarView(SvarConfig(variables=[SvarDef(name="hp", default=100)]), {(0, "hp"): 40}, 42)


HIDDEN = SvarView(VIEW.config.model_copy(update={"state_section": False}), VIEW.values, 42)


@pytest.mark.parametrize(
    ("view", "section", "rendered", "trace"),
    [
        (VIEW, render_state_section(VIEW), ("HP=40", ("hp",)), {"0:hp": 40}),
        (HIDDEN, "", ("HP=40", ("hp",)), {"0:hp": 40}),
        (SvarView(SvarConfig(), {}, 42), "", ("HP=$[svars::hp]", ()), {}),
    ],
)
def test_a_svar_view_answers_the_context_protocol(
    view: SvarView, section: str, rendered: tuple[str, tuple[str, ...]], trace: dict[str, int]
) -> None:
    assert view.state_section() == section
    assert view.render_placeholders("HP=$[svars::hp]") == rendered
    assert view.trace_values() == trace
