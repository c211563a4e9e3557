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


def test_render_shows_the_cache_share_and_the_true_cost(tmp_path: Path) -> None:
    """Issue 29: cached prompt tokens are billed at cached_input_price; the line says what
    the same tokens would have cost without the cache."""
    groups = tmp_path / "groups"
    groups.mkdir()
    (groups / "11.toml").write_text(
        '[models."deepseek-chat"]\ninput_price = 2.0\ncached_input_price = 0.5\n'
        "output_price = 8.0\n",
        encoding="utf-8",
    )
    totals = UsageTotals(10, 0, 1_000_000, 100_000, cached_tokens=800_000, reasoning_tokens=0)
    rows = [
        DailyUsage("2025-10-09", 1, 11, "chat", totals, "deepseek-chat"),
        DailyUsage("2025-10-09", 1, 11, "chat", UsageTotals(2, 2, 0, 0), "gpt-4o-mini"),
    ]
    lines = render(rows, ["2025-10-09"], GroupConfigStore(GroupConfig, groups), Limits(0, 0))
    text = "\n".join(lines)
    assert "replies 12/600 次" in text  # both models' calls count against the budget
    assert "prompt cache: 80% of 1000000 prompt tokens cached; reasoning 0 tokens" in text
    assert "cost: 1.6000 (without the cache 2.8000)" in text  # 0.2×2 + 0.8×0.5 + 0.1×8


def test_render_shows_private_chats_as_their_own_kind_against_the_private_budget(
    tmp_path: Path,
) -> None:
    groups = tmp_path / "groups"
    groups.mkdir()
    (groups / "default.toml").write_text("[private.budget]\nchat_calls = 20\n", encoding="utf-8")
    rows = [
        DailyUsage("2025-10-09", 1, 0, "chat", UsageTotals(20, 0, 900, 100)),
        DailyUsage("2025-10-09", 1, 11, "chat", UsageTotals(20, 0, 900, 100)),
    ]
    configs = GroupConfigStore(GroupConfig, groups)
    text = "\n".join(render(rows, ["2025-10-09"], configs, Limits(0, 0)))
    assert "private chats (私聊) (bot 1):" in text
    assert "replies 20/20 次" in text and "已达上限" in text  # the private budget
    assert "replies 20/600 次" in text  # a group: its own budget
