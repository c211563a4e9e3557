"""decide_current_turn_by_rule: what to do with a turn that got through the gates (zero LLM).

Rules, in order:
1. TOOL — the turn asks for a tool (`tool_requested`, decided by the tool selector) and the
   member may use it (`tool_permitted`); the turn must be addressed or have passed necessity.
2. Addressed turns are always answered, never PASS:
   - nothing typed (bare "@bot", only the name, "@bot ？？") → FOLLOW_UP ("怎么啦？"),
     social `nickname`; a sticker with the @ gets a short REPLY (`ack`); an image gets a REPLY.
   - an unfinished sentence ("@bot 我觉得", "牛牛，然后") → FOLLOW_UP asking for the rest.
   - otherwise REPLY (or QUOTE, below).
3. Turns not addressed (follow-up window, alias mention, ambient):
   - a short social move (greeting, thanks, teasing, venting, ack) → PASS;
   - necessity below threshold → PASS;
   - otherwise REPLY / QUOTE.
4. REPLY becomes QUOTE (delivery QUOTE, `reply_message_id`, reason `rule_reply_quote`) when the
   precomputed `QuoteDecision` says so (`reply_targets.decide_quote`).

Short social turns (any social action other than `none`) set `allow_persistent_memory=False`;
when the bot answered the same member within the follow-up window they also set
`include_recent_pair=True` (keep that member's full bounded session window).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from pallas.routing.config import ShortSocialConfig
from pallas.routing.reply_targets import QuoteDecision
from pallas.routing.text_signals import (
    SocialAction,
    classify_social_action,
    is_incomplete,
    meaningful_length,
)
from pallas.routing.triggers import TriggerKind


class CurrentTurnAction(StrEnum):
    REPLY = "REPLY"
    TOOL = "TOOL"
    FOLLOW_UP = "FOLLOW_UP"
    QUOTE = "QUOTE"
    PASS = "PASS"


LLM_ACTIONS = frozenset(
    {
        CurrentTurnAction.REPLY,
        CurrentTurnAction.TOOL,
        CurrentTurnAction.FOLLOW_UP,
        CurrentTurnAction.QUOTE,
    }
)


class DeliveryStyle(StrEnum):
    PLAIN = "PLAIN"
    QUOTE = "QUOTE"


@dataclass(frozen=True, slots=True)
class CurrentTurnDecisionInput:
    text: str  # content text: vocative alias / @bot / reply marker removed
    addressed: bool = False
    trigger: TriggerKind = TriggerKind.NONE
    timeline_width: int = 0
    necessity_passed: bool = True
    has_image: bool = False
    has_sticker: bool = False
    reply_to_message_id: int | None = None
    quote: QuoteDecision | None = None
    tool_requested: bool = False
    tool_permitted: bool = False
    bot_recently_replied_to_user: bool = False  # within the follow-up window


@dataclass(frozen=True, slots=True)
class CurrentTurnDecision:
    action: CurrentTurnAction
    social_action: SocialAction
    delivery_style: DeliveryStyle
    reason: str
    source: str = "rule"
    reply_message_id: int | None = None
    allow_persistent_memory: bool = True
    include_recent_pair: bool = False
    timeline_width: int = 0
    quote_reason: str | None = None  # why a quoted target did (not) become a QUOTE

    @property
    def calls_llm(self) -> bool:
        return self.action in LLM_ACTIONS


def _finish(
    inp: CurrentTurnDecisionInput,
    action: CurrentTurnAction,
    social: SocialAction,
    reason: str,
) -> CurrentTurnDecision:
    short_social = social is not SocialAction.NONE
    quoting = action is CurrentTurnAction.QUOTE
    return CurrentTurnDecision(
        action=action,
        social_action=social,
        delivery_style=DeliveryStyle.QUOTE if quoting else DeliveryStyle.PLAIN,
        reason=reason,
        reply_message_id=inp.quote.reply_message_id if quoting and inp.quote else None,
        allow_persistent_memory=not short_social and action is not CurrentTurnAction.PASS,
        include_recent_pair=(
            short_social and inp.bot_recently_replied_to_user and action in LLM_ACTIONS
        ),
        timeline_width=inp.timeline_width,
        quote_reason=inp.quote.reason if inp.quote else None,
    )


def _reply(inp: CurrentTurnDecisionInput, social: SocialAction) -> CurrentTurnDecision:
    if inp.quote is not None and inp.quote.quote:
        return _finish(inp, CurrentTurnAction.QUOTE, social, "rule_reply_quote")
    if inp.tool_requested and not inp.tool_permitted:
        reason = "rule_reply_tool_not_permitted"
    elif social is not SocialAction.NONE:
        reason = "rule_reply_short_social"
    else:
        reason = "rule_reply"
    return _finish(inp, CurrentTurnAction.REPLY, social, reason)


def _addressed(inp: CurrentTurnDecisionInput, social: SocialAction) -> CurrentTurnDecision:
    if meaningful_length(inp.text) == 0 and not inp.has_image:
        if inp.has_sticker:
            return _reply(inp, SocialAction.ACK)
        return _finish(
            inp, CurrentTurnAction.FOLLOW_UP, SocialAction.NICKNAME, "rule_follow_up_bare_address"
        )
    if is_incomplete(inp.text):
        return _finish(inp, CurrentTurnAction.FOLLOW_UP, social, "rule_follow_up_incomplete")
    return _reply(inp, social)


def decide_current_turn_by_rule(
    inp: CurrentTurnDecisionInput, config: ShortSocialConfig | None = None
) -> CurrentTurnDecision:
    cfg = config or ShortSocialConfig()
    social = classify_social_action(
        inp.text, max_chars=cfg.max_chars, venting_max_chars=cfg.venting_max_chars
    )
    if inp.tool_requested and inp.tool_permitted and (inp.addressed or inp.necessity_passed):
        return _finish(inp, CurrentTurnAction.TOOL, SocialAction.NONE, "rule_tool")
    if inp.addressed:
        return _addressed(inp, social)
    if social is not SocialAction.NONE:
        return _finish(inp, CurrentTurnAction.PASS, social, "rule_pass_short_social")
    if not inp.necessity_passed:
        return _finish(inp, CurrentTurnAction.PASS, social, "rule_pass_low_necessity")
    return _reply(inp, social)
