"""The status page's and the error list's pure parts: durations, accounts, endpoints, today's
totals, failure reasons in Chinese."""

from __future__ import annotations

import pytest

from pallas.core.accounts import Accounts
from pallas.providers.breaker import BreakerState
from pallas.providers.client import EndpointStatus
from pallas.providers.models import ModelProfile
from pallas.web.pages import failure_reason_zh
from pallas.web.queries import MessageCounts, UsageRow
from pallas.web.status import account_views, duration_zh, endpoint_view, today_totals

NOW = 1_764_560_000.0


@pytest.mark.parametrize(
    ("seconds", "said"),
    [
        (0, "0 秒"),
        (59.9, "59 秒"),
        (60, "1 分钟"),
        (3_599, "59 分钟"),
        (3_600, "1 小时"),
        (3_600 + 5 * 60, "1 小时 5 分钟"),
        (86_400, "1 天"),
        (3 * 86_400 + 4 * 3_600 + 59, "3 天 4 小时"),
        (-5, "0 秒"),  # a clock that stepped back
    ],
)
def test_durations_read_as_the_two_largest_units(seconds: float, said: str) -> None:
    assert duration_zh(seconds) == said


def test_accounts_are_listed_connected_first_with_what_the_implementation_told() -> None:
    now = [NOW]
    accounts = Accounts(lambda: now[0])
    accounts.connected(111)
    now[0] += 60
    accounts.connected(222)
    accounts.identified(222, nickname="帕拉斯", app_name="NapCat.Onebot", app_version="4.8.0",
                        protocol_version="v11")  # fmt: skip
    accounts.identified(111, nickname=None, app_name=None)  # it answered nothing
    now[0] += 60
    accounts.disconnected(111)
    accounts.identified(333, nickname="never connected")  # ignored
    views = account_views(accounts.listed(), now[0] + 3_600)
    assert [(v.self_id, v.state, v.nickname, v.implementation, v.protocol) for v in views] == [
        (222, "在线", "帕拉斯", "NapCat.Onebot 4.8.0", "v11"),
        (111, "已断开", "（未知）", "（未告知）", "-"),
    ]
    assert views[0].for_how_long == "已在线 1 小时 1 分钟"
    assert views[1].for_how_long == "已断开 1 小时"


def _status(state: BreakerState, *, label: str = "正常") -> EndpointStatus:
    return EndpointStatus("chat", "primary", "gpt-4o-mini", label, state)


@pytest.mark.parametrize(
    ("state", "answers", "healthy", "error_zh"),
    [
        (BreakerState(), "还没有调用记录", True, ""),
        (BreakerState(last_success_at=NOW), "能应答", True, ""),
        (
            BreakerState(failures=1, last_error="server_error", last_failure_at=NOW,
                         last_success_at=NOW - 60),
            "最近一次调用失败", False, "模型服务出错（5xx）",
        ),
        (
            BreakerState(last_error="timeout", last_failure_at=NOW - 60, last_success_at=NOW),
            "能应答", True, "模型超时：规定时间内没有回答",
        ),
        (
            BreakerState(failures=3, open_until=NOW + 30, last_error="connection_error",
                         last_failure_at=NOW),
            "不应答（熔断中）", False, "连不上模型服务：网络断了或地址不对",
        ),
    ],
)  # fmt: skip
def test_an_endpoint_answers_when_its_last_call_succeeded(
    state: BreakerState, answers: str, healthy: bool, error_zh: str
) -> None:
    view = endpoint_view(_status(state))
    assert (view.answers, view.healthy, view.last_error_zh) == (answers, healthy, error_zh)


def test_today_counts_members_messages_calls_cost_and_failures() -> None:
    counts = {(1, 10): MessageCounts(12, 4), (1, 20): MessageCounts(3, 0)}
    usage = [
        UsageRow("", 0, 10, "chat", "priced", 3, 1_000_000, 500_000),
        UsageRow("", 0, 20, "cheap", "free", 2, 400, 100),
    ]
    profiles = {10: {"priced": ModelProfile(input_price=1.0, output_price=2.0)}, 20: {}}
    today = today_totals(counts, usage, failed_calls=1, failed_turns={(1, 10): 2},
                         profiles_of=lambda gid: profiles[gid])  # fmt: skip
    assert (today.messages, today.replies, today.groups) == (11, 4, 2)
    assert (today.calls, today.failed_calls, today.tokens) == (5, 1, 1_500_500)
    assert today.cost == 2.0  # 1 M input at 1.0 + 0.5 M output at 2.0; the free model unpriced
    assert today.failed_turns == 2
    nothing = today_totals({}, [], failed_calls=0, failed_turns={}, profiles_of=lambda g: {})
    assert nothing.cost is None and nothing.messages == 0


@pytest.mark.parametrize(
    ("stage", "reason", "said"),
    [
        ("llm", "server_error", "模型服务出错（5xx）"),
        ("llm", "rate_limited", "模型服务限流（429）：请求太频繁或额度用完"),
        ("llm", "something_new", "模型调用失败"),
        ("prepare", "core_processor:persona", "准备上下文时核心步骤 persona 出错（见日志）"),
        ("turn", "exception", "处理这条消息时程序出错（见日志）"),
        ("other", "odd", "回复失败"),
    ],
)
def test_failure_reasons_read_in_chinese(stage: str, reason: str, said: str) -> None:
    assert failure_reason_zh(stage, reason) == said
