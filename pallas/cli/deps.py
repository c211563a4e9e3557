"""The import graph of the code base and the rules it must keep (`pallas deps [--check]`).

Reads the source with `ast` (nothing is imported), so it runs on a broken tree too. Every
import counts — inside functions and inside `if TYPE_CHECKING:` blocks alike: an annotation-only
import still ties two modules together, and hiding a cycle there is what the rules forbid.

The rules `--check` enforces (`make lint` runs it; exit 1 on a break):

1. **Layers.** A module imports only from its own layer or a lower one (`LAYERS`, low to
   high): the core knows nothing of the product, routing knows no feature, no feature knows
   the turn that uses it, and only the edge, the CLI and the plugins see the composition root.
2. **No cycles** between modules, and none between feature slices (`pallas.features.<name>`).
3. **Features through their front door.** Code outside `pallas/features/<name>/` imports that
   feature only as `pallas.features.<name>` (its curated `__init__`), never a module inside it;
   the same holds for the ranking library (`pallas.ranking`).
4. **NoneBot only at the edge**: under `pallas/onebot/` and in the thin plugins of `packages/`.
5. **Private packages stay private** (`PRIVATE`): nothing outside the owning package imports
   the private one or a module in it (`pallas.turn.parts` is the turn's; the composition root
   takes the parts it builds from `pallas.turn`'s `__init__`).

The other sections (layer edges, feature edges) are information for a maintainer.
"""

from __future__ import annotations

import argparse
import ast
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FOLDERS = ("pallas", "packages")
FEATURES = "pallas.features"
RANKING = "pallas.ranking"  # a shared library layer with a front door, like a feature

# Low to high. A module belongs to the first layer whose prefix it starts with.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("core", ("pallas.core",)),
    ("ranking", (RANKING,)),
    ("providers", ("pallas.providers",)),
    ("context", ("pallas.context",)),
    ("routing", ("pallas.routing",)),
    ("features", (FEATURES,)),
    ("config", ("pallas.config",)),
    ("turn", ("pallas.turn",)),
    ("admin", ("pallas.admin",)),
    ("web", ("pallas.web",)),
    (
        "app",
        (
            "pallas.runtime",
            "pallas.app",
            "pallas.app_model",
            "pallas.app_wiring",
            "pallas.app_memory",
        ),
    ),
    ("edge", ("pallas.onebot",)),
    ("cli", ("pallas.cli",)),
    ("plugins", ("packages",)),
)
_RANK = {name: rank for rank, (name, _) in enumerate(LAYERS)}

# private package → the package whose modules alone may import it
PRIVATE: dict[str, str] = {"pallas.turn.parts": "pallas.turn"}


@dataclass
class ImportGraph:
    """Module → imported modules (only first-party targets) plus NoneBot importers."""

    edges: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    nonebot: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
    return ".".join([*base, node.module] if node.module else base)


def _imports(tree: ast.AST, module: str, is_package: bool) -> Iterable[str]:
    """Every imported name, `if TYPE_CHECKING:` blocks and function bodies included."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, is_package, node)
            yield target
            for alias in node.names:  # `from pallas.core import state` imports a module
                yield f"{target}.{alias.name}"


def build_graph(root: Path = REPO, folders: tuple[str, ...] = FOLDERS) -> ImportGraph:
    graph = ImportGraph()
    known: set[str] = set()
    raw: dict[str, set[str]] = {}
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            module = _module_name(path, root)
            known.add(module)
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            raw[module] = set(_imports(tree, module, path.name == "__init__.py"))
    for module, targets in raw.items():
        for target in targets:
            if target == "nonebot" or target.startswith("nonebot."):
                graph.nonebot[module].add(target)
            elif target in known and target != module:
                graph.edges[module].add(target)
    return graph


def layer_of(module: str) -> str | None:
    for name, prefixes in LAYERS:
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return name
    return None


def feature_of(module: str) -> str | None:
    """`memory` for `pallas.features.memory.service` (None outside the feature slices)."""
    if not module.startswith(FEATURES + "."):
        return None
    return module[len(FEATURES) + 1 :].split(".")[0]


def upward_imports(graph: ImportGraph) -> list[tuple[str, str]]:
    """Imports of a higher layer (rule 1)."""
    found = []
    for src, dsts in graph.edges.items():
        a = layer_of(src)
        for dst in dsts:
            b = layer_of(dst)
            if a is not None and b is not None and _RANK[b] > _RANK[a]:
                found.append((src, dst))
    return sorted(found)


def _front_door(module: str) -> str | None:
    """The package whose `__init__` is the only way in from outside (a feature, the ranking)."""
    feature = feature_of(module)
    if feature is not None:
        return f"{FEATURES}.{feature}"
    if module == RANKING or module.startswith(RANKING + "."):
        return RANKING
    return None


def back_doors(graph: ImportGraph) -> list[tuple[str, str]]:
    """Imports of a module inside a feature (or `pallas.ranking`) from outside it (rule 3)."""
    found = []
    for src, dsts in graph.edges.items():
        for dst in dsts:
            door = _front_door(dst)
            if door is None or dst == door:
                continue
            if _front_door(src) != door:
                found.append((src, dst))
    return sorted(found)


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def private_imports(
    graph: ImportGraph, private: dict[str, str] | None = None
) -> list[tuple[str, str]]:
    """Imports of a private package from outside its owner (rule 5)."""
    rules = PRIVATE if private is None else private
    found = []
    for src, dsts in graph.edges.items():
        for dst in dsts:
            for package, owner in rules.items():
                if _within(dst, package) and not _within(src, owner):
                    found.append((src, dst))
    return sorted(found)


def nonebot_outside_edge(graph: ImportGraph) -> list[str]:
    return sorted(
        m
        for m in graph.nonebot
        if m.startswith("pallas.") and not (m == "pallas.onebot" or m.startswith("pallas.onebot."))
    )


def feature_edges(graph: ImportGraph) -> dict[tuple[str, str], int]:
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for src, dsts in graph.edges.items():
        a = feature_of(src)
        for dst in dsts:
            b = feature_of(dst)
            if a and b and a != b:
                counts[(a, b)] += 1
    return dict(sorted(counts.items()))


def layer_edges(graph: ImportGraph) -> dict[tuple[str, str], int]:
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for src, dsts in graph.edges.items():
        for dst in dsts:
            a, b = layer_of(src), layer_of(dst)
            if a and b and a != b:
                counts[(a, b)] += 1
    return dict(sorted(counts.items(), key=lambda kv: (_RANK[kv[0][0]], _RANK[kv[0][1]])))


def cycles(nodes: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    every = set(nodes) | {d for ds in nodes.values() for d in ds}
    for start in sorted(every):
        if start in index:
            continue
        work = [(start, iter(sorted(nodes.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(nodes.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    item = stack.pop()
                    on_stack.discard(item)
                    component.append(item)
                    if item == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _feature_graph(graph: ImportGraph) -> dict[str, set[str]]:
    nodes: dict[str, set[str]] = defaultdict(set)
    for a, b in feature_edges(graph):
        nodes[a].add(b)
    return nodes


def report(graph: ImportGraph) -> tuple[list[str], int]:
    """Printable lines and the number of broken rules' findings."""
    lines: list[str] = ["layers, low to high: " + " < ".join(name for name, _ in LAYERS)]
    lines.append("layer edges (importer -> imported: module edges)")
    lines += [f"  {a} -> {b}: {n}" for (a, b), n in layer_edges(graph).items()]
    unlayered = sorted(m for m in graph.edges if layer_of(m) is None and m != "pallas")
    lines += [f"  (no layer: {m})" for m in unlayered]

    upward = upward_imports(graph)
    lines.append(f"imports of a higher layer: {len(upward)}")
    lines += [f"  FORBIDDEN {a} -> {b} ({layer_of(a)} -> {layer_of(b)})" for a, b in upward]
    doors = back_doors(graph)
    lines.append(f"imports past a feature's __init__: {len(doors)}")
    lines += [f"  FORBIDDEN {a} -> {b}" for a, b in doors]
    hidden = private_imports(graph)
    lines.append(f"imports of a private package from outside its owner: {len(hidden)}")
    lines += [f"  FORBIDDEN {a} -> {b}" for a, b in hidden]
    outside = nonebot_outside_edge(graph)
    lines.append(f"NoneBot imports in pallas/ outside pallas/onebot/: {len(outside)}")
    lines += [f"  FORBIDDEN {m}" for m in outside]
    plugins = sorted(m for m in graph.nonebot if not m.startswith("pallas."))
    lines.append(f"NoneBot importers outside pallas/ (thin plugins): {len(plugins)}")

    edges = feature_edges(graph)
    lines.append(f"feature -> feature edges: {len(edges)}")
    lines += [f"  {a} -> {b}: {n}" for (a, b), n in edges.items()]
    feature_cycles = cycles(_feature_graph(graph))
    lines.append(f"feature cycles: {len(feature_cycles)}")
    lines += [f"  FORBIDDEN {' <-> '.join(c)}" for c in feature_cycles]
    module_cycles = cycles(graph.edges)
    lines.append(f"module import cycles: {len(module_cycles)}")
    lines += [f"  FORBIDDEN {len(c)} modules: {', '.join(c)}" for c in module_cycles]
    broken = (
        len(upward)
        + len(doors)
        + len(hidden)
        + len(outside)
        + len(feature_cycles)
        + len(module_cycles)
    )
    return lines, broken


def _deps(args: argparse.Namespace) -> int:
    lines, broken = report(build_graph(Path(args.root)))
    if args.quiet:
        lines = [line for line in lines if "FORBIDDEN" in line]
    if lines:
        print("\n".join(lines))
    if args.check and broken:
        print(f"{broken} broken import rule(s)")
        return 1
    return 0


def register_deps(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    deps = sub.add_parser("deps", help="import graph: layers, feature edges, cycles")
    deps.add_argument("--check", action="store_true", help="exit 1 when a rule is broken")
    deps.add_argument("--quiet", action="store_true", help="print only the broken rules")
    deps.add_argument("--root", default=str(REPO), help="repository root to scan")
    deps.set_defaults(handler=_deps)
