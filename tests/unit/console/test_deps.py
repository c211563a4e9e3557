"""`pallas deps`: the import graph from the source, and `--check` on the three layer rules."""

from __future__ import annotations

from pathlib import Path

from pallas.console.deps import RUNTIME_PENDING, build_graph, cycles, report, runtime_in_product
from pallas.console.main import main


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for folder in ("pallas", "packages"):
        (root / folder).mkdir(exist_ok=True)
    return root


def test_the_code_base_has_no_forbidden_edge(capsys):
    assert main(["deps", "--check"]) == 0
    out = capsys.readouterr().out
    assert "core -> product back-edges: 0" in out
    assert "NoneBot imports in pallas/ outside pallas/onebot/: 0" in out
    assert "FORBIDDEN" not in out
    # no product or web module imports the runtime, and none is excused as pending
    assert not RUNTIME_PENDING and runtime_in_product(build_graph()) == []
    assert "pending" not in out


def test_check_fails_on_product_or_web_importing_the_runtime(tmp_path, capsys):
    root = _tree(
        tmp_path,
        {
            "pallas/__init__.py": "",
            "pallas/runtime.py": "",
            "pallas/app.py": "from pallas.runtime import PallasRuntime\n",
            "pallas/product/__init__.py": "",
            "pallas/product/admin.py": "from pallas.runtime import PallasRuntime\n",
            "pallas/web/__init__.py": "def f():\n    from pallas import runtime\n",
            "pallas/console/__init__.py": "",
            "pallas/console/cli.py": "import pallas.runtime\n",
        },
    )
    lines, forbidden = report(build_graph(root))
    assert forbidden == 2  # the composition root and the CLI may; product and web may not
    assert "  FORBIDDEN pallas.product.admin" in lines
    assert "  FORBIDDEN pallas.web" in lines
    assert main(["deps", "--check", "--quiet", "--root", str(root)]) == 1
    out = capsys.readouterr().out
    assert "FORBIDDEN pallas.product.admin" in out and "layer edges" not in out


def test_check_fails_on_core_importing_product_and_nonebot_outside_onebot(tmp_path, capsys):
    root = _tree(
        tmp_path,
        {
            "pallas/__init__.py": "",
            "pallas/core/__init__.py": "",
            "pallas/core/repo.py": "from pallas.product.llm.learning.pairs import ReplyPair\n",
            "pallas/product/__init__.py": "",
            "pallas/product/llm/__init__.py": "",
            "pallas/product/llm/learning/__init__.py": "",
            "pallas/product/llm/learning/pairs.py": "import nonebot\n",
            "pallas/onebot/__init__.py": "from nonebot.adapters import Bot\n",
        },
    )
    lines, forbidden = report(build_graph(root))
    assert forbidden == 2
    assert "  FORBIDDEN pallas.core.repo -> pallas.product.llm.learning.pairs" in lines
    assert "  FORBIDDEN pallas.product.llm.learning.pairs" in lines
    assert main(["deps", "--check", "--root", str(root)]) == 1
    assert "2 forbidden import edge(s)" in capsys.readouterr().out


def test_relative_and_function_imports_count_type_checking_imports_do_not(tmp_path):
    root = _tree(
        tmp_path,
        {
            "pallas/__init__.py": "",
            "pallas/product/__init__.py": "",
            "pallas/product/llm/__init__.py": "",
            "pallas/product/llm/a/__init__.py": "",
            "pallas/product/llm/a/x.py": (
                "from typing import TYPE_CHECKING\n"
                "from .y import f\n"
                "if TYPE_CHECKING:\n    from pallas.product.llm.b.z import T\n"
                "def g():\n    from pallas.product.llm.c import w\n"
            ),
            "pallas/product/llm/a/y.py": "def f(): ...\n",
            "pallas/product/llm/b/__init__.py": "",
            "pallas/product/llm/b/z.py": "T = int\n",
            "pallas/product/llm/c/__init__.py": "",
            "pallas/product/llm/c/w.py": "",
        },
    )
    edges = build_graph(root).edges["pallas.product.llm.a.x"]
    assert "pallas.product.llm.a.y" in edges and "pallas.product.llm.c.w" in edges
    assert "pallas.product.llm.b.z" not in edges


def test_cycles_are_strongly_connected_groups():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert cycles(graph) == [["a", "b", "c"]]
