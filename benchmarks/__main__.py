"""Run every benchmark: `python -m benchmarks` (or `make bench`)."""

from __future__ import annotations

import importlib
import pkgutil
import sys

import benchmarks


def main() -> int:
    names = sorted(
        m.name for m in pkgutil.iter_modules(benchmarks.__path__) if not m.name.startswith("_")
    )
    selected = sys.argv[1:] or names
    for name in selected:
        module = importlib.import_module(f"benchmarks.{name}")
        if hasattr(module, "main"):
            print(f"\n=== {name} ===")
            module.main()
    return 0


if __name__ == "__main__":
    sys.exit(main())
