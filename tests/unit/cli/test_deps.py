"""`pallas deps`: the import graph from the source, and `--check` on its five rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from pallas.cli.deps import (
    back_doors,
    build_graph,
    cycles,
    layer_of,
    private_imports,
    report,
    upward_imports,
)
from pallas.cli.main import main


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for folder in ("pallas", "packages"):
        (root / folder).mkdir(exist_ok=True)
        (root / folder / "__init__.py").touch()
    return root


def test_the_code_base_keeps_every_rule(capsys):
    assert main(["deps", "--check"]) == 0
    out = capsys.readouterr().out
    assert "imports of a higher layer: 0" in out
    assert "imports past a feature's __init__: 0" in out
    assert "imports of a private package from outside its owner: 0" in out
    assert "NoneBot imports in pallas/ outside pallas/onebot/: 0" in out
    assert "feature cycles: 0" in out
    assert "module import cycles: 0" in out
    assert "FORBIDDEN" not in out


@pytest.mark.parametrize(
    ("module", "layer"),
    [
        ("pallas.core.state", "core"),
        ("pallas.routing.reply_gate", "routing"),
        ("pallas.features.memory.service", "features"),
        ("pallas.config", "config"),
        ("pallas.turn.reply", "turn"),
        ("pallas.runtime", "app"),
        ("pallas.app", "app"),
        ("pallas.onebot.lanes", "edge"),
        ("packages.recorder", "plugins"),
        ("pallas.configuration", None),  # a prefix is a whole name, not a string prefix
    ],
)
def test_every_module_has_one_layer(module, layer):
    assert layer_of(module) == layer


def test_a_lower_layer_importing_a_higher_one_is_refused(tmp_path, capsys):
    root = _tree(
        tmp_path,
        {
            "pallas/core/__init__.py": "",
            "pallas/core/repo.py": "from pallas.routing import reply_gate\n",
            "pallas/routing/__init__.py": "",
            "pallas/routing/reply_gate.py": "from pallas.core import repo\n",
            "pallas/features/__init__.py": "",
            "pallas/features/memory/__init__.py": "def f():\n    from pallas import runtime\n",
            "pallas/runtime.py": "",
            "pallas/app.py": "from pallas.runtime import x\n",  # the composition root may
        },
    )
    graph = build_graph(root)
    assert upward_imports(graph) == [
        ("pallas.core.repo", "pallas.routing"),  # `from pkg import mod` runs pkg/__init__ too
        ("pallas.core.repo", "pallas.routing.reply_gate"),
        ("pallas.features.memory", "pallas.runtime"),
    ]
    assert main(["deps", "--check", "--quiet", "--root", str(root)]) == 1
    out = capsys.readouterr().out
    assert "FORBIDDEN pallas.core.repo -> pallas.routing.reply_gate (core -> routing)" in out
    assert "layer edges" not in out  # --quiet prints only what is broken


def test_a_feature_is_imported_through_its_init_only(tmp_path):
    root = _tree(
        tmp_path,
        {
            "pallas/features/__init__.py": "",
            "pallas/features/memory/__init__.py": "from pallas.features.memory.service import S\n",
            "pallas/features/memory/service.py": "from pallas.features.memory import store\n",
            "pallas/features/memory/store.py": "",
            "pallas/features/kb/__init__.py": "from pallas.features.memory import S\n",
            "pallas/features/kb/lookup.py": "from pallas.features.memory.service import S\n",
            "pallas/turn/__init__.py": "",
            "pallas/turn/reply.py": "from pallas.features.memory import store\n",  # a module
        },
    )
    assert back_doors(build_graph(root)) == [
        ("pallas.features.kb.lookup", "pallas.features.memory.service"),
        ("pallas.turn.reply", "pallas.features.memory.store"),
    ]


def test_the_turns_parts_are_imported_only_inside_the_turn(tmp_path, capsys):
    root = _tree(
        tmp_path,
        {
            "pallas/turn/__init__.py": "from pallas.turn.parts.merges import TurnMerges\n",
            "pallas/turn/route.py": "from pallas.turn.parts import merges\n",  # a step: allowed
            "pallas/turn/parts/__init__.py": "",
            "pallas/turn/parts/merges.py": "TurnMerges = object\n",
            "pallas/app.py": "from pallas.turn import TurnMerges\n",  # the front door: allowed
            "pallas/web/__init__.py": "def f():\n    from pallas.turn.parts.merges import x\n",
            "packages/chat/__init__.py": "import pallas.turn.parts\n",
            "pallas/turnover.py": "from pallas.turn.parts import merges\n",  # not in pallas.turn
        },
    )
    assert private_imports(build_graph(root)) == [
        ("packages.chat", "pallas.turn.parts"),
        ("pallas.turnover", "pallas.turn.parts"),
        ("pallas.turnover", "pallas.turn.parts.merges"),
        ("pallas.web", "pallas.turn.parts.merges"),
    ]
    assert main(["deps", "--check", "--quiet", "--root", str(root)]) == 1
    out = capsys.readouterr().out
    assert "FORBIDDEN pallas.web -> pallas.turn.parts.merges" in out
    assert "4 broken import rule(s)" in out


def test_type_checking_imports_and_function_imports_count(tmp_path, capsys):
    root = _tree(
        tmp_path,
        {
            "pallas/features/__init__.py": "",
            "pallas/features/a/__init__.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from pallas.features.b import T\n"
            ),
            "pallas/features/b/__init__.py": "def g():\n    from pallas.features.a import x\n",
            "pallas/features/c/__init__.py": "from .d import y\n",
            "pallas/features/c/d.py": "y = 1\n",
        },
    )
    graph = build_graph(root)
    assert "pallas.features.b" in graph.edges["pallas.features.a"]
    assert "pallas.features.c.d" in graph.edges["pallas.features.c"]  # relative import
    lines, broken = report(graph)
    assert "  FORBIDDEN a <-> b" in lines  # a feature cycle hidden behind TYPE_CHECKING
    assert broken == 2  # the feature cycle and the module cycle it is made of
    assert main(["deps", "--check", "--root", str(root)]) == 1
    assert "2 broken import rule(s)" in capsys.readouterr().out


def test_nonebot_outside_the_edge_is_refused(tmp_path):
    root = _tree(
        tmp_path,
        {
            "pallas/core/__init__.py": "import nonebot\n",
            "pallas/onebot/__init__.py": "from nonebot.adapters import Bot\n",
            "packages/recorder/__init__.py": "from nonebot import on_message\n",
        },
    )
    lines, broken = report(build_graph(root))
    assert broken == 1
    assert "  FORBIDDEN pallas.core" in lines


def test_cycles_are_strongly_connected_groups():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert cycles(graph) == [["a", "b", "c"]]
