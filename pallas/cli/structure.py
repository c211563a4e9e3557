"""Objects are whole at birth (`pallas structure [--check]`, issue 46 item 2).

A service gets its collaborators in its constructor; nothing finishes it afterwards. This walks
the AST of `pallas/` and `packages/` (nothing is imported) and flags the three ways code finishes
someone else's object:

1. **Handing another object a collaborator**: `x.y = …` (also annotated, or `setattr(x, …)`)
   where `x` is not `self` / `cls` and the value builds or hands over a collaborator — a call
   of a class (`service.judge = TeachJudge(…)`), a lambda — or `y` names one
   (`*listeners`, `*hooks`, `*handlers`, `*callbacks`, `on_*`, `judge`, `profiles`).
2. **Registering onto another object's listeners**: `x.listeners.append(…)` (`extend`,
   `insert`, `add`; any of the names above) where `x` is not `self` —
   `service.write_listeners.append(listener)`, `runtime.writer.listeners.append(…)`.
3. **Subscribing anywhere but at birth**: `x.subscribe(…)` outside an `__init__`. Where two
   objects must hear each other (the message writer tells the warm caches that flush it), the
   source is built with an events object (`IngestEvents`) and a follower, handed it in its
   constructor, subscribes itself there — so a follower is whole, and listening, once built,
   and no builder function wires one object into another afterwards.

Why not every `x.y = …`: mutating a *record* — an ORM row being updated, a report's counters,
a cache entry, a response's status code — is what records are for (the literal rule flags 134
such sites in pallas/ and none of them wires anything). The rule is about services and their
collaborators, which are recognisable by what is assigned and by the listener names.
An object sets its own attributes (`self.y = …`) anywhere.

`ALLOWED` lists the sites that must stay, each with its reason; `--check` exits 1 on any other.
"""

from __future__ import annotations

import argparse
import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FOLDERS = ("pallas", "packages")
OWN = frozenset({"self", "cls"})
REGISTERING = frozenset({"append", "extend", "insert", "add"})
COLLABORATOR_SUFFIXES = ("listeners", "hooks", "handlers", "callbacks")
COLLABORATOR_NAMES = frozenset({"judge", "profiles"})

# (file relative to the repo, the flagged expression as written) -> why it must stay.
ALLOWED: dict[tuple[str, str], str] = {
    # Guards NoneBot's driver hooks while a third-party plugin is imported, and restores them
    # (the edge adapting a library's object, not Pallas's wiring).
    ("pallas/onebot/plugin_loading.py", "driver.on_startup"): "NoneBot driver, restored",
    ("pallas/onebot/plugin_loading.py", "driver.on_shutdown"): "NoneBot driver, restored",
}


@dataclass(frozen=True, slots=True, order=True)
class Finding:
    path: str
    line: int
    what: str  # the flagged expression, as written
    rule: str  # "assigns" | "registers" | "subscribes"

    def __str__(self) -> str:
        verb = {
            "assigns": "assigns another object's attribute",
            "registers": "appends to",
            "subscribes": "subscribes outside a constructor",
        }[self.rule]
        return f"{self.path}:{self.line}: {verb}: {self.what}"


def _foreign(target: ast.expr) -> bool:
    """An attribute of something other than `self` / `cls` (`x.y`, `self.x.y`, `f().y`)."""
    if not isinstance(target, ast.Attribute):
        return False
    return not (isinstance(target.value, ast.Name) and target.value.id in OWN)


def _collaborator_name(attr: str) -> bool:
    bare = attr.lstrip("_")
    return (
        bare.endswith(COLLABORATOR_SUFFIXES) or bare.startswith("on_") or bare in COLLABORATOR_NAMES
    )


def _builds(value: ast.expr | None) -> bool:
    """A lambda or a call of a class (a capitalised name): a collaborator being handed over."""
    if isinstance(value, ast.Lambda):
        return True
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    name = (
        func.id
        if isinstance(func, ast.Name)
        else func.attr
        if isinstance(func, ast.Attribute)
        else ""
    )
    # a class, or a builder (`reminder_firer_for(…)`, `build_memory_service(…)`)
    return name[:1].isupper() or name.endswith("_for") or name.startswith("build_")


def _value(node: ast.AST) -> ast.expr | None:
    return node.value if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign) else None


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        out: list[ast.expr] = []
        for target in node.targets:
            out.extend(target.elts if isinstance(target, ast.Tuple | ast.List) else [target])
        return out
    if isinstance(node, ast.AugAssign | ast.AnnAssign):
        return [node.target]
    return []


def _in_constructors(tree: ast.AST) -> set[int]:
    """The ids of the nodes inside an `__init__` (where a follower subscribes itself)."""
    return {
        id(node)
        for function in ast.walk(tree)
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
        and function.name == "__init__"
        for node in ast.walk(function)
    }


def findings_in(source: str, path: str = "<snippet>") -> list[Finding]:
    tree = ast.parse(source, filename=path)
    at_birth = _in_constructors(tree)
    found: list[Finding] = []
    for node in ast.walk(tree):
        for target in _targets(node):
            if _foreign(target) and (
                _builds(_value(node)) or _collaborator_name(target.attr)  # type: ignore[attr-defined]
            ):
                found.append(Finding(path, target.lineno, ast.unparse(target), "assigns"))
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id == "setattr" and node.args:
            owner = node.args[0]
            if not (isinstance(owner, ast.Name) and owner.id in OWN):
                found.append(Finding(path, node.lineno, ast.unparse(node), "assigns"))
        elif (
            isinstance(func, ast.Attribute)
            and func.attr in REGISTERING
            and _foreign(func.value)
            and _collaborator_name(func.value.attr)  # type: ignore[attr-defined]
        ):
            found.append(Finding(path, node.lineno, ast.unparse(func), "registers"))
        elif (
            isinstance(func, ast.Attribute)
            and func.attr == "subscribe"
            and _foreign(func)
            and id(node) not in at_birth
        ):
            found.append(Finding(path, node.lineno, ast.unparse(func), "subscribes"))
    return found


def scan(root: Path = REPO, folders: tuple[str, ...] = FOLDERS) -> Iterator[Finding]:
    for folder in folders:
        for file in sorted((root / folder).rglob("*.py")):
            rel = file.relative_to(root).as_posix()
            yield from findings_in(file.read_text(encoding="utf-8"), rel)


def broken(root: Path = REPO) -> list[Finding]:
    return sorted(f for f in scan(root) if (f.path, f.what) not in ALLOWED)


def _structure(args: argparse.Namespace) -> int:
    found = broken(Path(args.root))
    for finding in found:
        print(finding)
    if not args.quiet or found:
        print(f"objects finished after construction: {len(found)} (allowed: {len(ALLOWED)})")
    return 1 if args.check and found else 0


def register_structure(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cmd = sub.add_parser("structure", help="objects whole at birth: no finishing them later")
    cmd.add_argument("--check", action="store_true", help="exit 1 when a rule is broken")
    cmd.add_argument("--quiet", action="store_true", help="print only the broken rules")
    cmd.add_argument("--root", default=str(REPO), help="repository root to scan")
    cmd.set_defaults(handler=_structure)
