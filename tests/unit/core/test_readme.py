"""The two READMEs are one front door: the Chinese README.md and README.en.md give the same
commands (every ```sh block, in order), start with `make run` and `make test`, and the settings
tables are whole tables (no paragraph between their rows)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
PAGES = (REPO / "README.md", REPO / "README.en.md")


def command_blocks(page: Path) -> list[str]:
    return re.findall(r"```sh\n(.*?)```", page.read_text(encoding="utf-8"), re.DOTALL)


def test_both_readmes_give_the_same_commands() -> None:
    chinese, english = (command_blocks(p) for p in PAGES)
    assert chinese and chinese == english


def test_the_first_commands_are_make_run_and_make_test() -> None:
    for page in PAGES:
        first = command_blocks(page)[0].splitlines()
        assert [line.split()[:2] for line in first[:2]] == [["make", "run"], ["make", "test"]]


def table_problems(text: str) -> list[str]:
    """Rows that do not belong to a table: a table starts after a blank line with a header and
    a `| --- |` row; anything else starting with `|` is loose text on the page."""
    lines = [line.strip() for line in text.splitlines()]
    problems = []
    for index, line in enumerate(lines):
        if not line.startswith("|") or (index and lines[index - 1].startswith("|")):
            continue
        opens = index + 1 < len(lines) and re.match(r"^\|\s*-{3}", lines[index + 1])
        if (index and lines[index - 1]) or not opens:
            problems.append(f"line {index + 1}: {line[:50]}")
    return problems


def test_tables_are_not_broken_by_a_paragraph() -> None:
    for page in PAGES:
        assert table_problems(page.read_text(encoding="utf-8")) == [], page.name


def test_the_check_sees_the_old_broken_table() -> None:
    broken = (
        "| a | b |\n| --- | --- |\n| `x` | 1 |\n\nBackups per task: see providers.\n| `y` | 2 |\n"
    )
    assert table_problems(broken) == ["line 6: | `y` | 2 |"]


def test_the_readme_is_chinese_and_links_the_upgrade_steps() -> None:
    text = PAGES[0].read_text(encoding="utf-8")
    assert "快速开始" in text and "docs/operations.md#upgrades" in text
    assert "docs/plugins.md" in text and "README.en.md" in text
    assert "## Upgrades" in (REPO / "docs" / "operations.md").read_text(encoding="utf-8")
