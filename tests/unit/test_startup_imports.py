"""Start-up stays light: the heavy optional imports happen after "listening", not before."""

from __future__ import annotations

import subprocess
import sys

from pallas.core import malloc_tuning


def _modules_after(statement: str) -> set[str]:
    code = f"import sys\n{statement}\nprint(' '.join(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return set(out.stdout.split())


def test_building_the_app_does_not_import_the_openai_sdk() -> None:
    modules = _modules_after(
        "from pallas.app import build_app\nfrom pallas.providers.client import LLMClient"
    )
    assert "openai" not in modules
    assert "pallas.app" in modules


def test_jieba_is_imported_without_pkg_resources_and_segments_the_same() -> None:
    modules = _modules_after(
        "from pallas.ranking.text import tokenize\n"
        "assert tokenize('罗德岛的干员们在周末一起打活动')[:3] == ('德岛', '罗德岛', '干员')"
    )
    assert "jieba" in modules
    assert "pkg_resources" not in modules


def test_the_sdk_loads_on_demand() -> None:
    modules = _modules_after("from pallas.providers.client import load_sdk\nload_sdk()")
    assert "openai" in modules


def test_malloc_tuning_is_safe_to_call_repeatedly() -> None:
    for _ in range(2):
        assert isinstance(malloc_tuning.tune(), bool)
        assert isinstance(malloc_tuning.trim(), bool)
