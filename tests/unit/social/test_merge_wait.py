"""The merge window is waited only when an addressed message looks unfinished."""

from __future__ import annotations

import pytest

from pallas.routing.merge_wait import MergeWaitConfig, needs_merge_wait

SMART = MergeWaitConfig()


@pytest.mark.parametrize(
    ("text", "has_picture", "waits", "reason"),
    [
        ("明天天气怎么样", False, False, "complete"),
        ("帮我算一下 3*7", False, False, "complete"),
        ("你觉得新干员强吗？", False, False, "complete"),
        ("早", False, False, "complete"),
        ("", False, True, "bare_address"),
        ("  ", False, True, "bare_address"),
        ("", True, False, "complete"),  # "@牛牛 [picture]": the picture is the message
        ("我想问，", False, True, "trailing_comma"),
        ("有个事情：", False, True, "trailing_comma"),
        ("我在想…", False, True, "ellipsis"),
        ("那个...", False, True, "ellipsis"),
        ("昨天我去了超市然后", False, True, "connective"),
        ("还有", False, True, "connective"),
        ("而且", False, True, "connective"),
        ("我想问", False, True, "connective"),
        ("这是啥", False, True, "awaits_picture"),
        ("这个是什么", False, True, "awaits_picture"),
        ("看看这个", False, True, "awaits_picture"),
        ("帮我看看这张图吧", False, True, "awaits_picture"),
        ("看看明天天气", False, False, "complete"),
        ("这周末去哪玩", False, False, "complete"),
        ("这是啥", True, False, "complete"),
        ("这是什么道理，你给我讲讲清楚", False, False, "complete"),
    ],
)
def test_text_decides_the_wait(text: str, has_picture: bool, waits: bool, reason: str) -> None:
    decision = needs_merge_wait(text, window_s=1.2, config=SMART, has_picture=has_picture)
    assert (decision.waits, decision.reason) == (waits, reason)
    assert decision.wait_s == (1.2 if waits else 0.0)


@pytest.mark.parametrize(
    ("times", "waits", "reason"),
    [
        ((100.0,), False, "complete"),  # only this line
        ((97.5, 100.0), True, "burst"),  # a line 2.5 s before
        ((90.0, 100.0), False, "complete"),  # the earlier line is too old
        ((93.0, 99.0, 100.0), True, "burst"),
        ((), False, "complete"),
    ],
)
def test_a_member_typing_in_bursts_gets_the_window(
    times: tuple[float, ...], waits: bool, reason: str
) -> None:
    decision = needs_merge_wait(
        "明天天气怎么样", window_s=1.2, config=SMART, recent_line_times=times, now=100.0
    )
    assert (decision.waits, decision.reason) == (waits, reason)


def test_burst_threshold_is_configurable() -> None:
    config = MergeWaitConfig(burst_min_lines=3)
    times = (98.0, 100.0)
    decision = needs_merge_wait(
        "好的呀谢谢", window_s=1.2, config=config, recent_line_times=times, now=100.0
    )
    assert decision.reason == "complete"


@pytest.mark.parametrize(
    ("window", "mode", "waits", "reason"),
    [
        (0.0, "smart", False, "window_off"),
        (0.0, "always", False, "window_off"),
        (1.2, "always", True, "always"),
    ],
)
def test_window_and_mode(window: float, mode: str, waits: bool, reason: str) -> None:
    decision = needs_merge_wait(
        "明天天气怎么样", window_s=window, config=MergeWaitConfig(mode=mode)
    )
    assert (decision.waits, decision.reason) == (waits, reason)
