"""The config examples users copy from the README, docs/ and config/ must actually validate."""

import tomllib
from pathlib import Path

import pytest

from pallas.config import GroupConfig
from pallas.features.persona.pack import PersonaPack
from pallas.features.tools import McpConfig
from pallas.onebot.plugin_loading import listed_plugins, requirements
from pallas.providers.endpoints import ProvidersConfig

REPO = Path(__file__).resolve().parents[3]


def _readme_toml_blocks() -> list[str]:
    pages = [REPO / "README.md", REPO / "README.en.md", *sorted((REPO / "docs").glob("*.md"))]
    text = "\n".join(page.read_text(encoding="utf-8") for page in pages)
    return [part.split("```")[0] for part in text.split("```toml")[1:]]


PROVIDERS_MARK = "# config/providers.toml"  # first line of an example of that file
MCP_MARK = "# config/mcp.toml"
PYPROJECT_MARK = "# pyproject.toml"  # docs/plugins.md: a [tool.nonebot.plugins] example


@pytest.mark.parametrize("block", _readme_toml_blocks())
def test_readme_group_config_examples_validate(block: str) -> None:
    if block.lstrip().startswith(PROVIDERS_MARK):
        ProvidersConfig.model_validate(tomllib.loads(block))
    elif block.lstrip().startswith(MCP_MARK):
        assert McpConfig.model_validate(tomllib.loads(block)).servers
    elif block.lstrip().startswith(PYPROJECT_MARK):
        table = tomllib.loads(block)["tool"]["nonebot"]
        assert listed_plugins(table, {}) and requirements(table)
    else:
        GroupConfig.model_validate(tomllib.loads(block))


def test_shipped_mcp_file_validates_and_runs_no_server() -> None:
    text = (REPO / "config/mcp.toml").read_text(encoding="utf-8")
    assert McpConfig.model_validate(tomllib.loads(text)).servers == ()  # examples commented


def test_shipped_providers_file_validates() -> None:
    text = (REPO / "config/providers.toml").read_text(encoding="utf-8")
    assert ProvidersConfig.model_validate(tomllib.loads(text)).chat == ()  # backups commented


@pytest.mark.parametrize("path", sorted((REPO / "config/groups").glob("*.toml")), ids=str)
def test_shipped_group_configs_validate(path: Path) -> None:
    GroupConfig.model_validate(tomllib.loads(path.read_text(encoding="utf-8")))


@pytest.mark.parametrize("path", sorted((REPO / "config/personas").glob("*.toml")), ids=str)
def test_shipped_personas_validate(path: Path) -> None:
    pack = PersonaPack.model_validate(tomllib.loads(path.read_text(encoding="utf-8")))
    assert pack.sections.base.strip() and pack.aliases
