"""Console view models: the analyzer's token bar, request redaction, usage series and cost."""

from __future__ import annotations

import base64
import hashlib

import pytest

from pallas.providers.models import ModelProfile
from pallas.web.config_edit import Origin
from pallas.web.queries import UsageRow, day_start
from pallas.web.views import (
    cache_layout_view,
    cost_of,
    redact_config,
    redact_request,
    token_bar,
    usage_series,
)


def test_token_bar_covers_sections_then_messages() -> None:
    data = {
        "sections": [{"id": "guard", "tokens": 30}, {"id": "persona", "tokens": 10}],
        "messages": [{"role": "user", "kind": "current", "tokens": 60}],
    }
    bar = token_bar(data)
    assert [p.label for p in bar] == ["注入护栏", "人设", "#0 user 本条消息"]
    assert [p.key for p in bar] == ["guard", "persona", "user:current"]
    assert [p.percent for p in bar] == [30.0, 10.0, 60.0]
    assert [p.kind for p in bar] == ["section", "section", "message"]
    assert token_bar({}) == []


def test_request_images_become_hashes_and_secrets_are_hidden() -> None:
    raw = b"\x89PNG fake image bytes"
    url = "data:image/png;base64," + base64.b64encode(raw).decode()
    request = [
        {"role": "system", "content": "hi", "api_key": "sk-live"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "看图"},
                {"type": "image_url", "image_url": {"url": url}},
                {"type": "image_url", "image_url": {"url": "https://example.invalid/a.png"}},
            ],
        },
    ]
    out = redact_request(request)
    shown = out[1]["content"][1]["image_url"]["url"]
    assert shown == f"<image/png {len(raw)} bytes sha256:{hashlib.sha256(raw).hexdigest()[:16]}>"
    assert out[1]["content"][2]["image_url"]["url"] == "https://example.invalid/a.png"
    assert out[0]["api_key"] == "***" and out[1]["content"][0]["text"] == "看图"


def test_config_rows_hide_secret_looking_values() -> None:
    rows = redact_config(
        [Origin("tools.api_key", "abc", "g.toml"), Origin("context.token_budget", 900, "b")]
    )
    assert [r.value for r in rows] == ["***", 900]


def row(day: str, task: str, model: str, prompt: int, completion: int) -> UsageRow:
    return UsageRow(day, 1, 10, task, model, 1, prompt, completion)


def test_cost_needs_a_price_and_uses_the_model_profile() -> None:
    profiles = {
        "default": ModelProfile(),
        "gpt-4o": ModelProfile(input_price=2.5, output_price=10.0),
    }
    assert cost_of(row("d", "chat", "gpt-4o-mini", 1_000_000, 0), profiles) == 2.5  # prefix
    assert cost_of(row("d", "chat", "other", 1_000_000, 0), profiles) is None
    assert cost_of(row("d", "chat", "gpt-4o", 200_000, 100_000), profiles) == pytest.approx(1.5)


def test_usage_series_stacks_tasks_per_day() -> None:
    days = ["2026-11-29", "2026-11-30", "2026-12-01"]
    rows = [
        row("2026-11-30", "chat", "m", 100, 20),
        row("2026-12-01", "chat", "m", 10, 0),
        row("2026-12-01", "cheap", "m", 500, 0),
    ]
    priced = {"default": ModelProfile(input_price=1.0, output_price=2.0)}
    series = usage_series(rows, rows, days, lambda gid: {"default": ModelProfile()})
    assert series.series[0][0] == "chat" and series.series[0][2] == [0, 120, 10]
    assert series.series[1][0] == "cheap" and series.series[1][2] == [0, 0, 500]
    assert series.max_tokens == 510 and series.total_cost is None
    assert [r["tokens"] for r in series.rows] == [500, 10, 120]  # newest day, biggest first
    priced_series = usage_series(rows, rows, days, lambda gid: priced)
    assert priced_series.total_cost == pytest.approx((610 * 1.0 + 20 * 2.0) / 1_000_000, abs=1e-4)


@pytest.mark.parametrize(
    ("now", "start"),
    [
        (1_764_518_400.0, 1_764_518_400.0),  # 2025-12-01 00:00 Beijing = 11-30 16:00 UTC
        (1_764_518_399.0, 1_764_432_000.0),  # one second earlier: the previous day
        (1_764_560_000.0, 1_764_518_400.0),
    ],
)
def test_day_start_is_beijing_midnight(now: float, start: float) -> None:
    assert day_start(now) == start


def test_cache_layout_view_says_where_the_cacheable_prefix_ends() -> None:
    data = {
        "processor_traces": {
            "formatter": {
                "layout": "cache",
                "stable_sections": ["guard", "persona", "group_timeline"],
                "per_turn_sections": ["memory", "current_time"],
                "prefix_messages": 3,
                "prefix_chars": 600,
            }
        },
        "request": [
            {"role": "system", "content": "x" * 600},
            {"role": "user", "content": "y" * 200},
        ],
    }
    view = cache_layout_view(data)
    assert view is not None and view.share == 0.75 and view.prefix_messages == 3
    assert view.stable == ["注入护栏", "人设", "群聊时间线"]
    assert view.per_turn == ["记忆", "当前时间"]
    assert cache_layout_view({"processor_traces": {"formatter": {"layout": "spec"}}}) is None
    assert cache_layout_view({}) is None
