from __future__ import annotations

import pytest
from pydantic import ValidationError

from pallas.routing.config import RoutingConfig


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("necessity.to_me", 55),
        ("necessity.mention", 35),
        ("necessity.follow_up", 25),
        ("necessity.request", 25),
        ("necessity.question", 20),
        ("necessity.back_and_forth", 15),
        ("necessity.bystander", -45),
        ("necessity.noise", -40),
        ("necessity.spam", -50),
        ("necessity.short_reaction", -25),
        ("necessity.low_social", -35),
        ("necessity.per_recent_bot_reply", -8),
        ("necessity.low_affinity_max", -30),
        ("necessity.threshold", 50),
        ("ambient.rate", 0.08),
        ("ambient.cooldown_s", 120.0),
        ("ambient.budget", 2),
        ("ambient.budget_window_s", 900.0),
        ("cooldown.chat_cooldown_s", 3.0),
        ("cooldown.max_concurrency", 2),
        ("cooldown.queue_size", 8),
        ("gate.silence_min_s", 30.0),
        ("gate.silence_max_s", 300.0),
        ("quote.cooldown_s", 120.0),
        ("quote.probability", 0.25),
        ("quote.candidates", 6),
        ("low_engagement.max_chars", 12),
        ("low_engagement.probability_steps", ((0, 0.35), (1, 0.20), (3, 0.10), (5, 0.05))),
        ("short_social.venting_max_chars", 24),
        ("triggers.timeline_width_addressed", 8),
        ("triggers.timeline_width_ambient", 4),
        ("triggers.follow_up_window_s", 90.0),
    ],
)
def test_spec_defaults(path: str, expected: object) -> None:
    value: object = RoutingConfig()
    for part in path.split("."):
        value = getattr(value, part)
    assert value == expected


def test_partial_override_from_toml_like_dict_keeps_other_defaults() -> None:
    cfg = RoutingConfig.model_validate(
        {"ambient": {"rate": 0.2}, "low_engagement": {"soft_pool": ["嗯嗯", "好耶"]}}
    )
    assert cfg.ambient.rate == 0.2
    assert cfg.ambient.budget == 2
    assert cfg.low_engagement.soft_pool == ("嗯嗯", "好耶")
    assert cfg.necessity.threshold == 50


@pytest.mark.parametrize(
    "data",
    [
        {"ambiant": {"rate": 0.1}},  # typo in a section name
        {"ambient": {"rat": 0.1}},  # typo in a field name
        {"ambient": {"rate": 1.5}},  # out of range
        {"gate": {"silence_min_s": 60, "silence_max_s": 30}},
        {"low_engagement": {"probability_steps": [[3, 0.1], [0, 0.35]]}},
        {"low_engagement": {"probability_steps": [[0, 2.0]]}},
    ],
)
def test_invalid_admin_values_are_reported(data: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        RoutingConfig.model_validate(data)
