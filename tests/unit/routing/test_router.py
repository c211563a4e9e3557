from __future__ import annotations

import itertools
import random
from typing import Any

import pytest

from pallas.core.clock import FakeClock
from pallas.core.state import MemoryStateStore
from pallas.core.turn import TurnInput
from pallas.routing.config import (
    AmbientConfig,
    CooldownConfig,
    LowEngagementConfig,
    QuoteConfig,
    RoutingConfig,
    SocialFitConfig,
)
from pallas.routing.current_turn_decision import CurrentTurnAction, DeliveryStyle
from pallas.routing.evaluate import RouteOutcome, RouteResult
from pallas.routing.router import Router
from tests.unit.routing.helpers import ALIASES, ALICE, BOB, BOT, GROUP, T0, FixedRandom, turn

QUIET = RoutingConfig(ambient=AmbientConfig(enabled=False))
# The older behaviour, still configurable: an @ during the cooldown waits until it ends.
AT_WAITS = RoutingConfig(
    ambient=AmbientConfig(enabled=False), cooldown=CooldownConfig(addressed_waits_cooldown=True)
)
ALWAYS_PHRASE = RoutingConfig(
    ambient=AmbientConfig(enabled=False),
    low_engagement=LowEngagementConfig(probability_steps=((0, 1.0),)),
)


class Harness:
    def __init__(self) -> None:
        self.clock = FakeClock(T0)
        self.store = MemoryStateStore(self.clock)
        self.engine = Router(self.store)
        self.next_id = 100

    async def say(
        self,
        text: str = "",
        *,
        config: RoutingConfig = QUIET,
        rng: random.Random | None = None,
        finish: bool = True,
        **kwargs: Any,
    ) -> RouteResult:
        """Route a message; with `finish`, an LLM turn ends at once (as if it were delivered)."""
        self.next_id += 1
        kwargs.setdefault("message_id", self.next_id)
        t: TurnInput = turn(text, time=self.clock.now(), **kwargs)
        result = await self.engine.route(
            t, config, aliases=ALIASES, now=self.clock.now(), rng=rng or random.Random(3)
        )
        if finish and result.calls_llm:
            await self.engine.finish_turn(BOT, t.group_id, t.user_id)
        return result

    async def bot_answers(self, user: int, *message_ids: int, group: int = GROUP) -> None:
        await self.engine.record_bot_reply(BOT, group, user, message_ids, self.clock.now())


@pytest.fixture
def h() -> Harness:
    return Harness()


@pytest.mark.parametrize(
    ("text", "kwargs", "outcome", "reason"),
    [
        ("哈哈", {}, RouteOutcome.SKIP, "noise"),
        ("你好", {"at_bot": True}, RouteOutcome.REPLY, "rule_reply_short_social"),
        ("这个怎么弄啊", {"at_bot": True}, RouteOutcome.REPLY, "rule_reply"),
        ("", {"at_bot": True}, RouteOutcome.FOLLOW_UP, "rule_follow_up_bare_address"),
        ("", {"faces": 1}, RouteOutcome.SKIP, "face"),
        ("你看这个", {"at_users": (BOB,)}, RouteOutcome.SKIP, "bystander"),
        ("有人知道这个怎么弄吗", {}, RouteOutcome.SKIP, "below_threshold"),
        ("牛牛，这个怎么弄啊", {}, RouteOutcome.REPLY, "rule_reply"),
        ("在吗", {"group": 0}, RouteOutcome.REPLY, "rule_reply_short_social"),
    ],
)
async def test_first_message_outcomes(
    h: Harness, text: str, kwargs: dict[str, Any], outcome: RouteOutcome, reason: str
) -> None:
    result = await h.say(text, **kwargs)
    assert (result.outcome, result.reason) == (outcome, reason)
    assert result.calls_llm is (outcome in {RouteOutcome.REPLY, RouteOutcome.FOLLOW_UP})


async def test_disabled_group_never_speaks(h: Harness) -> None:
    result = await h.say("你好", at_bot=True, config=RoutingConfig(enabled=False))
    assert (result.outcome, result.reason) == (RouteOutcome.SKIP, "disabled")


async def test_an_at_during_the_cooldown_is_answered_at_once(h: Harness) -> None:
    assert (await h.say("帮我看看这个报错", at_bot=True)).outcome is RouteOutcome.REPLY
    h.clock.advance(1)
    second = await h.say("还有这个也帮我看下", at_bot=True, user=BOB)
    assert second.outcome is RouteOutcome.REPLY
    h.clock.advance(0.5)  # an unaddressed line is still paced by the cooldown
    third = await h.say("你们说牛牛会不会生气了呢", user=ALICE)
    assert (third.outcome, third.reason) == (RouteOutcome.ACCUMULATE, "cooldown")


async def test_a_line_held_by_the_cooldown_still_counts_for_the_thread_rules(h: Harness) -> None:
    assert (await h.say("帮我看看这个报错", at_bot=True)).outcome is RouteOutcome.REPLY
    h.clock.advance(1)
    held = await h.say("你们说牛牛会不会生气了呢", user=BOB)
    assert held.outcome is RouteOutcome.ACCUMULATE
    state = await h.engine.load_state(BOT, GROUP, ALICE)
    assert [(line.user, line.text) for line in state.recent_lines][-1] == (
        BOB,
        "你们说牛牛会不会生气了呢",
    )


async def test_cooldown_accumulates_then_next_trigger_takes_the_messages(h: Harness) -> None:
    first = await h.say("帮我看看这个报错", at_bot=True, config=AT_WAITS)
    assert first.outcome is RouteOutcome.REPLY
    h.clock.advance(1)
    second = await h.say("还有这个也帮我看下", at_bot=True, user=BOB, config=AT_WAITS)
    assert (second.outcome, second.reason) == (RouteOutcome.ACCUMULATE, "cooldown")
    assert second.cooldown is not None and second.cooldown.retry_after_s == pytest.approx(2)
    assert [p["user_id"] for p in await h.engine.pending(BOT, GROUP)] == [BOB]
    h.clock.advance(3)
    third = await h.say("那我的问题呢", at_bot=True, config=AT_WAITS)
    assert third.outcome is RouteOutcome.REPLY
    assert [a["text"] for a in third.accumulated] == ["还有这个也帮我看下"]
    assert await h.engine.pending(BOT, GROUP) == []


async def test_retried_accumulated_turn_is_not_duplicated(h: Harness) -> None:
    await h.say("帮我看看这个报错", at_bot=True, config=AT_WAITS)
    h.clock.advance(1)
    held = await h.say("还有这个也帮我看下", at_bot=True, user=BOB, message_id=555, config=AT_WAITS)
    assert held.outcome is RouteOutcome.ACCUMULATE
    h.clock.advance(held.cooldown.retry_after_s if held.cooldown else 0)
    retried = await h.say(
        "还有这个也帮我看下", at_bot=True, user=BOB, message_id=555, config=AT_WAITS
    )
    assert retried.outcome is RouteOutcome.REPLY
    assert retried.accumulated == ()


async def test_shut_up_starts_a_silence_period(h: Harness) -> None:
    await h.say("今天好无聊啊", at_bot=True)
    await h.bot_answers(ALICE, 900)
    h.clock.advance(5)
    shut = await h.say("牛牛闭嘴")
    assert (shut.outcome, shut.reason) == (RouteOutcome.SKIP, "shut_up")
    silence = shut.gate.silence_s
    assert silence is not None and 30 <= silence <= 300
    h.clock.advance(5)
    # a follow-up by the same member and a mention by someone else stay silent
    follow = await h.say("那你说说明天去哪玩吧", config=ALWAYS_PHRASE)
    assert (follow.outcome, follow.reason) == (RouteOutcome.SKIP, "silenced")
    mention = await h.say("你们说牛牛会不会生气了呢", user=BOB, config=ALWAYS_PHRASE)
    assert (mention.outcome, mention.reason) == (RouteOutcome.SKIP, "silenced")
    # an explicit @ still gets its answer
    assert (await h.say("你还好吗", at_bot=True, user=BOB)).outcome is RouteOutcome.REPLY
    h.clock.advance(silence)
    again = await h.say("你们说牛牛会不会生气了呢", user=BOB)
    assert again.outcome is RouteOutcome.REPLY


async def test_follow_up_window_after_the_bot_answered(h: Harness) -> None:
    await h.say("周末去哪玩比较好", at_bot=True)
    await h.bot_answers(ALICE, 901)
    h.clock.advance(30)
    follow = await h.say("那明天几点出发比较好？")
    assert follow.trigger.kind.value == "follow_up"
    assert follow.outcome is RouteOutcome.REPLY
    h.clock.advance(5)
    other = await h.say("那明天几点出发比较好？", user=BOB)
    assert other.outcome is RouteOutcome.SKIP  # the window belongs to Alice only
    h.clock.advance(120)
    late = await h.say("那后天几点出发比较好？")
    assert late.trigger.kind.value == "none"
    assert late.outcome is RouteOutcome.SKIP


async def test_reply_to_a_bot_message_is_addressed(h: Harness) -> None:
    await h.bot_answers(ALICE, 902)
    result = await h.say("什么意思", user=BOB, reply_to=902)
    assert result.trigger.kind.value == "reply_to_bot"
    assert result.calls_llm


async def test_quote_only_for_candidates_with_cooldown_and_probability(h: Harness) -> None:
    await h.bot_answers(ALICE, 903)
    hit = FixedRandom(0.1)
    first = await h.say("什么意思", user=BOB, reply_to=903, reply_to_user=BOT, rng=hit)
    assert first.outcome is RouteOutcome.QUOTE
    assert first.decision is not None
    assert first.decision.delivery_style is DeliveryStyle.QUOTE
    assert first.decision.reply_message_id == 903
    assert await h.engine.resolve_quote_target(BOT, GROUP, 903) == 903
    h.clock.advance(60)
    second = await h.say("再说一遍是什么意思", user=BOB, reply_to=903, reply_to_user=BOT, rng=hit)
    assert second.outcome is RouteOutcome.REPLY
    assert second.quote is not None and second.quote.reason == "quote_cooldown"
    h.clock.advance(61)
    miss = await h.say("所以到底是什么意思", reply_to=903, reply_to_user=BOT, rng=FixedRandom(0.9))
    assert (miss.outcome, miss.quote and miss.quote.reason) == (
        RouteOutcome.REPLY,
        "quote_roll_miss",
    )
    h.clock.advance(5)
    third = await h.say("所以到底是什么意思", reply_to=903, reply_to_user=BOT, rng=hit)
    assert third.outcome is RouteOutcome.QUOTE


async def test_quoting_an_unknown_message_falls_back_to_plain(h: Harness) -> None:
    result = await h.say("这是什么意思", at_bot=True, reply_to=4242, rng=FixedRandom(0.0))
    assert result.outcome is RouteOutcome.REPLY
    assert result.quote is not None and result.quote.reason == "target_not_candidate"
    assert result.decision is not None and result.decision.reply_message_id is None


async def test_expired_candidate_is_not_quoted_on_delivery(h: Harness) -> None:
    config = RoutingConfig(quote=QuoteConfig(candidates=6))
    await h.engine.record_candidate(BOT, GROUP, 1, config=config)
    assert await h.engine.resolve_quote_target(BOT, GROUP, 1) == 1
    for mid in range(2, 8):
        await h.engine.record_candidate(BOT, GROUP, mid, config=config)
    assert await h.engine.live_candidates(BOT, GROUP) == [2, 3, 4, 5, 6, 7]
    assert await h.engine.resolve_quote_target(BOT, GROUP, 1) is None
    h.clock.advance(601)
    assert await h.engine.resolve_quote_target(BOT, GROUP, 7) is None


async def test_pass_phrase_is_local_short_and_never_repeats(h: Harness) -> None:
    # twelve phrases in one day: over the default daily cap of unprompted utterances
    config = ALWAYS_PHRASE.model_copy(update={"social": SocialFitConfig(daily_unprompted_cap=100)})
    phrases = []
    for i in range(12):
        await h.bot_answers(ALICE, 950 + i)
        h.clock.advance(10)  # inside the follow-up window
        result = await h.say("谢谢你呀", config=config, rng=random.Random(i))
        assert result.action is CurrentTurnAction.PASS
        assert result.outcome is RouteOutcome.PASS_PHRASE
        assert result.phrase is not None and len(result.phrase) <= 12
        phrases.append(result.phrase)
        h.clock.advance(400)
        assert not result.calls_llm
    assert all(a != b for a, b in itertools.pairwise(phrases))


async def test_pass_probability_follows_recent_bot_replies(h: Harness) -> None:
    await h.say("周末去哪玩比较好", at_bot=True)
    for mid in (960, 961, 962):
        await h.bot_answers(ALICE, mid)
    h.clock.advance(10)
    # three recent bot replies → 0.10: a roll of 0.15 stays silent
    result = await h.say("谢谢你呀", rng=FixedRandom(0.15))
    assert result.outcome is RouteOutcome.PASS_SILENT
    assert result.low_engagement is not None
    assert result.low_engagement.probability == 0.10


async def test_decisions_ring_keeps_the_latest_records(h: Harness) -> None:
    config = RoutingConfig(ambient=AmbientConfig(enabled=False), decisions_kept=3)
    texts = ["哈哈", "666", "你好", "在干嘛", "这个怎么弄"]
    for text in texts:
        await h.say(text, at_bot=text != "哈哈", config=config)
        h.clock.advance(10)
    records = await h.engine.recent_decisions(BOT, GROUP)
    assert [r["text"] for r in records] == texts[-3:]
    last = records[-1]
    assert last["group"] == GROUP and last["user"] == ALICE
    assert last["trigger"] == "at" and last["action"] == "REPLY"
    assert ["to_me", 55] in last["terms"]
    assert last["outcome"] == "reply"


async def test_log_record_explains_a_skip(h: Harness) -> None:
    result = await h.say("哈哈")
    record = result.to_log_dict()
    assert record["gate"] == "skip" and record["gate_reason"] == "noise"
    assert record["action"] is None and record["terms"] == []
    assert record["message_id"] == result.turn.message_id


async def test_ambient_respects_cooldown_and_budget(h: Harness) -> None:
    config = RoutingConfig(ambient=AmbientConfig(rate=1.0))
    # issue 13: an open question the persona can answer ("有人知道…几号…吗" is member-only now)
    question = "这个游戏的抽卡保底是什么原理"
    first = await h.say(question, config=config)
    assert (first.trigger.kind.value, first.outcome) == ("ambient", RouteOutcome.REPLY)
    assert first.trigger.timeline_width == 4
    h.clock.advance(60)
    second = await h.say(question, user=BOB, config=config)
    assert second.trigger.reason == "ambient_cooldown"
    assert second.outcome is RouteOutcome.SKIP
    h.clock.advance(121)
    third = await h.say(question, user=BOB, config=config)
    assert third.trigger.kind.value == "ambient"
    h.clock.advance(400)  # 581 s after the first: two ambient turns inside 900 s
    fourth = await h.say(question, user=BOB + 1, config=config)
    assert fourth.trigger.reason == "ambient_budget"


async def test_private_chats_have_their_own_scope(h: Harness) -> None:
    first = await h.say("在吗", group=0, config=AT_WAITS)
    assert first.calls_llm
    h.clock.advance(1)
    other = await h.say("在吗", group=0, user=BOB, config=AT_WAITS)
    assert other.calls_llm  # another member's private chat is not in Alice's cooldown
    h.clock.advance(0.5)
    again = await h.say("你在干嘛", group=0, config=AT_WAITS)
    assert again.outcome is RouteOutcome.ACCUMULATE


async def test_deferred_unfinished_sentence_joins_the_next_turn(h: Harness) -> None:
    await h.say("周末去哪玩比较好", at_bot=True)
    await h.bot_answers(ALICE, 970)
    h.clock.advance(10)
    half = await h.say("我觉得吧，")
    assert (half.outcome, half.reason) == (RouteOutcome.DEFER, "incomplete")
    h.clock.advance(5)
    rest = await h.say("还是去海边好一点吧，你觉得呢？")
    assert rest.calls_llm
    assert [a["text"] for a in rest.accumulated] == ["我觉得吧，"]


async def test_two_quick_messages_from_one_member_produce_one_llm_turn(h: Harness) -> None:
    first = await h.say("帮我看看这个报错", at_bot=True, finish=False)
    assert first.calls_llm
    assert await h.engine.in_flight_count(BOT, GROUP) == 1
    h.clock.advance(1)
    second = await h.say("就是那个404的", at_bot=True, finish=False)
    assert (second.outcome, second.stage) == (RouteOutcome.MERGE, "admission")
    assert not second.calls_llm
    noise = await h.say("哈哈哈", finish=False)
    assert noise.outcome is RouteOutcome.SKIP  # the gate still drops noise
    await h.bot_answers(ALICE, 990)
    assert await h.engine.in_flight_count(BOT, GROUP) == 0
    h.clock.advance(5)
    assert (await h.say("那这个呢", at_bot=True)).calls_llm


async def test_in_flight_marker_expires(h: Harness) -> None:
    await h.say("帮我看看这个报错", at_bot=True, finish=False)
    h.clock.advance(121)  # turn_timeout_s: a crashed turn does not block the member forever
    assert (await h.say("还在吗", at_bot=True)).calls_llm


async def test_other_members_are_not_merged(h: Harness) -> None:
    await h.say("帮我看看这个报错", at_bot=True, finish=False)
    h.clock.advance(5)
    other = await h.say("我也想问一个问题", at_bot=True, user=BOB, finish=False)
    assert other.calls_llm
    assert await h.engine.in_flight_count(BOT, GROUP) == 2


async def test_a_redelivered_message_is_routed_once(h: Harness) -> None:
    first = await h.say("你好呀", at_bot=True, message_id=-42)
    assert first.calls_llm
    h.clock.advance(10)
    again = await h.say("你好呀", at_bot=True, message_id=-42)
    assert (again.outcome, again.reason, again.stage) == (RouteOutcome.SKIP, "duplicate", "dedupe")
    records = await h.engine.recent_decisions(BOT, GROUP)
    assert records[-1]["reason"] == "duplicate"
