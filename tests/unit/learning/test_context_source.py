"""The pure half of the group-learning context source: casual rule, blocks, shape, blocklist."""

from __future__ import annotations

from random import Random

import pytest

from pallas.features.learning.config import LearningConfig
from pallas.features.learning.context_source import is_casual_text, learning_contribution
from pallas.features.learning.expression_pool import ExpressionPool
from pallas.features.learning.group_store import FeedbackBlocks, GroupLearningData, feedback_blocks
from pallas.features.learning.injection_feedback import Blame, FeedbackOutcome
from pallas.features.learning.pairs import LearningType
from pallas.features.learning.reply_shape import GroupReplyProfile
from pallas.features.learning.semantic_style import resolve_group_expression
from pallas.features.learning.strategies import BehaviorStrategy
from pallas.web.retrieval_view import source_lines

from .factory import BOT, GROUP, OTHER_GROUP, T0, pair

NO_BLOCKS = FeedbackBlocks((), frozenset())
CONFIG = LearningConfig()


@pytest.mark.parametrize(
    ("text", "short_social", "casual"),
    [
        ("早上好", False, True),  # greeting
        ("谢谢牛牛", False, True),  # thanks
        ("今天好热", False, True),  # short chit-chat
        ("快了吗？", False, False),  # a question
        ("帮我查一下明天的天气", False, False),  # a request
        ("我今天去公园看到好多人在跳广场舞感觉特别热闹你说是不是很有意思", False, False),
        ("这是什么意思", True, True),  # short social turns are always casual
    ],
)
def test_casual_rule(text: str, short_social: bool, casual: bool) -> None:
    assert is_casual_text(text, short_social=short_social) is casual


def profile(turns: int, *, single: float = 0.9, p90_chars: float = 6.0) -> GroupReplyProfile:
    return GroupReplyProfile(BOT, GROUP, turns, turns, 1.0, 1.0, 5.0, p90_chars, single)


def strategy(situation: str, lt: LearningType = LearningType.OBSERVED) -> BehaviorStrategy:
    return BehaviorStrategy(situation, "简短接一句", "气氛不错", lt, 3, 3.0, BOT, GROUP)


def data(**kw) -> GroupLearningData:
    base = {
        "bot_id": BOT,
        "group_id": GROUP,
        "observed_pairs": (
            pair("快了快了", "确实可以", trigger_id=1, response_id=2),
            pair("晚上吃什么", "火锅走起", trigger_id=3, response_id=4),
            pair("快了快了", "别家的", trigger_id=5, response_id=6, group_id=OTHER_GROUP),
        ),
        "strategies": (
            strategy("对方表达进展时"),
            strategy("对方拿我开玩笑时", LearningType.SELF_REFLECTION),
        ),
        "profile": profile(60),
    }
    base.update(kw)
    return GroupLearningData(**base)


def test_direct_pair_recalled_with_tokens_and_reflection_kept() -> None:
    result = learning_contribution(
        data(), text="快了吗", config=CONFIG, short_social=False, blocks=NO_BLOCKS
    )
    expression = result.blocks["group_expression"]
    assert "- 触发「快了快了」时：确实可以" in expression.text
    assert "别家的" not in expression.text  # another group's pair never leaks in
    assert expression.source_tokens == (f"pair:{BOT}:{GROUP}:1:2",)
    behavior = result.blocks["behavior_reference"].text
    assert behavior.startswith("【接话复盘】") and "【真人接话参考】" not in behavior


def test_without_a_direct_pair_both_strategy_blocks_are_joined() -> None:
    result = learning_contribution(
        data(), text="量子力学怎么学？", config=CONFIG, short_social=False, blocks=NO_BLOCKS
    )
    assert "group_expression" not in result.blocks
    block = result.blocks["behavior_reference"]
    assert block.text.index("【真人接话参考】") < block.text.index("【接话复盘】")
    assert len(block.source_tokens) == 2
    assert all(t.startswith("strategy:") for t in block.source_tokens)


def test_shape_is_learned_only_from_a_trusted_profile() -> None:
    learned = learning_contribution(
        data(), text="快了吗？", config=CONFIG, short_social=False, blocks=NO_BLOCKS
    )
    assert learned.reply_shape is not None and learned.reply_shape.learned
    assert (learned.reply_shape.max_segments, learned.reply_shape.max_chars) == (1, 40)
    casual = learning_contribution(
        data(), text="好热", config=CONFIG, short_social=False, blocks=NO_BLOCKS
    )
    assert casual.reply_shape.casual and casual.reply_shape.max_chars == 8
    untrusted = learning_contribution(
        data(profile=profile(5)),
        text="快了吗？",
        config=CONFIG,
        short_social=False,
        blocks=NO_BLOCKS,
    )
    assert untrusted.reply_shape is None  # the orchestrator's defaults stay in force


def test_blocked_tokens_and_phrases_drop_pairs_and_reach_the_blocklist() -> None:
    blocks = FeedbackBlocks(("确实可以呀",), frozenset({f"pair:{BOT}:{GROUP}:3:4"}))
    result = learning_contribution(
        data(), text="快了吗", config=CONFIG, short_social=False, blocks=blocks
    )
    assert "group_expression" not in result.blocks
    assert result.feedback_blocklist == ("确实可以呀",)


def outcome(phrase: str, *, created: float = T0, undone: float | None = None) -> FeedbackOutcome:
    blames = (Blame("bot_line", "9", -1.0, phrase), Blame("expression", "pair:x", -3.0))
    return FeedbackOutcome(BOT, GROUP, 9, 1, created, "不可以", blames, phrase, (), undone)


def test_feedback_blocks_skip_short_phrases_and_undone_outcomes() -> None:
    outcomes = (outcome("好"), outcome("确实可以呀"), outcome("别这样说", undone=T0 + 5))
    blocks = feedback_blocks(
        outcomes, now=T0 + 10, threshold=0.5, half_life_days=30.0, min_phrase_chars=3
    )
    assert blocks.phrases == ("确实可以呀",)
    assert blocks.tokens == frozenset({"9", "pair:x"})


def test_pool_recalls_exactly_what_a_full_scan_recalls() -> None:
    rng = Random(7)
    alphabet = "快了吗今天好热晚上吃什么火锅走起确实可以去爬山吧困死早点睡觉哈冲"
    pairs = tuple(
        pair(
            "".join(rng.choice(alphabet) for _ in range(rng.randint(2, 6))),
            "".join(rng.choice(alphabet) for _ in range(rng.randint(2, 6))),
            trigger_id=2 * i,
            response_id=2 * i + 1,
            t=float(i),
        )
        for i in range(300)
    )
    group = data(observed_pairs=pairs)
    blocks = FeedbackBlocks(("确实可以",), frozenset({f"pair:{BOT}:{GROUP}:10:11"}))
    pool = ExpressionPool.build(group, blocks)
    for text in ("快了吗", "今天吃什么", "困", "xyz", "哈哈哈"):
        full = resolve_group_expression(
            text,
            pairs,
            bot_id=BOT,
            group_id=GROUP,
            blocked_phrases=blocks.phrases,
            blocked_tokens=blocks.tokens,
        )
        fast = resolve_group_expression(
            text, pool.candidates(text, min_similarity=0.2), bot_id=BOT, group_id=GROUP
        )
        assert fast.matched_examples == full.matched_examples, text


def test_pass_pool_takes_the_groups_repeated_short_replies_minus_rejected_ones() -> None:
    from pallas.features.learning.context_source import _active_short_phrases
    from pallas.features.learning.group_store import GroupLearningData

    pairs = (
        pair("快了吗", "确实", trigger_id=1, response_id=2),
        pair("真快", "确实", trigger_id=3, response_id=4),
        pair("下班了", "冲冲冲", trigger_id=5, response_id=6),
        pair("又加班", "冲冲冲", trigger_id=7, response_id=8),
        pair("吃啥", "火锅", trigger_id=9, response_id=10),  # used once: not "active"
        pair("这个呢", "这是一句明显超过十二个字的长回复呢", trigger_id=11, response_id=12),
        pair("那个呢", "这是一句明显超过十二个字的长回复呢", trigger_id=13, response_id=14),
    )
    data = GroupLearningData(BOT, GROUP, observed_pairs=pairs)
    assert _active_short_phrases(data, FeedbackBlocks((), frozenset())) == ("确实", "冲冲冲")
    rejected = FeedbackBlocks(("冲冲冲",), frozenset())
    assert _active_short_phrases(data, rejected) == ("确实",)


def test_the_console_says_in_chinese_what_the_learning_gave() -> None:
    """The 检索来源 card (`web.retrieval_view`) reads the trace's numbers, not its English."""
    learned = learning_contribution(
        data(), text="快了吗", config=CONFIG, short_social=False, blocks=NO_BLOCKS
    )
    assert source_lines(learned.trace) == (
        "群里的说法：参考 1 条（相近的 1 条，表达池 2 条）",
        "接话参考：复盘 1 条",  # the observed habit is left out beside a direct pair
        "回复形状：按本群 60 轮学到，建议 1 个气泡、每个 8–40 字",
    )
    blocks = FeedbackBlocks(("确实可以呀",), frozenset())
    untrusted = learning_contribution(
        data(profile=profile(5)), text="量子力学怎么学？", config=CONFIG, short_social=False,
        blocks=blocks,
    )  # fmt: skip
    assert source_lines(untrusted.trace) == (
        "群里的说法：没有用上（相近的 1 条，表达池 1 条）",  # the blocked pair left the pool
        "接话参考：观察到 1 条、复盘 1 条",
        "回复形状：本群样本还不够，用默认",
        "因差评屏蔽了 1 个短语",
    )
