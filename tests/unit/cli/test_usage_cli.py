"""`pallas usage`: ledger days rendered against each group's budget."""

from __future__ import annotations

from pathlib import Path

from pallas.cli.usage_cli import days_back, render
from pallas.config import GroupConfig
from pallas.core.config_files import GroupConfigStore
from pallas.core.db.repositories.usage import DailyUsage, UsageTotals
from pallas.features.cost.ladder import Limits

T0 = 1_760_000_000.0  # 2025-10-09 in China


def store(tmp_path: Path) -> GroupConfigStore[GroupConfig]:
    groups = tmp_path / "groups"
    groups.mkdir()
    (groups / "11.toml").write_text("[cost.budget]\nchat_calls = 10\n", encoding="utf-8")
    return GroupConfigStore(GroupConfig, groups)


def test_days_back_are_china_days_newest_first() -> None:
    assert days_back(T0, 3) == ["2025-10-09", "2025-10-08", "2025-10-07"]
    assert days_back(T0, 0) == ["2025-10-09"]


def test_render_shows_each_group_against_its_budget_and_the_cap(tmp_path: Path) -> None:
    rows = [
        DailyUsage("2025-10-09", 1, 11, "chat", UsageTotals(10, 0, 900, 100)),
        DailyUsage("2025-10-09", 1, 11, "cheap", UsageTotals(2, 0, 50, 5)),
        DailyUsage("2025-10-09", 1, 12, "chat", UsageTotals(480, 0, 1000, 0)),
    ]
    lines = render(rows, ["2025-10-09", "2025-10-08"], store(tmp_path), Limits(1000, 0))
    text = "\n".join(lines)
    assert "group 11 (bot 1):" in text
    assert "replies 10/10 次" in text and "已达上限" in text
    assert "background: cheap 2 calls / 55 tokens" in text
    assert "replies 480/600 次" in text and "预警" in text  # 80 % of the default budget
    assert "deployment 490/1000 次" in text
    assert lines[-2:] == ["2025-10-08:", "  no LLM calls"]
