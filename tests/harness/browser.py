"""Debian's chromium driven by Playwright (Playwright's own browser download is not used).

`.ci/run` installs the `chromium` package when it is missing; without it these tests skip with
a message saying so. Screenshots go to `tests/artifacts/<name>/` (git-ignored) unless
`PALLAS_TEST_ARTIFACTS` names another folder.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
DESKTOP = {"width": 1280, "height": 860}
PHONE = {"width": 390, "height": 844}
TALL = {"width": 1280, "height": 1500}  # the whole pipeline list on screen, for dragging
REPO = Path(__file__).resolve().parents[2]


def artifacts_dir(name: str) -> Path:
    root = Path(os.environ.get("PALLAS_TEST_ARTIFACTS") or REPO / "tests" / "artifacts")
    path = root / name
    path.mkdir(parents=True, exist_ok=True)
    return path


def chromium_path() -> str:
    path = CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")
    if not path:
        pytest.skip("Debian's chromium is not installed (.ci/run installs it): test skipped")
    return path


@asynccontextmanager
async def browser() -> AsyncIterator[object]:
    playwright_api = pytest.importorskip("playwright.async_api")
    async with playwright_api.async_playwright() as pw:
        instance = await pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            yield instance
        finally:
            await instance.close()
