"""The concept classes are data (`pallas/ranking/data/concepts.toml`): the shipped file
loads with every parent known, and a broken file says what is wrong instead of loading half."""

from __future__ import annotations

from pathlib import Path

import pytest

from pallas.ranking.concepts import fact_concepts, query_concepts
from pallas.ranking.concepts_table import CLASSES, DATA_FILE, load_classes


def test_the_shipped_file_is_the_table() -> None:
    assert load_classes(DATA_FILE) == CLASSES
    names = [c.name for c in CLASSES]
    assert len(names) == len(set(names)) and {"place", "sport", "hobby", "pet"} <= set(names)
    sport = next(c for c in CLASSES if c.name == "sport")
    assert "hobby" in sport.parents and "游泳" in sport.members
    pet = next(c for c in CLASSES if c.name == "pet")
    assert ("猫", "布偶", "英短", "美短", "橘猫", "狸花") in pet.instances  # an instance, its kinds
    place = next(c for c in CLASSES if c.name == "place")
    assert ("四川", "成都") in place.instances and place.nested  # a province holds its towns


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('[[class]]\nname = "a"\nparents = ["nowhere"]\n', "unknown parents"),
        ('[[class]]\nname = "a"\nmembrs = ["x"]\n', "bad fields ['membrs']"),
        ('[[class]]\nmembers = ["x"]\n', "bad fields"),
        ('[[class]]\nname = "a"\ninstances = ["x", "|"]\n', "an empty instance"),
        ('[[class]]\nname = "a"\ninstances = ["x|y", "y"]\n', "['y'] name two instances"),
        ('[[class]]\nname = "a"\nnested = "yes"\n', "nested must be true or false"),
    ],
)
def test_a_broken_file_is_refused_with_the_reason(tmp_path: Path, text: str, error: str) -> None:
    path = tmp_path / "concepts.toml"
    path.write_text(text, "utf-8")
    with pytest.raises(ValueError, match=error.replace("[", r"\[").replace("]", r"\]")):
        load_classes(path)


def test_classes_from_the_file_reach_recall() -> None:
    """What the file says is what recall uses: a member word, a question pattern, a parent."""
    assert {"sport", "hobby"} <= fact_concepts("TA周末去游泳")
    assert "place" in query_concepts("你住在哪个区")
