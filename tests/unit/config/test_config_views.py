"""The config views the feature slices declare are satisfied by `GroupConfig`: every
attribute a view reads exists on a group's config with the slice's type."""

from __future__ import annotations

import typing
from collections.abc import Sequence

import pytest

from pallas.app_memory import TokenBudgetView
from pallas.config import GroupConfig
from pallas.features.cost import CostCheckView
from pallas.features.learning import FeedbackConfigView, InsightConfigView
from pallas.features.memory_upkeep import ExtractionConfigView
from pallas.features.session import SummaryConfigView
from pallas.features.stickers import CollectConfigView, DescribeConfigView

VIEWS = [
    CostCheckView,
    FeedbackConfigView,
    InsightConfigView,
    ExtractionConfigView,
    TokenBudgetView,
    SummaryConfigView,
    CollectConfigView,
    DescribeConfigView,
]


def _members(view: type) -> dict[str, object]:
    """A view's read-only attributes and the type each one returns."""
    return {
        name: typing.get_type_hints(prop.fget)["return"]
        for name, prop in vars(view).items()
        if isinstance(prop, property) and prop.fget is not None
    }


def _runtime_type(hint: object) -> type:
    origin = typing.get_origin(hint)
    if origin is None:
        assert isinstance(hint, type)
        return hint
    return Sequence if origin is Sequence else typing.cast(type, origin)


@pytest.mark.parametrize("view", VIEWS, ids=lambda v: v.__name__)
def test_group_config_satisfies_the_view(view: type) -> None:
    members = _members(view)
    assert members, f"{view.__name__} reads nothing"
    config = GroupConfig()
    for name, hint in members.items():
        assert isinstance(getattr(config, name), _runtime_type(hint)), (view.__name__, name)


@pytest.mark.parametrize(
    ("view", "reads"),
    [
        (CostCheckView, {"cost", "admins"}),
        (FeedbackConfigView, {"learning", "admins"}),
        (InsightConfigView, {"learning", "other_bot_ids"}),
        (ExtractionConfigView, {"memory", "persona"}),
        (TokenBudgetView, {"context", "models"}),
        (SummaryConfigView, {"session", "images"}),
        (CollectConfigView, {"stickers", "record"}),
        (DescribeConfigView, {"stickers", "images"}),
    ],
)
def test_a_view_reads_only_what_it_names(view: type, reads: set[str]) -> None:
    assert set(_members(view)) == reads
