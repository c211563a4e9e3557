"""Every feature slice (and the ranking library) has a front door: a docstring saying what it
does and an `__all__` whose names all resolve (what the rest of the code base may import)."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

import pallas.features

FEATURES = sorted(
    p.name for p in Path(pallas.features.__file__).parent.iterdir() if (p / "__init__.py").is_file()
)


def test_the_slices_are_the_ones_the_design_names() -> None:
    assert FEATURES == [
        "attachments",
        "cost",
        "kb",
        "learning",
        "memory",
        "memory_commands",
        "memory_prompt",
        "memory_upkeep",
        "persona",
        "reminders",
        "retention",
        "session",
        "stickers",
        "svars",
        "tools",
        "voice",
        "worldbook",
    ]


# The shared libraries below the features that have a front door too (`pallas deps` rule 3).
LIBRARIES = ["pallas.ranking"]


@pytest.mark.parametrize("name", [f"pallas.features.{f}" for f in FEATURES] + LIBRARIES)
def test_a_front_door_documents_and_lists_its_surface(name: str) -> None:
    module = importlib.import_module(name)
    assert (module.__doc__ or "").strip(), f"{name}: no docstring"
    exported = getattr(module, "__all__", None)
    assert exported, f"{name}: no __all__"
    assert len(set(exported)) == len(exported)
    missing = [n for n in exported if not hasattr(module, n)]
    assert missing == []
