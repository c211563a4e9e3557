"""The merge window is waited only when an addressed message looks unfinished, or the member
is mid-way through lines of their own — never because the group is busy."""

from __future__ import annotations

import pytest

from pallas.routing.merge_wait import MergeWaitConfig, OwnLine, needs_merge_wait

SMART = MergeWaitConfig()


@pytest.mark.parametrize(
    ("text", "has_picture", "waits", "reason"),
    [
        ("明天天气怎么样", False, False, "complete_question"),
        ("帮我算一下 3*7", False, False, "complete_question"),
        ("你觉得新干员强吗？", False, False, "complete_question"),
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
        ("这周末去哪玩", False, False, "complete_question"),
        ("这是啥", True, False, "complete"),
        ("这是什么道理，你给我讲讲清楚", False, False, "complete_question"),
    ],
)
def test_text_decides_the_wait(text: str, has_picture: bool, waits: bool, reason: str) -> None:
    decision = needs_merge_wait(text, window_s=1.2, config=SMART, has_picture=has_picture)
    assert (decision.waits, decision.reason) == (waits, reason)
    assert decision.wait_s == (1.2 if waits else 0.0)


def _lines(*lines: tuple[float, bool]) -> tuple[OwnLine, ...]:
    return tuple(OwnLine(at, finished) for at, finished in lines)


@pytest.mark.parametrize(
    ("text", "lines", "waits", "reason"),
    [
        # a complete question is never held, however fast the member was typing
        ("明天天气怎么样", ((97.5, True), (100.0, True)), False, "complete_question"),
        ("你知道番茄炒蛋怎么做才好吃吗", ((98.0, True), (99.0, True), (100.0, True)), False,
         "complete_question"),
        ("明天天气怎么样", ((97.5, False), (100.0, True)), False, "complete_question"),
        # a statement after the member's own unfinished line: more may be coming
        ("我昨天去了趟医院", ((97.5, False), (100.0, True)), True, "burst"),
        ("我昨天去了趟医院", ((96.5, False), (99.0, True), (100.0, True)), True, "burst"),
        # busy but every line of theirs was finished: no wait
        ("我昨天去了趟医院", ((97.5, True), (100.0, True)), False, "complete"),
        ("我昨天去了趟医院", ((90.0, False), (100.0, True)), False, "complete"),  # too old
        ("我昨天去了趟医院", ((100.0, True),), False, "complete"),
        ("我昨天去了趟医院", (), False, "complete"),
    ],
)  # fmt: skip
def test_only_the_members_own_unfinished_lines_make_a_burst(
    text: str, lines: tuple[tuple[float, bool], ...], waits: bool, reason: str
) -> None:
    decision = needs_merge_wait(
        text, window_s=1.2, config=SMART, recent_lines=_lines(*lines), now=100.0
    )
    assert (decision.waits, decision.reason) == (waits, reason)


def test_burst_threshold_is_configurable() -> None:
    config = MergeWaitConfig(burst_min_lines=3)
    lines = _lines((98.0, False), (100.0, True))
    decision = needs_merge_wait(
        "好的我知道了", window_s=1.2, config=config, recent_lines=lines, now=100.0
    )
    assert decision.reason == "complete"
    lines = _lines((97.0, True), (98.0, False), (100.0, True))
    decision = needs_merge_wait(
        "好的我知道了", window_s=1.2, config=config, recent_lines=lines, now=100.0
    )
    assert decision.reason == "burst"


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
