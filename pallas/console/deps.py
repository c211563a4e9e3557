"""The import graph of the code base: layer back-edges, stage edges and cycles (`pallas deps`).

Reads the source with `ast` (nothing is imported), so it runs on a broken tree too; imports
inside functions count, `if TYPE_CHECKING:` imports do not (they are not run). Layers:
`pallas.core` (infrastructure) must import nothing from `pallas.product`; NoneBot is imported
only under `pallas/onebot/` (and by the thin plugins in `packages/`); product and web code
(`pallas.product.*`, `pallas.web.*`) never imports `pallas.runtime` — services take what they use
through their constructors, built by the composition root `pallas.app`. `--check` exits 1 when
one of those three rules is broken (`make lint` runs it); the other sections are information
for a maintainer.
"""

from __future__ import annotations

import argparse
import ast
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
STAGE_ROOT = "pallas.product.llm"
# layers that must not import `pallas.runtime` (the composition root `pallas.app`, the NoneBot
# edge `pallas.onebot.lifecycle`, the CLI and `packages/console` may)
RUNTIME_FREE = ("pallas.product", "pallas.web")
# known, listed exceptions still to remove (none left: `ChatTurnService` takes its parts)
RUNTIME_PENDING: frozenset[str] = frozenset()


@dataclass
class ImportGraph:
    """Module → imported modules (only `pallas.*` targets) plus third-party NoneBot importers."""

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


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.AST) -> Iterable[ast.Import | ast.ImportFrom]:
    """Every import statement, including those inside functions, except `if TYPE_CHECKING:`
    blocks (annotations only: not an edge at run time)."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
            continue
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def _imports(tree: ast.AST, module: str, is_package: bool) -> Iterable[str]:
    for node in _import_nodes(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        else:
            target = _resolve(module, is_package, node)
            yield target
            for alias in node.names:  # `from pallas.core import state` imports a module
                yield f"{target}.{alias.name}"


FOLDERS = ("pallas", "packages")


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


def _layer(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "pallas" else parts[0]


def _stage(module: str) -> str | None:
    if not module.startswith(STAGE_ROOT + "."):
        return None
    rest = module[len(STAGE_ROOT) + 1 :].split(".")
    return rest[0]


def core_back_edges(graph: ImportGraph) -> list[tuple[str, str]]:
    return sorted(
        (src, dst)
        for src, dsts in graph.edges.items()
        if src.startswith("pallas.core")
        for dst in dsts
        if dst.startswith("pallas.product") or dst == "pallas.runtime"
    )


def nonebot_outside_onebot(graph: ImportGraph) -> list[str]:
    return sorted(m for m in graph.nonebot if m.startswith("pallas.") and not _in_onebot(m))


def _in_onebot(module: str) -> bool:
    return module == "pallas.onebot" or module.startswith("pallas.onebot.")


def stage_edges(graph: ImportGraph) -> dict[tuple[str, str], int]:
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for src, dsts in graph.edges.items():
        a = _stage(src)
        for dst in dsts:
            b = _stage(dst)
            if a and b and a != b:
                counts[(a, b)] += 1
    return dict(sorted(counts.items()))


def runtime_importers(graph: ImportGraph) -> list[str]:
    return sorted(src for src, dsts in graph.edges.items() if "pallas.runtime" in dsts)


def runtime_in_product(graph: ImportGraph) -> list[str]:
    """Product / web modules importing `pallas.runtime` (forbidden unless listed as pending)."""
    return [
        m
        for m in runtime_importers(graph)
        if m.startswith(RUNTIME_FREE) and m not in RUNTIME_PENDING
    ]


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


def _stage_graph(graph: ImportGraph) -> dict[str, set[str]]:
    nodes: dict[str, set[str]] = defaultdict(set)
    for a, b in stage_edges(graph):
        nodes[a].add(b)
    return nodes


def layer_edges(graph: ImportGraph) -> dict[tuple[str, str], int]:
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for src, dsts in graph.edges.items():
        for dst in dsts:
            a, b = _layer(src), _layer(dst)
            if a != b:
                counts[(a, b)] += 1
    return dict(sorted(counts.items()))


def report(graph: ImportGraph) -> tuple[list[str], int]:
    """Printable lines and the number of forbidden edges."""
    lines: list[str] = ["layer edges (importer -> imported: module edges)"]
    lines += [f"  {a} -> {b}: {n}" for (a, b), n in layer_edges(graph).items()]
    back = core_back_edges(graph)
    lines.append(f"core -> product back-edges: {len(back)}")
    lines += [f"  FORBIDDEN {a} -> {b}" for a, b in back]
    outside = nonebot_outside_onebot(graph)
    lines.append(f"NoneBot imports in pallas/ outside pallas/onebot/: {len(outside)}")
    lines += [f"  FORBIDDEN {m}" for m in outside]
    plugins = sorted(m for m in graph.nonebot if not m.startswith("pallas."))
    lines.append(f"NoneBot importers outside pallas/ (thin plugins): {len(plugins)}")
    importers, forbidden_rt = runtime_importers(graph), runtime_in_product(graph)
    lines.append(f"modules importing pallas.runtime: {len(importers)}")
    lines += [
        f"  {'FORBIDDEN ' if m in forbidden_rt else ''}{m}"
        f"{' (pending: listed in RUNTIME_PENDING)' if m in RUNTIME_PENDING else ''}"
        for m in importers
    ]
    edges = stage_edges(graph)
    lines.append(f"product stage -> stage edges ({STAGE_ROOT}.*): {len(edges)}")
    lines += [f"  {a} -> {b}: {n}" for (a, b), n in edges.items()]
    stage_cycles = cycles(_stage_graph(graph))
    lines.append(f"stage cycles (strongly connected groups of stages): {len(stage_cycles)}")
    lines += [f"  {' <-> '.join(c)}" for c in stage_cycles]
    module_cycles = cycles(graph.edges)
    lines.append(f"module import cycles (strongly connected groups): {len(module_cycles)}")
    for c in module_cycles:
        lines.append(f"  {len(c)} modules: {', '.join(c[:4])}{' …' if len(c) > 4 else ''}")
    return lines, len(back) + len(outside) + len(forbidden_rt)


def _deps(args: argparse.Namespace) -> int:
    lines, forbidden = report(build_graph(Path(args.root)))
    if args.quiet:
        lines = [line for line in lines if "FORBIDDEN" in line]
    if lines:
        print("\n".join(lines))
    if args.check and forbidden:
        print(f"{forbidden} forbidden import edge(s)")
        return 1
    return 0


def register_deps(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    deps = sub.add_parser("deps", help="import graph: layer back-edges, stage edges, cycles")
    deps.add_argument("--check", action="store_true", help="exit 1 on a forbidden edge")
    deps.add_argument("--quiet", action="store_true", help="print only the forbidden edges")
    deps.add_argument("--root", default=str(REPO), help="repository root to scan")
    deps.set_defaults(handler=_deps)
