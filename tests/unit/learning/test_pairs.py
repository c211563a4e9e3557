from __future__ import annotations

import pytest

from pallas.features.learning.pairs import LearningType, PairKind, PairOptions, build_reply_pairs

from .factory import BOT, GROUP, OTHER_GROUP, msg

ALICE, BOB, CAROL, OTHER_BOT = 1, 2, 3, 20_000


def build(messages, **kwargs):
    return build_reply_pairs(messages, bot_id=BOT, group_id=GROUP, **kwargs)


def keys(pairs):
    return [(p.trigger_id, p.response_id, p.kind.value) for p in pairs]


@pytest.mark.parametrize(
    ("name", "messages", "expected"),
    [
        (
            "adjacent within gap",
            [msg(1, ALICE, "今天好热", 0), msg(2, BOB, "确实热死了", 30)],
            [(1, 2, "adjacent")],
        ),
        (
            "adjacent exactly at the gap",
            [msg(1, ALICE, "今天好热", 0), msg(2, BOB, "确实热死了", 120)],
            [(1, 2, "adjacent")],
        ),
        (
            "adjacent beyond the gap",
            [msg(1, ALICE, "今天好热", 0), msg(2, BOB, "确实热死了", 121)],
            [],
        ),
        (
            "same speaker twice is no pair",
            [msg(1, ALICE, "今天好热", 0), msg(2, ALICE, "热死了", 5)],
            [],
        ),
        (
            "quote pair across a long time",
            [
                msg(1, ALICE, "周末去爬山吗", 0),
                msg(2, CAROL, "我先溜了", 10),
                msg(3, BOB, "去去去", 3600, reply_to=1),
            ],
            [(1, 2, "adjacent"), (1, 3, "quote")],
        ),
        (
            "quote beats adjacency for the same response",
            [
                msg(1, ALICE, "周末去爬山吗", 0),
                msg(2, CAROL, "晚饭吃啥", 10),
                msg(3, BOB, "去去去", 20, reply_to=1),
            ],
            [(1, 2, "adjacent"), (1, 3, "quote")],
        ),
        (
            "quoting oneself is no pair",
            [msg(1, ALICE, "周末去爬山吗", 0), msg(2, ALICE, "有人吗", 10, reply_to=1)],
            [],
        ),
        (
            "quote of an unknown message is dropped, not paired with the neighbour",
            [msg(1, ALICE, "周末去爬山吗", 0), msg(2, BOB, "去去去", 10, reply_to=999)],
            [],
        ),
    ],
)
def test_quote_and_adjacent_pairs(name, messages, expected):
    assert keys(build(messages).observed) == expected, name


def test_pair_texts_and_speakers_are_carried():
    result = build([msg(1, ALICE, "快了", 0), msg(2, BOB, "确实可以", 3)])
    (only,) = result.observed
    assert (only.trigger_text, only.response_text) == ("快了", "确实可以")
    assert (only.trigger_user, only.response_user) == (ALICE, BOB)
    assert only.learning_type is LearningType.OBSERVED and only.kind is PairKind.ADJACENT
    assert (only.bot_id, only.group_id, only.response_row_id) == (BOT, GROUP, 2)


def test_duplicate_rows_give_one_pair():
    rows = [
        msg(1, ALICE, "快了", 0),
        msg(2, BOB, "确实可以", 3, reply_to=1),
        msg(2, BOB, "确实可以", 3, reply_to=1, row_id=7),
    ]
    result = build(rows)
    assert keys(result.observed) == [(1, 2, "quote")]
    assert len({p.key for p in result.all_pairs}) == len(result.all_pairs)


def test_input_order_does_not_matter():
    rows = [msg(1, ALICE, "快了", 0), msg(2, BOB, "确实可以", 3), msg(3, CAROL, "冲", 6)]
    assert keys(build(list(reversed(rows))).observed) == keys(build(rows).observed)


def test_bot_lines_never_enter_human_pairs():
    rows = [
        msg(1, ALICE, "牛牛在吗", 0),
        msg(2, BOT, "在的在的", 5, is_bot=True),
        msg(3, BOB, "哈哈哈它真在", 9),
        msg(4, ALICE, "你好笨啊", 20),
        msg(5, BOT, "我才不笨", 25),  # user_id == bot id without the flag
        msg(6, OTHER_BOT, "收到指令", 30),
        msg(7, CAROL, "别的牛也来了", 33),
    ]
    result = build(rows, options=PairOptions(other_bot_ids=frozenset({OTHER_BOT})))
    for p in result.observed:
        assert BOT not in (p.trigger_user, p.response_user)
        assert OTHER_BOT not in (p.trigger_user, p.response_user)
    assert keys(result.observed) == [(3, 4, "adjacent")]
    assert [p.key for p in result.self_reflection] == [(2, 3)]
    assert result.skipped_count("response_is_bot") == 3
    assert result.skipped_count("trigger_is_other_bot") == 1


def test_self_reflection_pairs_are_kept_apart_with_context():
    rows = [
        msg(1, ALICE, "牛牛你是不是傻", 0),
        msg(2, BOT, "你才傻，略略略", 5, is_bot=True),
        msg(3, ALICE, "哈哈哈被怼了", 9),
        msg(4, BOB, "笑死", 12, reply_to=2),
    ]
    result = build(rows)
    assert result.observed == ()  # the only human→human neighbour (3→4) is a quote of the bot
    assert [(p.trigger_id, p.response_id) for p in result.self_reflection] == [(2, 3), (2, 4)]
    for p in result.self_reflection:
        assert p.learning_type is LearningType.SELF_REFLECTION
        assert p.trigger_user == BOT
        assert p.context_text == "牛牛你是不是傻"


def test_self_reflection_context_follows_the_bots_quote():
    rows = [
        msg(1, ALICE, "明天考试", 0),
        msg(2, CAROL, "我饿了", 10),
        msg(3, BOT, "加油加油", 15, is_bot=True, reply_to=1),
        msg(4, ALICE, "谢谢牛牛", 20),
    ]
    (reflection,) = build(rows).self_reflection
    assert reflection.context_text == "明天考试"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("[图片]", "empty"),
        ("？？？", "punctuation_only"),
        ("😂😂😂", "punctuation_only"),
        ("/help", "command"),
        ("#签到", "command"),
        ("https://example.com/a?b=1", "url"),
        ("看这个 https://example.com", "url"),
        ("哈" * 81, "too_long"),
        ("你是傻逼吧", "blocked"),
        ("SB 东西", "blocked"),
    ],
)
def test_noise_responses_are_filtered(text, reason):
    result = build([msg(1, ALICE, "今天吃什么", 0), msg(2, BOB, text, 5)])
    assert result.observed == ()
    assert result.skipped_count(f"response_{reason}") == 1


@pytest.mark.parametrize("text", ["usb 接口坏了", "6", "好耶！", "草", "哈" * 80])
def test_ordinary_short_texts_are_kept(text):
    result = build([msg(1, ALICE, "今天吃什么", 0), msg(2, BOB, text, 5)])
    assert len(result.observed) == 1


def test_noise_trigger_is_filtered_too():
    result = build([msg(1, ALICE, "/roll", 0), msg(2, BOB, "出了出了", 5)])
    assert result.observed == ()
    assert result.skipped_count("trigger_command") == 1


def test_other_groups_rows_are_ignored_and_another_accounts_rows_are_the_groups():
    """Each group line is stored by one account of the deployment: a line another account
    stored is the group's and is learned under the collecting account; its own sent line is
    another bot's, never the collector's "self"."""
    rows = [
        msg(1, ALICE, "快了", 0),
        msg(2, BOB, "确实可以", 3, group_id=OTHER_GROUP),
        msg(3, BOB, "确实可以", 4, bot_id=BOT + 1),
        msg(4, BOT + 1, "我也觉得", 5, bot_id=BOT + 1, is_bot=True),
        msg(5, CAROL, "哈哈是吗", 6),
    ]
    result = build(rows)
    assert [(p.trigger_text, p.response_text, p.bot_id) for p in result.observed] == [
        ("快了", "确实可以", BOT)
    ]
    assert result.self_reflection == ()
    assert result.skipped_count("trigger_is_other_bot") == 1
    assert result.scanned == 4


def test_rows_before_the_cursor_are_triggers_only():
    rows = [
        msg(1, ALICE, "快了", 0),
        msg(2, BOB, "确实可以", 3),
        msg(3, CAROL, "冲冲冲", 6, reply_to=1),
        msg(4, ALICE, "好耶", 9),
    ]
    result = build(rows, after_row_id=2)
    assert keys(result.observed) == [(1, 3, "quote"), (3, 4, "adjacent")]
    assert result.last_row_id == 4
