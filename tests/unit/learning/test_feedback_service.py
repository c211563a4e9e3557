"""Snapshot → blamed sources: which token is which kind of injection."""

from __future__ import annotations

import pytest

from pallas.features.learning.feedback_service import pair_key_of, snapshot_sources, source_kind
from pallas.features.learning.injection_feedback import attribute_blame


@pytest.mark.parametrize(
    ("token", "section", "kind"),
    [
        ("pair:1:2:3:4", "group_expression", "expression"),
        ("strategy:1:2:observed:abc", "behavior_reference", "semantic"),
        ("ambient:2:10-11", None, "ambient"),
        ("ambient:timeline:2:77", "group_timeline", "ambient"),
        ("topic:17", "mid_term", "memory"),
        ("session:5", None, "session"),
        ("current:9", None, "current"),
    ],
)
def test_source_kind(token: str, section: str | None, kind: str) -> None:
    assert source_kind(token, section) == kind


def test_snapshot_sources_cover_sections_memory_ids_and_messages() -> None:
    data = {
        "sections": [
            {"id": "guard", "source_tokens": []},
            {"id": "group_expression", "source_tokens": ["pair:1:2:3:4"]},
            {"id": "memory", "source_tokens": [], "memory_ids": ["m7"]},
            {"id": "group_timeline", "source_tokens": ["ambient:timeline:2:77"]},
        ],
        "messages": [{"source_token": "ambient:2:5-6"}, {"source_token": ""}],
    }
    sources = [(s.kind, s.source_id) for s in snapshot_sources(data)]
    assert sources == [
        ("expression", "pair:1:2:3:4"),
        ("memory", "memory:m7"),
        ("ambient", "ambient:timeline:2:77"),
        ("ambient", "ambient:2:5-6"),
    ]
    blames, ignored = attribute_blame(snapshot_sources(data))
    assert {b.kind: b.weight for b in blames} == {
        "expression": -3.0,
        "memory": -1.0,
        "ambient": -1.0,
    }
    assert ignored == ()


def test_pair_key_of() -> None:
    assert pair_key_of("pair:1:2:-30:40") == (-30, 40)
    assert pair_key_of("pair:1:2:x:40") is None
    assert pair_key_of("strategy:1:2:3:4") is None
