"""Issue 13 rules: the ambient stake, PASS phrases by mood, third-person mentions, the daily cap."""

from __future__ import annotations

import random
from typing import Any

import pytest

from pallas.core.clock import FakeClock
from pallas.core.state import MemoryStateStore
from pallas.routing import phrases
from pallas.routing.ambient_stake import (
    Mood,
    RecentLine,
    StakeInput,
    StakeKeys,
    assess_stake,
    classify_mood,
)
from pallas.routing.config import AmbientConfig, LowEngagementConfig, RoutingConfig, SocialFitConfig
from pallas.routing.current_turn_decision import CurrentTurnAction
from pallas.routing.evaluate import RouteOutcome
from pallas.routing.low_engagement import decide_low_engagement, expression_mood
from pallas.routing.router import Router, day_of
from pallas.routing.triggers import TriggerConfig, TriggerKind, detect_trigger
from tests.unit.routing.helpers import ALIASES, ALICE, BOB, BOT, GROUP, T0, FixedRandom, turn

SOCIAL = SocialFitConfig()
CAROL = 1_003

AD_JOB = (
    "【招聘】杭州某科技公司招聘Python实习生\n岗位要求：\n1、计算机相关专业\n2、每周到岗4天\n"
    "简历投递：hr@xxtech.cn"
)
NOTICE = "各位同学：请于本周五17:00前将导师申请表纸质版交至E307办公室，逾期不予受理"
LONG_POST = "今天" + "我们在实验室讨论了很多关于模型训练和数据清洗的问题" * 4


def _stake(text: str, **kwargs: Any):
    inp = StakeInput(
        text=kwargs.pop("content", text),
        raw_text=text,
        user_id=kwargs.pop("user", ALICE),
        now=T0,
        **kwargs,
    )
    return assess_stake(inp, SOCIAL)


@pytest.mark.parametrize(
    ("text", "kwargs", "allowed", "reason"),
    [
        # announcements / ads / pasted posts: never
        (NOTICE, {}, False, "announcement"),
        ("明天下午开会", {"mentions_all": True}, False, "announcement"),
        ("【通知】明早八点体检", {}, False, "announcement"),
        (AD_JOB, {}, False, "ad_or_post"),
        ("兼职家教，每小时80，有意私聊", {}, False, "ad_or_post"),
        ("有事打我电话 13857162043", {}, False, "ad_or_post"),
        ("问卷 https://www.wjx.cn/vm/Q8xYz3a.aspx 帮忙填下", {}, False, "ad_or_post"),
        ("加我微信免费领皮肤", {}, False, "ad_or_post"),
        ("1. 带学生证\n2. 带笔\n3. 不许迟到", {}, False, "ad_or_post"),
        (LONG_POST, {}, False, "ad_or_post"),
        # member-to-member
        ("你也这么觉得吗", {"mentions_others": True}, False, "member_thread"),
        ("被扣800元是住宿费", {"replies_to_member": True}, False, "member_thread"),
        (
            "那我们两点楼下见",
            {"recent": (RecentLine(T0 - 40, ALICE), RecentLine(T0 - 20, BOB))},
            False,
            "member_thread",
        ),
        (
            "那我们两点楼下见",
            {"recent": (RecentLine(T0 - 20, BOB, reply_to_user=ALICE),)},
            False,
            "member_thread",
        ),
        ("哪一关", {"recent": (RecentLine(T0 - 10, BOB),)}, False, "member_follow_on"),
        # a line that talked to the bot is not part of a member exchange
        (
            "为什么冬天静电这么多",
            {"recent": (RecentLine(T0 - 40, ALICE), RecentLine(T0 - 20, BOB, to_bot=True))},
            True,
            "open_question",
        ),
        # questions only the members can answer
        ("大家8号有被扣款100元吗？", {}, False, "member_only_question"),
        ("导师申请表你们都送到E307了吗", {}, False, "member_only_question"),
        ("有人下午去图书馆吗", {}, False, "member_only_question"),
        ("今晚有人一起打危机合约吗", {}, False, "member_only_question"),
        ("宿舍热水几点开啊", {}, False, "member_only_question"),
        ("谁借我个充电宝", {}, False, "member_only_question"),
        ("有人知道这期活动商店什么时候关吗", {}, False, "member_only_question"),
        ("有人知道为什么冬天静电这么多吗", {}, True, "open_question"),
        ("这个番好有意思", {}, False, "no_stake"),  # 有意思 is no ad
        ("这价格太贵了", {}, False, "no_stake"),
        # nothing to add
        ("今天跑了五公里", {}, False, "no_stake"),
        ("迎娶白富美", {}, False, "no_stake"),
        ("合成玉还剩多少", {}, False, "no_stake"),
        # a stake
        ("为什么冬天静电这么多啊", {}, True, "open_question"),
        ("有什么好看的番推荐吗", {}, True, "open_question"),
        ("我过了！！六级过了", {}, True, "emotion"),
        ("烦死了 实验又失败了", {}, True, "emotion"),
        ("卧槽 一食堂居然有小龙虾了", {}, True, "emotion"),
        ("牛牛也是干员吧", {"mentioned": True, "trigger": "alias"}, True, "alias"),
        ("你们说牛牛会生气吗", {"mentioned": True, "trigger": "alias"}, True, "alias"),
        ("那明天几点开始", {"trigger": "follow_up"}, True, "follow_up"),
        ("那我先去吃饭了", {"trigger": "follow_up"}, True, "follow_up"),
        ("那你觉得呢？", {"trigger": "follow_up"}, True, "follow_up"),
        ("有人知道为什么会这样吗", {"trigger": "follow_up"}, True, "follow_up"),
        # right after the bot answered, a question put to the members is the group's
        ("有没有人一起", {"trigger": "follow_up"}, False, "member_only_question"),
        ("大家晚上吃什么", {"trigger": "follow_up"}, False, "member_only_question"),
        ("你们说牛牛会生气吗", {"trigger": "follow_up", "mentioned": True}, True, "follow_up"),
        # the hard rules hold in the follow-up window too
        (AD_JOB, {"trigger": "follow_up"}, False, "ad_or_post"),
        (
            "你也这么觉得吗",
            {"trigger": "follow_up", "mentions_others": True},
            False,
            "member_thread",
        ),
    ],
)
def test_stake_rules(text: str, kwargs: dict[str, Any], allowed: bool, reason: str) -> None:
    result = _stake(text, **kwargs)
    assert (result.allowed, result.reason) == (allowed, reason)


@pytest.mark.parametrize(
    ("text", "allowed", "reason"),
    [
        ("凯尔希医生今天又在加班", True, "worldbook"),
        ("Rhodes Island 的新活动好难", True, "worldbook"),
        ("今天吃什么", False, "no_stake"),
        ("大家周末去罗德岛联动吗", False, "member_only_question"),  # asked of the members
    ],
)
def test_the_groups_worldbook_keys_are_a_stake(text: str, allowed: bool, reason: str) -> None:
    keys = StakeKeys(worldbook=frozenset({"罗德岛", "凯尔希", "rhodes island"}))
    result = _stake(text, stake_keys=keys)
    assert (result.allowed, result.reason) == (allowed, reason)


REMEMBERED = StakeKeys(
    worldbook=frozenset({"罗德岛"}),
    knowledge=frozenset({"源石病", "值班表"}),
    remembered_topic=frozenset({"番茄", "菜谱"}),
    member_memory=frozenset({"日语", "羽毛球"}),
)


@pytest.mark.parametrize(
    ("text", "allowed", "reason"),
    [
        ("罗德岛的值班表出来了", True, "worldbook"),  # the first source that matches names it
        ("源石病到底会不会传染", True, "knowledge"),
        ("这周值班表怎么排的", True, "knowledge"),
        ("上次那个番茄炒蛋我做成功了", True, "remembered_topic"),
        ("日语的敬语真的好难", True, "member_memory"),
        ("周末约了羽毛球，好开心", True, "member_memory"),
        ("今天好累", True, "emotion"),  # nothing remembered in it: the other rules decide
        ("我吃过饭了", False, "no_stake"),
        ("有没有人周末一起打羽毛球", False, "member_only_question"),  # asked of the members
        ("日语你也学过吗", False, "member_thread"),  # to another member (below)
    ],
)
def test_what_the_bot_remembers_is_a_stake(text: str, allowed: bool, reason: str) -> None:
    """Issue 32: knowledge keys, remembered topics and what the bot knows about the speaker
    count as a stake, each named; they never override the rules that keep the bot out."""
    others = {"mentions_others": True} if text.startswith("日语你") else {}
    result = _stake(text, stake_keys=REMEMBERED, **others)
    assert (result.allowed, result.reason) == (allowed, reason)


def test_topic_keys_are_a_stake_but_not_for_member_only_questions() -> None:
    config = SocialFitConfig(topic_keys=("明日方舟", "干员"))

    def stake(text: str):
        return assess_stake(StakeInput(text=text, raw_text=text, user_id=ALICE, now=T0), config)

    assert (stake("今天明日方舟更新了").allowed, stake("今天明日方舟更新了").reason) == (
        True,
        "topic",
    )
    assert stake("你们干员练到多少级了").reason == "member_only_question"
    assert stake("今天跑了五公里").reason == "no_stake"


def test_stake_rules_can_be_switched_off() -> None:
    inp = StakeInput(text=AD_JOB, raw_text=AD_JOB, user_id=ALICE, now=T0)
    result = assess_stake(inp, SocialFitConfig(enabled=False))
    assert (result.allowed, result.reason) == (True, "stake_disabled")


@pytest.mark.parametrize(
    ("text", "about_bot", "mood"),
    [
        ("不是笔试吧", False, Mood.STATEMENT),
        ("迎娶白富美", False, Mood.STATEMENT),
        ("被扣800元是住宿费", False, Mood.STATEMENT),
        ("那明天几点开始？", False, Mood.QUESTION),
        ("卧槽 周年庆新干员是谁啊", False, Mood.QUESTION),
        ("我offer到手了！！", False, Mood.GOOD_NEWS),
        ("论文终于中了！！！", False, Mood.GOOD_NEWS),
        ("终于下班了", False, Mood.GOOD_NEWS),
        # issue 32: a keyword is not news — teasing another member is a statement
        ("土豆终于不是菜鸡了", False, Mood.STATEMENT),
        ("终于轮到我说话了", False, Mood.STATEMENT),
        ("歪了 又歪了 气死", False, Mood.VENTING),
        ("好累啊 改了一晚上论文", False, Mood.VENTING),
        ("诶 原来今天下午没课", False, Mood.SURPRISE),
        ("基建换班好麻烦", False, Mood.STATEMENT),  # 麻烦 is not 烦
        ("夏目超好哭的", False, Mood.STATEMENT),  # moving, not sad
        ("绷不住了", False, Mood.STATEMENT),  # amused: silence
        ("欧皇滚出去", False, Mood.STATEMENT),  # someone else's luck
        ("谢谢你呀", False, Mood.STATEMENT),
        ("谢谢你呀", True, Mood.WARM),
        ("今天牛牛好可爱", True, Mood.WARM),
    ],
)
def test_mood(text: str, about_bot: bool, mood: Mood) -> None:
    assert classify_mood(text, about_bot=about_bot) is mood


def _phrase(focus: str, **kwargs: Any):
    args: dict[str, Any] = {
        "action": CurrentTurnAction.PASS,
        "source": "rule",
        "addressed": False,
        "focus_text": focus,
        "recent_bot_replies": 0,
        "rng": FixedRandom(0.0),
    }
    config = kwargs.pop("config", LowEngagementConfig())
    args.update(kwargs)
    return decide_low_engagement(config, **args)


@pytest.mark.parametrize(
    ("focus", "reason", "pool"),
    [
        ("不是笔试吧", "statement_silence", None),  # "好耶" after it was the complaint
        ("迎娶白富美", "statement_silence", None),
        ("被扣800元是住宿费", "statement_silence", None),
        ("大家8号有被扣款100元吗？", "question", None),
        ("那明天几点开始", "question", None),
        ("我六级过了", "emit", "good_news"),
        ("烦死了 实验又失败了", "emit", "emotion"),
        ("卧槽 下雪了", "emit", "surprise"),
    ],
)
def test_pass_phrase_fits_the_mood(focus: str, reason: str, pool: str | None) -> None:
    result = _phrase(focus)
    assert (result.reason, result.pool) == (reason, pool)


def test_good_news_gets_a_good_news_phrase() -> None:
    for seed in range(30):
        result = _phrase(
            "我六级过了",
            rng=random.Random(seed),
            config=LowEngagementConfig(probability_steps=((0, 1.0),)),
        )
        assert result.phrase in phrases.GOOD_NEWS_POOL


def test_a_phrase_never_repeats_what_the_group_just_said() -> None:
    config = LowEngagementConfig(probability_steps=((0, 1.0),), good_news_pool=("好耶", "恭喜恭喜"))
    for seed in range(20):
        result = _phrase(
            "我六级过了", rng=random.Random(seed), config=config, recent_texts=("恭喜恭喜",)
        )
        assert result.phrase == "好耶"
    alone = _phrase("好耶 我过了", config=LowEngagementConfig(good_news_pool=("好耶",)))
    assert (alone.emit, alone.reason) == (False, "no_phrase")


@pytest.mark.parametrize(
    ("expression", "mood"),
    [("好耶", Mood.GOOD_NEWS), ("恭喜", Mood.GOOD_NEWS), ("抱抱", Mood.VENTING),
     ("啊这", Mood.SURPRISE), ("欸嘿", Mood.WARM), ("确实可以", None), ("笑死", None)],
)  # fmt: skip
def test_learned_expression_mood(expression: str, mood: Mood | None) -> None:
    assert expression_mood(expression) is mood


def test_learned_expressions_only_in_their_mood() -> None:
    config = LowEngagementConfig(good_news_pool=(), emotion_pool=())
    learned = ("抱抱", "牛啊", "确实可以")
    good = _phrase("我六级过了", config=config, group_expressions=learned)
    assert (good.phrase, good.pool) == ("牛啊", "group")
    sad = _phrase("烦死了", config=config, group_expressions=learned)
    assert (sad.phrase, sad.pool) == ("抱抱", "group")
    plain = _phrase("今天跑了五公里", config=config, group_expressions=learned)
    assert plain.reason == "statement_silence"


def test_built_in_pools_have_no_question_or_instruction_endings() -> None:
    pools = (phrases.SOFT_POOL, phrases.GOOD_NEWS_POOL, phrases.SURPRISE_POOL,
             phrases.EMOTION_TANGENT_POOL, phrases.WARM_POOL, phrases.EMOJI_POOL)  # fmt: skip
    for pool in pools:
        for phrase in pool:
            assert phrase.rstrip("～~!！")[-1:] not in set("?？吧呀呢吗嘛"), phrase


# --------------------------------------------------------------------------- third person


@pytest.mark.parametrize(
    ("turn_kwargs", "kind", "addressed", "reason"),
    [
        ({"text": "牛牛也是干员吧"}, TriggerKind.ALIAS, False, "alias_mention"),
        ({"text": "问牛牛"}, TriggerKind.ALIAS, False, "alias_mention"),
        ({"text": "牛牛看看", "at_users": (BOB,)}, TriggerKind.ALIAS, False, "alias_mention"),
        ({"text": "牛牛今天没说话"}, TriggerKind.ALIAS, False, "alias_mention"),
        ({"text": "牛牛背后是个加班的程序员"}, TriggerKind.ALIAS, False, "alias_mention"),
        ({"text": "牛牛牛"}, TriggerKind.ALIAS, False, "alias_mention"),
        # issue 32: a question about the name's bearer is a mention, not an address
        ({"text": "帕拉斯有皮肤吗"}, TriggerKind.ALIAS, False, "alias_mention"),
        ({"text": "帕拉斯是几星"}, TriggerKind.ALIAS, False, "alias_mention"),
        ({"text": "帕拉斯，有皮肤吗"}, TriggerKind.ALIAS, True, "alias_vocative"),
        ({"text": "牛牛你有皮肤吗"}, TriggerKind.ALIAS, True, "alias_vocative"),
        ({"text": "牛牛有空吗"}, TriggerKind.ALIAS, True, "alias_vocative"),
        ({"text": "牛牛有什么推荐吗"}, TriggerKind.ALIAS, True, "alias_vocative"),
        ({"text": "牛牛掷个骰子"}, TriggerKind.ALIAS, True, "alias_vocative"),
        ({"text": "牛牛yyds"}, TriggerKind.ALIAS, True, "alias_vocative"),
        ({"text": "牛牛，也是干员吗"}, TriggerKind.ALIAS, True, "alias_vocative"),
        ({"text": "牛牛，看看这个", "at_users": (BOB,)}, TriggerKind.ALIAS, True, "alias_vocative"),
        ({"text": "牛牛 在吗"}, TriggerKind.ALIAS, True, "alias_vocative"),
        ({"text": "牛牛帮我查下天气"}, TriggerKind.ALIAS, True, "alias_vocative"),
        ({"text": "牛牛会唱歌吗"}, TriggerKind.ALIAS, True, "alias_vocative"),
        ({"text": "牛牛闭嘴"}, TriggerKind.ALIAS, True, "alias_vocative"),
        ({"text": "晚安牛牛"}, TriggerKind.ALIAS, True, "alias_vocative"),
        ({"text": "牛牛也是干员吧", "at_bot": True}, TriggerKind.AT, True, "at"),
    ],
)
def test_third_person_mentions_are_not_addresses(
    turn_kwargs: dict[str, Any], kind: TriggerKind, addressed: bool, reason: str
) -> None:
    t = turn(**turn_kwargs)
    result = detect_trigger(
        t,
        aliases=ALIASES,
        triggers=TriggerConfig(),
        ambient=AmbientConfig(enabled=False),
        now=T0,
        rng=random.Random(1),
    )
    assert (result.kind, result.addressed, result.reason) == (kind, addressed, reason)


def test_adapter_nickname_to_me_does_not_make_a_third_person_mention_an_address() -> None:
    from dataclasses import replace

    t = replace(turn("牛牛也是干员吧"), to_me=True)  # NoneBot's leading-nickname check
    result = detect_trigger(
        t,
        aliases=ALIASES,
        triggers=TriggerConfig(),
        ambient=AmbientConfig(enabled=False),
        now=T0,
        rng=random.Random(1),
    )
    assert (result.addressed, result.reason) == (False, "alias_mention")


# --------------------------------------------------------------------------- daily cap


async def test_daily_cap_on_unprompted_utterances() -> None:
    clock = FakeClock(T0)
    engine = Router(MemoryStateStore(clock))
    config = RoutingConfig(
        ambient=AmbientConfig(rate=1.0, cooldown_s=0, budget=100),
        social=SocialFitConfig(daily_unprompted_cap=2),
    )
    outcomes = []
    for i in range(4):
        clock.advance(300)
        t = turn("为什么冬天静电这么多", user=ALICE + i, message_id=10 + i, time=clock.now())
        result = await engine.route(t, config, aliases=ALIASES, now=clock.now(), rng=FixedRandom(0))
        await engine.finish_turn(BOT, GROUP, t.user_id)
        outcomes.append((result.outcome, result.stage, result.reason))
    assert [o[0] for o in outcomes[:2]] == [RouteOutcome.REPLY, RouteOutcome.REPLY]
    assert outcomes[2:] == [(RouteOutcome.SKIP, "restraint", "daily_cap")] * 2
    # an @ is never capped
    t = turn("为什么冬天静电这么多", at_bot=True, user=CAROL, message_id=30, time=clock.now())
    at = await engine.route(t, config, aliases=ALIASES, now=clock.now(), rng=FixedRandom(0))
    assert at.outcome is RouteOutcome.REPLY
    # the next day (UTC+8) starts a new count
    clock.set(T0 + 86_400)
    t = turn("为什么冬天静电这么多", user=BOB, message_id=40, time=clock.now())
    again = await engine.route(t, config, aliases=ALIASES, now=clock.now(), rng=FixedRandom(0))
    assert again.outcome is RouteOutcome.REPLY


async def test_daily_cap_counts_only_what_the_bot_started() -> None:
    """Issue 32: a member's follow-up of a conversation with the bot takes no slot."""
    clock = FakeClock(T0)
    engine = Router(MemoryStateStore(clock))
    config = RoutingConfig(
        ambient=AmbientConfig(enabled=False),
        social=SocialFitConfig(daily_unprompted_cap=1),
    )

    async def say(text: str, message_id: int, **kw: Any) -> Any:
        t = turn(text, user=ALICE, message_id=message_id, time=clock.now(), **kw)
        result = await engine.route(t, config, aliases=ALIASES, now=clock.now(), rng=FixedRandom(0))
        await engine.finish_turn(BOT, GROUP, ALICE)
        return result

    for i in range(3):  # asked, answered, then followed up: three times over
        clock.advance(60)
        assert (await say("明天几点开会", 100 + i, at_bot=True)).outcome is RouteOutcome.REPLY
        await engine.record_bot_reply(BOT, GROUP, ALICE, (900 + i,), clock.now())
        clock.advance(10)
        follow = await say("那地点定了吗？", 200 + i)
        assert follow.trigger.follow_up and follow.unprompted and not follow.self_started
        assert follow.calls_llm, f"follow-up {i + 1} was capped"


async def test_daily_cap_holds_against_a_stale_snapshot() -> None:
    """Another process took the last slot after this one read its snapshot."""
    from pallas.core.state_keys import RouteKeys
    from pallas.routing.route_state import RouteState

    clock = FakeClock(T0)
    store = MemoryStateStore(clock)
    engine = Router(store)
    config = RoutingConfig(
        ambient=AmbientConfig(rate=1.0, cooldown_s=0, budget=100),
        social=SocialFitConfig(daily_unprompted_cap=1),
    )
    key = RouteKeys.of(BOT, GROUP, ALICE).unprompted(day_of(T0, 8.0))
    await store.incr(key)  # the other process's utterance

    async def stale(*args: Any, **kwargs: Any) -> RouteState:
        return RouteState()  # read before that utterance was counted

    engine.load_state = stale  # type: ignore[method-assign]
    t = turn("为什么冬天静电这么多", message_id=50, time=T0)
    result = await engine.route(t, config, aliases=ALIASES, now=T0, rng=FixedRandom(0))
    assert (result.outcome, result.stage, result.reason) == (
        RouteOutcome.SKIP,
        "restraint",
        "daily_cap",
    )
    assert await store.get(key) == 1


@pytest.mark.parametrize(
    ("now", "offset", "day"),
    [(1_700_000_000.0, 8.0, "20231115"), (1_699_977_599.0, 8.0, "20231114"),
     (1_699_977_600.0, 8.0, "20231115"), (1_699_977_600.0, 0.0, "20231114")],
)  # fmt: skip
def test_day_of_uses_the_group_time_zone(now: float, offset: float, day: str) -> None:
    assert day_of(now, offset) == day


def test_a_burst_line_merges_into_the_turn_in_flight_before_the_stake_rules() -> None:
    from pallas.routing.evaluate import evaluate_route
    from pallas.routing.route_state import RouteState

    config = RoutingConfig(ambient=AmbientConfig(rate=1.0))
    result = evaluate_route(
        turn("还有这个"),
        config,
        RouteState(user_in_flight=True),
        aliases=ALIASES,
        now=T0,
        rng=FixedRandom(0.0),
    )
    assert (result.outcome, result.reason) == (RouteOutcome.MERGE, "user_in_flight")


def test_an_untriggered_turn_above_threshold_still_needs_a_stake() -> None:
    """A group that weights questions high enough needs no soft trigger to pass necessity."""
    from pallas.routing.config import NecessityConfig
    from pallas.routing.evaluate import evaluate_route
    from pallas.routing.route_state import RouteState

    config = RoutingConfig(
        ambient=AmbientConfig(enabled=False), necessity=NecessityConfig(question=60)
    )

    def route(text: str):
        return evaluate_route(
            turn(text), config, RouteState(), aliases=ALIASES, now=T0, rng=FixedRandom(0.0)
        )

    member_q = route("大家8号有被扣款100元吗？")
    assert (member_q.trigger.kind, member_q.stage, member_q.reason) == (
        TriggerKind.NONE,
        "stake",
        "member_only_question",
    )
    assert route("为什么冬天静电这么多").outcome is RouteOutcome.REPLY


# --------------------------------------------------------------------------- observed moods


@pytest.mark.parametrize(
    ("triggers", "mood"),
    [
        (("我六级过了", "offer到手了", "论文中了"), Mood.GOOD_NEWS),
        (("烦死了", "好累啊", "论文中了"), Mood.VENTING),
        (("烦死了", "论文中了"), None),  # mixed: no mood
        (("几点开会", "在哪"), Mood.QUESTION),  # an answer: never a PASS phrase
        ((), None),
    ],
)
def test_observed_mood_is_the_majority_of_what_the_phrase_answered(
    triggers: tuple[str, ...], mood: Mood | None
) -> None:
    from pallas.routing.ambient_stake import observed_mood

    assert observed_mood(triggers) is mood


def test_learned_phrases_carry_the_mood_they_were_observed_in() -> None:
    from pallas.features.learning.context_source import _active_short_phrases
    from pallas.features.learning.group_store import FeedbackBlocks, GroupLearningData
    from pallas.routing.ambient_stake import ObservedPhrase
    from tests.unit.learning.factory import BOT as LBOT
    from tests.unit.learning.factory import GROUP as LGROUP
    from tests.unit.learning.factory import pair

    pairs = (
        pair("我六级过了", "冲冲冲", trigger_id=1, response_id=2),
        pair("offer到手了", "冲冲冲", trigger_id=3, response_id=4),
        pair("烦死了", "冲冲冲", trigger_id=5, response_id=6),
        pair("又加班 好累", "摸摸", trigger_id=7, response_id=8),
        pair("烦死了", "摸摸", trigger_id=9, response_id=10),
    )
    learned = _active_short_phrases(
        GroupLearningData(LBOT, LGROUP, observed_pairs=pairs), FeedbackBlocks((), frozenset())
    )
    assert learned == ("冲冲冲", "摸摸")
    assert all(isinstance(p, ObservedPhrase) for p in learned)
    assert [p.mood for p in learned] == [Mood.GOOD_NEWS, Mood.VENTING]  # type: ignore[attr-defined]
    # the PASS exit uses each only in its observed mood, whatever its wording
    config = LowEngagementConfig(good_news_pool=(), emotion_pool=())
    good = _phrase("我也过了", config=config, group_expressions=learned)
    assert (good.phrase, good.pool) == ("冲冲冲", "group")
    sad = _phrase("今天好累", config=config, group_expressions=learned)
    assert (sad.phrase, sad.pool) == ("摸摸", "group")
    # an expression observed after questions (an answer) is never used
    answer = ObservedPhrase("周三", Mood.QUESTION)
    none = _phrase("我也过了", config=config, group_expressions=(answer,))
    assert none.reason == "no_phrase"
