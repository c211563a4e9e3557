from __future__ import annotations

import pytest

from pallas.features.learning.injection_feedback import (
    FeedbackSignal,
    InjectedSource,
    blocked_phrases,
    blocked_tokens,
    detect_negative_feedback,
    record_feedback,
    should_recall_bot_message,
    source_penalties,
    undo_feedback,
)
from pallas.features.learning.semantic_style import resolve_group_expression

from .factory import BOT, GROUP, OTHER_GROUP, T0, msg, pair

DAY = 86_400.0
ADMIN, MEMBER, SUPERUSER = 1, 2, 3
BOT_LINE = msg(50, BOT, "确实可以，冲就完了", 0, is_bot=True)
HUMAN_LINE = msg(51, MEMBER, "冲就完了", 1)

SNAPSHOT = [
    InjectedSource("ambient", "ambient:turn-9", "冲就完了"),
    InjectedSource("expression", f"pair:{BOT}:{GROUP}:3:4", "确实可以"),
    ("semantic", f"strategy:{BOT}:{GROUP}:observed:abc", "简短肯定"),
    ("memory", "memory:17"),
    ("persona", "persona:base"),
]


def reply(text, *, user=ADMIN, role="admin", to=50, group=GROUP, t=10.0):
    return msg(900, user, text, t, reply_to=to, role=role, group_id=group)


@pytest.mark.parametrize(
    ("name", "message", "quoted", "reason"),
    [
        ("admin says the word", reply("不可以"), BOT_LINE, "negative_feedback"),
        ("with punctuation", reply("不可以！！"), BOT_LINE, "negative_feedback"),
        ("with a nickname", reply("牛牛不可以"), BOT_LINE, "negative_feedback"),
        ("owner counts", reply("不可以", role="owner"), BOT_LINE, "negative_feedback"),
        (
            "superuser",
            reply("不可以", user=SUPERUSER, role="member"),
            BOT_LINE,
            "negative_feedback",
        ),
        ("member", reply("不可以", user=MEMBER, role="member"), BOT_LINE, "not_admin"),
        ("question", reply("为什么不可以？"), BOT_LINE, "no_negative_word"),
        ("other words", reply("可以的"), BOT_LINE, "no_negative_word"),
        ("long sentence", reply("我觉得这件事情不可以"), BOT_LINE, "no_negative_word"),
        ("quotes a human", reply("不可以", to=51), HUMAN_LINE, "quoted_not_bot"),
        ("not a reply", msg(900, ADMIN, "不可以", 10, role="admin"), None, "not_a_reply"),
        ("unknown quote", reply("不可以", to=77), None, "quoted_message_unknown"),
        (
            "another group",
            reply("不可以", group=OTHER_GROUP),
            BOT_LINE,
            "other_bot_or_group",
        ),
    ],
)
def test_detection(name, message, quoted, reason):
    detection = detect_negative_feedback(message, quoted, bot_id=BOT, admin_ids={SUPERUSER})
    assert detection.reason == reason, name
    assert (detection.signal is not None) == (reason == "negative_feedback")


def test_negative_words_are_configurable():
    detection = detect_negative_feedback(
        reply("不行"), BOT_LINE, bot_id=BOT, negative_words=("不行", "不准")
    )
    assert detection.signal is not None and detection.signal.word == "不行"
    assert (
        detect_negative_feedback(
            reply("不可以"), BOT_LINE, bot_id=BOT, negative_words=("不行",)
        ).signal
        is None
    )


def signal(admin=ADMIN, message_id=50, t=0.0):
    return FeedbackSignal(BOT, GROUP, message_id, admin, "不可以", T0 + t, "确实可以，冲就完了")


def test_blame_follows_the_snapshot_with_spec_weights():
    record = record_feedback(signal(), SNAPSHOT)
    assert record.created and record.reason == "recorded"
    penalties = source_penalties([record.outcome], now=T0)
    assert penalties == {
        ("ambient", "ambient:turn-9"): 1.0,
        ("expression", f"pair:{BOT}:{GROUP}:3:4"): 3.0,
        ("semantic", f"strategy:{BOT}:{GROUP}:observed:abc"): 2.0,
        ("memory", "memory:17"): 1.0,
        ("bot_line", "50"): 1.0,
    }
    assert record.outcome.ignored_sources == ("persona",)
    assert record.outcome.penalty(T0) == pytest.approx(8.0)


@pytest.mark.parametrize(("days", "factor"), [(0, 1.0), (30, 0.5), (60, 0.25), (90, 0.125)])
def test_penalty_halves_every_thirty_days(days, factor):
    outcome = record_feedback(signal(), SNAPSHOT).outcome
    assert outcome.penalty(T0 + days * DAY) == pytest.approx(8.0 * factor)


def test_blocked_phrases_expire_by_weight():
    outcome = record_feedback(signal(), SNAPSHOT).outcome
    assert blocked_phrases([outcome], now=T0 + DAY) >= {"确实可以", "冲就完了", "简短肯定"}
    # day 31: weight-1 sources fell under 0.5, the expression pair (weight 3) is still blocked
    later = blocked_phrases([outcome], now=T0 + 31 * DAY)
    assert "确实可以" in later and "简短肯定" in later
    assert "冲就完了" not in later
    gone = blocked_phrases([outcome], now=T0 + 80 * DAY)
    assert "确实可以" not in gone
    assert f"pair:{BOT}:{GROUP}:3:4" in blocked_tokens([outcome], now=T0 + 31 * DAY)


def test_repeated_rejections_add_up():
    first = record_feedback(signal(ADMIN), SNAPSHOT).outcome
    second = record_feedback(signal(SUPERUSER), SNAPSHOT, existing=[first]).outcome
    at_day_31 = T0 + 31 * DAY
    assert "冲就完了" not in blocked_phrases([first], now=at_day_31)
    assert "冲就完了" in blocked_phrases([first, second], now=at_day_31)


def test_recording_is_idempotent_per_admin_and_bot_message():
    first = record_feedback(signal(), SNAPSHOT)
    again = record_feedback(signal(t=5), SNAPSHOT, existing=[first.outcome])
    assert (again.created, again.reason) == (False, "duplicate")
    assert again.outcome == first.outcome
    other_admin = record_feedback(signal(SUPERUSER), SNAPSHOT, existing=[first.outcome])
    other_line = record_feedback(signal(message_id=51), SNAPSHOT, existing=[first.outcome])
    assert other_admin.created and other_line.created
    assert len({first.outcome.key, other_admin.outcome.key, other_line.outcome.key}) == 3


def test_undo_lifts_the_block_and_can_be_reactivated():
    outcome = record_feedback(signal(), SNAPSHOT).outcome
    undone = undo_feedback([outcome], outcome.key, now=T0 + DAY)
    assert undone.reason == "undone" and undone.outcome is not None
    assert undone.outcome.penalty(T0 + DAY) == 0.0
    assert blocked_phrases([undone.outcome], now=T0 + DAY) == frozenset()
    assert undo_feedback([undone.outcome], outcome.key, now=T0 + DAY).reason == "already_undone"
    assert undo_feedback([], outcome.key, now=T0).reason == "not_found"
    again = record_feedback(signal(t=2 * DAY), SNAPSHOT, existing=[undone.outcome])
    assert (again.created, again.reason) == (True, "reactivated")
    assert again.outcome.active


def test_feedback_changes_what_the_next_turn_injects():
    pool = [
        pair("快了", "确实可以", trigger_id=3, response_id=4),
        pair("快了吗", "还没呢", trigger_id=7, response_id=8),
    ]
    before = resolve_group_expression("快了", pool, bot_id=BOT, group_id=GROUP)
    assert [e.pair.response_text for e in before.matched_examples] == ["确实可以", "还没呢"]
    snapshot = [("expression", token) for token in before.source_tokens]
    outcome = record_feedback(signal(), snapshot).outcome
    after = resolve_group_expression(
        "快了",
        pool,
        bot_id=BOT,
        group_id=GROUP,
        blocked_tokens=blocked_tokens([outcome], now=T0 + DAY),
        blocked_phrases=blocked_phrases([outcome], now=T0 + DAY),
    )
    assert after.matched_examples == ()


@pytest.mark.parametrize(
    ("role", "age", "expected"),
    [("member", 60, True), ("member", 121, False), ("admin", 3600, True), ("owner", 1e6, True)],
)
def test_recall_permission(role, age, expected):
    assert should_recall_bot_message(bot_role=role, message_age_seconds=age) is expected
