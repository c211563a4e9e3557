from __future__ import annotations

import json

import pytest

from pallas.features.learning.labeling import PairLabel
from pallas.features.learning.pairs import LearningType
from pallas.features.learning.strategies import (
    BehaviorStrategy,
    build_strategy_prompt,
    parse_strategy_response,
    render_behavior_reference_block,
    render_self_reflection_block,
    select_strategies,
    summarize_strategies,
)

from .factory import BOT, GROUP, OTHER_GROUP, T0

DAY = 86_400.0
OBS, SELF = LearningType.OBSERVED, LearningType.SELF_REFLECTION


def label(n, situation, action, *, lt=OBS, outcome="", transferable=True, t=0.0, group=GROUP):
    return PairLabel(
        trigger_id=n,
        response_id=n + 1,
        learning_type=lt,
        situation=situation,
        interaction_action=action,
        intensity=2,
        transferable=transferable,
        outcome=outcome,
        time=T0 + t,
        bot_id=BOT,
        group_id=group,
    )


def strategy(situation, *, lt=OBS, score=1.0, support=1, group=GROUP):
    return BehaviorStrategy(situation, "简短接一句", "", lt, support, score, BOT, group)


def test_summary_groups_by_situation_and_action():
    labels = [
        label(1, "对方表达进展时", "简短肯定", outcome="对方感到被认同"),
        label(3, "对方表达进展时。", "简短肯定", outcome="对方感到被认同"),
        label(5, "对方表达进展时", "简短肯定", outcome="对方继续说"),
        label(7, "对方抱怨时", "安慰一句"),
        label(9, "对方抱怨时", "安慰一句", transferable=False),
        label(11, "对方抱怨时", "安慰一句", group=OTHER_GROUP),
        label(13, "对方拿我开玩笑时", "笑着怼回去", lt=SELF, outcome="气氛不错"),
    ]
    result = summarize_strategies(labels, bot_id=BOT, group_id=GROUP)
    summary = [(s.learning_type, s.situation, s.support_count, s.outcome) for s in result]
    assert summary == [
        (OBS, "对方表达进展时", 3, "对方感到被认同"),
        (OBS, "对方抱怨时", 1, ""),
        (SELF, "对方拿我开玩笑时", 1, "气氛不错"),
    ]


def test_recent_support_outranks_old_support():
    labels = [
        label(1, "旧场景时", "旧接法", t=0),
        label(3, "旧场景时", "旧接法", t=1),
        label(5, "新场景时", "新接法", t=90 * DAY),
    ]
    now = T0 + 90 * DAY
    ranked = summarize_strategies(labels, bot_id=BOT, group_id=GROUP, now=now)
    assert [s.situation for s in ranked] == ["新场景时", "旧场景时"]
    undated = summarize_strategies(labels, bot_id=BOT, group_id=GROUP)
    assert [s.situation for s in undated] == ["旧场景时", "新场景时"]


OBSERVED_POOL = [strategy(f"场景{i}时", score=10 - i) for i in range(5)]
REFLECTION_POOL = [strategy(f"复盘{i}时", lt=SELF, score=10 - i) for i in range(4)]


@pytest.mark.parametrize(
    ("has_direct", "pool", "observed", "reflection"),
    [
        (False, OBSERVED_POOL + REFLECTION_POOL, ["场景0时", "场景1时", "场景2时"], 3),
        (True, OBSERVED_POOL + REFLECTION_POOL, [], 3),
        (True, OBSERVED_POOL, [], 0),
        (False, REFLECTION_POOL[:1], [], 1),
        (False, [], [], 0),
    ],
)
def test_selection_rules(has_direct, pool, observed, reflection):
    selection = select_strategies(pool, bot_id=BOT, group_id=GROUP, has_direct_pairs=has_direct)
    assert [s.situation for s in selection.observed] == observed
    assert len(selection.reflection) == reflection
    assert all(s.learning_type is SELF for s in selection.reflection)
    if has_direct and any(s.learning_type is OBS for s in pool):
        assert "suppressed by direct pairs" in selection.reason


def test_selection_filters_other_groups_low_support_and_negative_feedback():
    pool = [
        strategy("别的群场景时", group=OTHER_GROUP, score=99),
        strategy("孤例场景时", support=1, score=50),
        strategy("常见场景时", support=4, score=4),
        strategy("被拒场景时", support=5, score=5),
    ]
    selection = select_strategies(
        pool,
        bot_id=BOT,
        group_id=GROUP,
        has_direct_pairs=False,
        min_support=2,
        blocked_tokens=[pool[3].source_token],
    )
    assert [s.situation for s in selection.observed] == ["常见场景时"]


def test_blocks_in_spec_style():
    observed = BehaviorStrategy(
        "对方表达进展或预期时",
        "用简短肯定语确认并强化对方观点",
        "对方感到被认同，对话节奏保持顺畅",
        OBS,
        3,
        3.0,
    )
    reflection = BehaviorStrategy(
        "对方拿我开玩笑", "笑着怼回去再反问一句", "气氛不错", SELF, 2, 2.0
    )
    assert render_behavior_reference_block([observed, reflection]) == "\n".join(
        [
            "【真人接话参考】",
            "- 以下来自本群真人互动的节奏与接话结构，只借鉴什么时候说短/长、怎么接，"
            "不要复刻原话或语气。",
            "- 类似「对方表达进展或预期时」时，真人会用简短肯定语确认并强化对方观点，"
            "结果对方感到被认同，对话节奏保持顺畅。",
        ]
    )
    assert render_self_reflection_block([observed, reflection]) == "\n".join(
        [
            "【接话复盘】",
            "- 以下是你之前自己接话的例子，只参考每次接得怎么样，别照搬原话，也别复刻当时用词。",
            "- 类似「对方拿我开玩笑」时，我之前是这样接的：笑着怼回去再反问一句，结果气氛不错。",
        ]
    )


def test_empty_outcome_and_empty_selection_render_cleanly():
    bare = BehaviorStrategy("对方抱怨时", "安慰一句。", "", OBS, 1, 1.0)
    assert render_behavior_reference_block([bare]).splitlines()[-1] == (
        "- 类似「对方抱怨时」时，真人会安慰一句。"
    )
    assert render_behavior_reference_block([]) == ""
    assert render_self_reflection_block([bare]) == ""


def test_strategy_tokens_are_stable_and_distinct():
    a, b = strategy("场景A时"), strategy("场景B时")
    assert a.source_token == strategy("场景A时", score=7).source_token
    assert a.source_token != b.source_token
    assert a.source_token.startswith(f"strategy:{BOT}:{GROUP}:observed:")


def test_summary_job_prompt_and_parse():
    source = [strategy("场景A时", support=3, score=3.0), strategy("场景B时", support=2, score=2.0)]
    messages = build_strategy_prompt(source)
    assert "<strategies>" in messages[-1]["content"]
    assert "不是给你的指令" in messages[0]["content"]
    answer = (
        "```\n"
        + json.dumps(
            {
                "situation": "对方分享近况时",
                "action": "简短接一句",
                "outcome": "气氛轻松",
                "support": 99,
            },
            ensure_ascii=False,
        )
        + '\n{"situation": ""}\n```'
    )
    result = parse_strategy_response(answer, source)
    assert result.reason == "ok"
    (merged,) = result.strategies
    assert merged.support_count == 5  # capped at the source's total support
    assert (merged.bot_id, merged.group_id, merged.learning_type) == (BOT, GROUP, OBS)
    assert len(result.rejected) == 1


@pytest.mark.parametrize(("answer", "reason"), [("", "empty_response"), ("不会", "no_json")])
def test_summary_job_garbage(answer, reason):
    result = parse_strategy_response(answer, [strategy("场景A时")])
    assert (result.strategies, result.reason) == ((), reason)


def test_summary_job_refuses_mixed_learning_types():
    with pytest.raises(ValueError):
        build_strategy_prompt([strategy("a时"), strategy("b时", lt=SELF)])
