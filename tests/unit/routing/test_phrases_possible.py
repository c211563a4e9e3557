"""The route step loads the group's expressions only when a PASS phrase can be picked."""

from __future__ import annotations

import pytest

from pallas.routing.config import LowEngagementConfig
from pallas.turn.route import phrases_possible


@pytest.mark.parametrize(
    ("changes", "possible"),
    [
        ({}, True),  # the defaults roll 0.35 … 0.05
        ({"enabled": False}, False),
        ({"probability_steps": ((0, 0.0),)}, False),  # the e2e harness: dice off
        ({"probability_steps": ((0, 0.0), (3, 0.1))}, True),  # only after 3 bot replies
        ({"probability_steps": ((0, 0.0), (3, 0.0))}, False),
    ],
)
def test_phrases_possible(changes: dict[str, object], possible: bool) -> None:
    assert phrases_possible(LowEngagementConfig(**changes)) is possible  # type: ignore[arg-type]
