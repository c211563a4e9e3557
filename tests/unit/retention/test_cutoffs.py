"""Which rows of a group a retention run prunes, and from when."""

from __future__ import annotations

import pytest

from pallas.core.clock import DAY_S
from pallas.features.retention import RetentionConfig, cutoffs

NOW = 1_760_000_000.0


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (RetentionConfig(), []),  # the default keeps everything, as before
        (RetentionConfig(messages_days=90), [("messages", NOW - 90 * DAY_S)]),
        (
            RetentionConfig(sessions_days=30, snapshots_days=7, usage_days=400),
            [("sessions", NOW - 30 * DAY_S), ("snapshots", NOW - 7 * DAY_S),
             ("usage", NOW - 400 * DAY_S)],
        ),
    ],
)  # fmt: skip
def test_cutoffs(config: RetentionConfig, expected: list[tuple[str, float]]) -> None:
    plan = cutoffs(config, NOW)
    assert [(c.kind, c.before) for c in plan] == expected
    assert all(c.reason == f"{c.kind}_days={config.days(c.kind)}" for c in plan)


def test_negative_days_are_refused() -> None:
    with pytest.raises(ValueError, match="greater than or equal to 0"):
        RetentionConfig(messages_days=-1)
