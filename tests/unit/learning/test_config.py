from __future__ import annotations

import pytest
from pydantic import ValidationError

from pallas.features.learning.collector import choose_collector
from pallas.features.learning.config import LearningConfig
from pallas.features.learning.reply_shape import decide_reply_shape


def test_defaults_match_the_reference_figures():
    config = LearningConfig()
    assert config.sweep_interval_seconds == 20 * 60
    assert config.label_batch_size == 40
    assert config.adjacency_gap_seconds == 120
    assert config.feedback_negative_words == ("不可以",)
    assert config.feedback_half_life_days == 30
    weights = config.blame_weights.as_mapping()
    assert {k: weights[k] for k in ("ambient", "expression", "semantic", "memory")} == {
        "ambient": -1,
        "expression": -3,
        "semantic": -2,
        "memory": -1,
    }
    shape = config.shape_options()
    assert (shape.casual.max_segments, shape.casual.min_chars, shape.casual.max_chars) == (3, 4, 18)
    assert (shape.non_casual.max_segments, shape.non_casual.max_chars) == (2, 80)
    assert (shape.tool.max_segments, shape.tool.max_chars) == (2, 160)
    assert config.expression_max_pairs == 2
    assert config.strategy_max_observed == config.strategy_max_reflection == 3


@pytest.mark.parametrize(
    "bad",
    [
        {"colect_enabled": False},  # typo: unknown field
        {"label_batch_size": 41},
        {"blame_weights": {"expression": 3}},  # blame must not reward
        {"blame_weights": {"ambiance": -1}},
        {
            "shape": {
                "casual": {"min_segments": 3, "max_segments": 1, "min_chars": 4, "max_chars": 18}
            }
        },
    ],
)
def test_bad_values_are_rejected_with_the_field(bad):
    with pytest.raises(ValidationError):
        LearningConfig().with_overrides(bad)


def test_group_overrides_apply_on_top_of_the_global_config():
    base = LearningConfig(daily_call_budget=10)
    group = base.with_overrides({"inject_enabled": False, "min_samples": 5})
    assert (group.inject_enabled, group.min_samples, group.daily_call_budget) == (False, 5, 10)
    assert base.inject_enabled is True


def test_nested_overrides_merge_key_by_key():
    base = LearningConfig(blame_weights={"memory": -2})
    group = base.with_overrides(
        {"blame_weights": {"expression": -5}, "shape": {"casual": {"max_chars": 24}}}
    )
    assert group.blame_weights.expression == -5
    assert group.blame_weights.memory == -2  # the global value, not the built-in default
    assert (group.shape.casual.max_chars, group.shape.casual.min_chars) == (24, 4)


@pytest.mark.parametrize(
    ("configured", "collecting", "stored_by", "expected"),
    [
        # one account: it collects (0 / unset = automatic; TOML cannot say null)
        (None, (), (1,), (1, "lowest_account")),
        (0, (), (1,), (1, "lowest_account")),
        # two accounts share the group: the lowest collects, once
        (None, (), (2, 1), (1, "lowest_account")),
        # an account already collecting keeps on, even when a lower one appears later
        (None, (2,), (1, 2), (2, "continues")),
        (None, (3, 2), (1, 2, 3), (2, "continues")),
        # the setting wins, even for an account that stored nothing yet
        (2, (1,), (1,), (2, "configured")),
        (None, (), (), (None, "no_account")),
    ],
)
def test_which_account_collects_a_group(configured, collecting, stored_by, expected):
    chosen = choose_collector(configured, collecting=collecting, stored_by=stored_by)
    assert (chosen.bot_id, chosen.reason) == expected


def test_options_flow_into_the_pure_modules():
    config = LearningConfig(
        adjacency_gap_seconds=30, other_bot_ids=(42,), min_samples=5, label_batch_size=10
    )
    assert config.pair_options().adjacency_gap_seconds == 30
    assert 42 in config.pair_options().other_bot_ids
    assert config.scheduler_options().batch_size == 10
    assert config.expression_options().min_rhythm_samples == 5
    assert decide_reply_shape(None, casual=True, options=config.shape_options()).max_chars == 18
