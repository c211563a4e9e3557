"""Which Pallas is running: the package's version plus the checkout's commit when there is one.

`pallas_version()` is `0.1.0+5fdd252 (2026-12-06)` in a git checkout (`git describe --always
--dirty` and the commit's date), the installed package's version otherwise (a wheel or an image
without `.git`). Read once per process; the console's 状态 page and `/pallas status` show it.
"""

from __future__ import annotations

import subprocess
from functools import cache
from importlib import metadata
from pathlib import Path

PACKAGE = "pallas-bot"
REPO = Path(__file__).resolve().parents[2]
GIT_TIMEOUT_S = 2.0


def _git(*args: str) -> str:
    try:
        done = subprocess.run(
            ["git", "-C", str(REPO), *args],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def package_version() -> str:
    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        return "0+unknown"


@cache
def pallas_version() -> str:
    base = package_version()
    if not (REPO / ".git").exists():
        return base
    described = _git("describe", "--tags", "--always", "--dirty")
    if not described:
        return base
    day = _git("log", "-1", "--format=%cs")
    return f"{base}+{described}" + (f" ({day})" if day else "")


__all__ = ["package_version", "pallas_version"]
