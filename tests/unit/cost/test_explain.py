"""`/pallas why` and the console say which rule limited a turn, in plain Chinese."""

from __future__ import annotations

import pytest

from pallas.features.cost import cost_reason_zh


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("member_rate_limited", "刷屏限流：连续@太快或重复同一句，令牌用完"),
        ("member_rate_limited:notified", "刷屏限流：连续@太快或重复同一句，令牌用完（已提醒一次）"),
        ("member_daily_ceiling:notified",
         "今日对话次数已满：该成员今天和机器人聊的轮数到了上限（已提醒一次）"),
        ("group_budget:phrase", "本群今日预算已用完，只回短句"),
        ("deployment_budget:addressed_only", "全部群今日总预算将满，只回@"),
        ("group_budget:drop_ambient+shorten_context",
         "本群今日预算将满，不再主动插话；将满，缩短上下文"),
        ("vision_budget:text_only", "本群今日识图预算已用完，不看图"),
        ("budget_warning", "今日预算接近上限（已告警）"),
        ("score_below_threshold", None),  # not a cost reason: the caller shows the raw one
        ("weird_budget:phrase", None),
    ],
)  # fmt: skip
def test_reasons_read_in_chinese(reason: str, expected: str | None) -> None:
    assert cost_reason_zh(reason) == expected
