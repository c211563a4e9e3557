from __future__ import annotations

import pytest

from pallas.features.learning.reply_shape import (
    GroupReplyProfile,
    Rhythm,
    ShapeOptions,
    build_reply_profile,
    decide_reply_shape,
    percentile,
    render_reply_shape_block,
)

from .factory import BOT, GROUP, OTHER_GROUP, msg

ALICE, BOB, CAROL = 1, 2, 3


def profile_of(messages, **kwargs):
    return build_reply_profile(messages, bot_id=BOT, group_id=GROUP, **kwargs)


def make_profile(**fields):
    base = dict(
        bot_id=BOT,
        group_id=GROUP,
        sample_turns=200,
        sample_bubbles=260,
        bubbles_p50=1.0,
        bubbles_p90=2.0,
        chars_p50=7.0,
        chars_p90=14.0,
        single_bubble_share=0.8,
    )
    base.update(fields)
    return GroupReplyProfile(**base)


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [([], 50, 0.0), ([5], 90, 5.0), ([1, 2, 3, 4], 50, 2.5), ([1, 1, 1, 1, 1, 3], 90, 2.0)],
)
def test_percentile(values, q, expected):
    assert percentile(values, q) == pytest.approx(expected)


def test_profile_counts_bubbles_per_turn():
    rows = [
        msg(1, ALICE, "在吗", 0),  # turn 1: 1 bubble
        msg(2, BOB, "在", 5),  # turn 2: 3 bubbles
        msg(3, BOB, "怎么了", 8),
        msg(4, BOB, "说嘛说嘛", 12),
        msg(5, ALICE, "没事了", 20),  # turn 3: 1 bubble
        msg(6, ALICE, "就是想问问你吃了没", 200),  # turn 4: gap > 20 s starts a new turn
    ]
    profile = profile_of(rows)
    assert profile.sample_turns == 4
    assert profile.sample_bubbles == 6
    assert profile.single_bubble_share == pytest.approx(0.75)
    assert profile.bubbles_p50 == 1.0
    assert profile.bubbles_p90 == pytest.approx(2.4)
    assert profile.chars_p50 == pytest.approx(3.0)  # lengths 1,2,3,3,4,9 → median 3


def test_bot_lines_break_turns_and_are_not_counted():
    rows = [
        msg(1, ALICE, "在吗", 0),
        msg(2, BOT, "在的呢我一直都在这里", 2, is_bot=True),
        msg(3, ALICE, "好", 4),
        msg(4, CAROL, "x", 5, group_id=OTHER_GROUP),
    ]
    profile = profile_of(rows)
    assert profile.sample_turns == 2 and profile.sample_bubbles == 2
    assert profile.single_bubble_share == 1.0
    assert profile.chars_p90 <= 2


def test_placeholders_and_commands_are_not_bubbles():
    rows = [msg(1, ALICE, "[图片]", 0), msg(2, ALICE, "/签到", 1), msg(3, ALICE, "早", 2)]
    assert profile_of(rows).sample_bubbles == 1


@pytest.mark.parametrize(
    ("casual", "tool", "expected"),
    [
        (True, False, (3, 1, 4, 18)),
        (False, False, (2, 1, 8, 80)),
        (False, True, (2, 1, 8, 160)),
        (True, True, (2, 1, 8, 160)),
    ],
)
def test_defaults_before_enough_samples(casual, tool, expected):
    few = make_profile(sample_turns=29, bubbles_p90=3.0, chars_p90=4.0)
    for profile in (None, few):
        policy = decide_reply_shape(profile, casual=casual, tool=tool)
        assert (
            policy.max_segments,
            policy.recommended_segments,
            policy.min_chars,
            policy.max_chars,
        ) == expected
        assert policy.learned is False
        assert "defaults" in policy.reason


def test_min_samples_is_configurable():
    profile = make_profile(sample_turns=10, bubbles_p90=1.0)
    assert decide_reply_shape(profile, casual=True).learned is False
    policy = decide_reply_shape(profile, casual=True, options=ShapeOptions(min_samples=10))
    assert policy.learned is True and policy.max_segments == 1


def test_quiet_single_bubble_group_gets_a_tighter_casual_shape():
    profile = make_profile(
        bubbles_p50=1.0, bubbles_p90=1.0, chars_p50=6.0, chars_p90=11.0, single_bubble_share=0.9
    )
    policy = decide_reply_shape(profile, casual=True)
    assert policy.learned
    assert (policy.max_segments, policy.recommended_segments) == (1, 1)
    assert policy.rhythm is Rhythm.SINGLE
    assert (policy.min_chars, policy.max_chars) == (3, 11)


def test_bursty_group_gets_more_shorter_bubbles():
    profile = make_profile(
        bubbles_p50=2.0, bubbles_p90=4.0, chars_p50=5.0, chars_p90=9.0, single_bubble_share=0.3
    )
    policy = decide_reply_shape(profile, casual=True)
    assert policy.rhythm is Rhythm.BURST
    assert policy.max_segments == 3  # p90 of 4 clamped to the hard maximum
    assert policy.recommended_segments == 2
    assert policy.max_chars == 9


@pytest.mark.parametrize(
    ("casual", "chars_p90", "expected_max_chars"),
    [(True, 500.0, 30), (True, 2.0, 8), (False, 500.0, 120), (False, 3.0, 40), (False, 20.0, 60)],
)
def test_learned_lengths_stay_within_clamps(casual, chars_p90, expected_max_chars):
    profile = make_profile(chars_p50=chars_p90 / 2, chars_p90=chars_p90)
    assert decide_reply_shape(profile, casual=casual).max_chars == expected_max_chars


def test_tool_turns_keep_their_length_budget_even_when_learned():
    profile = make_profile(chars_p90=6.0, bubbles_p90=3.0, single_bubble_share=0.3)
    policy = decide_reply_shape(profile, casual=False, tool=True)
    assert (policy.min_chars, policy.max_chars) == (8, 160)
    assert policy.max_segments == 2


def test_contract_block():
    profile = make_profile(bubbles_p90=2.0, single_bubble_share=0.8)
    block = render_reply_shape_block(decide_reply_shape(profile, casual=False))
    lines = block.splitlines()
    assert lines[0] == "【回复形状与输出契约】"
    assert lines[1] == "- 最多 2 段；推荐 1 段，节奏偏 single。"
    assert lines[2] == "- 每段约 8–42 字。"
    assert any("一段一行" in line for line in lines)
    assert any("PASS" in line and "单独" in line for line in lines)
