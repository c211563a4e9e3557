"""Fetch the rows a REPLY turn needs and freeze them into a `ChatTurnContext`.

All row reads of the reply path happen here (timeline rows, the user's session, the group's
recent session turns, the quoted bot line) — served by the warm caches kept at ingest
(`pallas.core.db.message_cache`, `session_cache`), the DB only on a cold group or a quote
outside the window; the processors stay pure.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from pallas.config import GroupConfig
from pallas.context.chat_prompt import ReplyShapeSpec, ReplyShapeView, TurnPolicy
from pallas.context.context import ChatContextBundle
from pallas.context.group_timeline import ANCHOR_SPAN
from pallas.context.processor_inputs import ChatTurnContext
from pallas.context.recognition_question import is_recognition_question
from pallas.context.rules_config import TurnRules
from pallas.core.eager import eager_gather
from pallas.core.records import SessionTurn, StoredMessage
from pallas.core.state import StateStore
from pallas.core.turn import TurnInput
from pallas.features.learning import decide_reply_shape
from pallas.features.persona import PersonaPack
from pallas.features.tools import ToolTurnContext
from pallas.providers.models import ModelProfile
from pallas.routing.evaluate import RouteResult
from pallas.routing.text_signals import SocialAction
from pallas.turn.parts.bot_reply_context import lookup_bot_reply

_POLICY_ACTIONS = {
    SocialAction.GREETING: "greeting",
    SocialAction.NICKNAME: "nickname",
    SocialAction.TEASING: "tease",
    SocialAction.VENTING: "sigh",
    SocialAction.THANKS: "thanks",
}
_SERIOUS_TERMS = ("question", "request")


class RecentMessages(Protocol):
    """`MessageRepository` or its warm cache (`pallas.core.db.message_cache`)."""

    async def recent(self, bot_id: int, group_id: int, *, limit: int) -> list[StoredMessage]: ...

    async def find_by_message_ids(
        self, bot_id: int, group_id: int, message_ids: Sequence[int]
    ) -> dict[int, StoredMessage]: ...


class SessionWindows(Protocol):
    """`ChatSessionRepository` or its warm cache (`pallas.core.db.session_cache`)."""

    async def recent_for_user(
        self, bot_id: int, group_id: int, user_id: int, *, limit: int
    ) -> list[SessionTurn]: ...

    async def latest_summary(
        self, bot_id: int, group_id: int, user_id: int
    ) -> SessionTurn | None: ...

    async def recent_for_group(
        self, bot_id: int, group_id: int, *, limit: int, exclude_user_id: int | None = None
    ) -> list[SessionTurn]: ...


@dataclass(frozen=True, slots=True)
class TurnRows:
    timeline: tuple[StoredMessage, ...]  # up to ANCHOR_SPAN × width rows (cache layout)
    user_turns: tuple[SessionTurn, ...]
    group_turns: tuple[SessionTurn, ...]
    quoted_bot_text: str | None


async def fetch_turn_rows(
    turn: TurnInput,
    *,
    timeline_width: int,
    config: GroupConfig,
    messages: RecentMessages,
    sessions: SessionWindows,
    state: StateStore,
) -> TurnRows:
    # the cache-aware layout's timeline may reach back further (`anchored_window`)
    if config.context.prompt_layout == "cache":
        timeline_width *= ANCHOR_SPAN
    # Independent reads: run them concurrently (SQLite WAL serves readers in parallel).
    recent, user_turns, summary, group_turns, quoted = await eager_gather(
        messages.recent(turn.bot_id, turn.group_id, limit=timeline_width + 1)
        if timeline_width > 0
        else _nothing(),
        sessions.recent_for_user(
            turn.bot_id, turn.group_id, turn.user_id, limit=config.context.session_user_window
        ),
        sessions.latest_summary(turn.bot_id, turn.group_id, turn.user_id),
        _nothing_session()  # group 0 holds every private chat: never another user's turns
        if turn.is_private
        else sessions.recent_for_group(
            turn.bot_id,
            turn.group_id,
            limit=config.context.session_group_window,
            exclude_user_id=turn.user_id,
        ),
        _quoted_bot_text(turn, messages, state),
    )
    timeline = [m for m in recent if m.message_id != turn.message_id][-timeline_width:]
    if summary is not None and not any(t.is_summary for t in user_turns):
        user_turns = [summary, *user_turns]
    return TurnRows(
        timeline=tuple(timeline) if timeline_width > 0 else (),
        user_turns=tuple(user_turns),
        group_turns=tuple(group_turns),
        quoted_bot_text=quoted,
    )


async def _nothing() -> list[StoredMessage]:
    return []


async def _nothing_session() -> list[SessionTurn]:
    return []


async def _quoted_bot_text(
    turn: TurnInput, messages: RecentMessages, state: StateStore
) -> str | None:
    """The bot line a member quotes: the in-memory reply context first, then the store."""
    if turn.reply_to is None:
        return None
    text = await lookup_bot_reply(state, turn.bot_id, turn.group_id, turn.reply_to)
    if text is not None:
        return text
    rows = await messages.find_by_message_ids(turn.bot_id, turn.group_id, [turn.reply_to])
    row = rows.get(turn.reply_to)
    return row.text if row is not None and row.persona_line else None


def is_casual_turn(route: RouteResult) -> bool:
    decision = route.decision
    if decision is not None and decision.social_action is not SocialAction.NONE:
        return True
    terms = {t.name for t in route.necessity.terms} if route.necessity else set()
    return not terms.intersection(_SERIOUS_TERMS)


def turn_policy(turn: TurnInput, route: RouteResult) -> TurnPolicy:
    social = route.decision.social_action if route.decision else SocialAction.NONE
    return TurnPolicy(
        reply_target=turn.speaker.display_name,
        seriousness="casual" if is_casual_turn(route) else "serious",
        social_action=_POLICY_ACTIONS.get(social),
    )


def timeline_mode(width: int, addressed: bool) -> str:
    if width <= 0:
        return "none"
    return "addressed" if addressed else "ambient"


def build_chat_turn_context(
    turn: TurnInput,
    route: RouteResult,
    *,
    current_text: str,
    rows: TurnRows,
    bundle: ChatContextBundle,
    config: GroupConfig,
    persona: PersonaPack,
    profile: ModelProfile,
    bot_nickname: str,
    now: float,
    other_bots: Collection[int] = (),
    tool: ToolTurnContext | None = None,
    tool_turn: bool = False,
    rules: TurnRules | None = None,
) -> ChatTurnContext:
    decision = route.decision
    short_social = decision is not None and not decision.allow_persistent_memory
    shape: ReplyShapeView
    if tool_turn:  # a tool answer carries a result: its own shape, not the group's rhythm
        shape = decide_reply_shape(None, casual=False, tool=True)
    else:
        shape = bundle.reply_shape or decide_reply_shape(None, casual=is_casual_turn(route))
    return ChatTurnContext(
        bot_id=turn.bot_id,
        group_id=turn.group_id,
        user_id=turn.user_id,
        now=datetime.fromtimestamp(now, UTC),
        current_text=current_text,
        config=config.context,
        message_id=turn.message_id,
        persona_name=persona.name,
        persona_text=persona.sections.base,
        self_identity_text=persona.sections.self_identity,
        bot_nickname=bot_nickname,
        bot_label=persona.bot_label,
        other_bot_label=persona.other_bot_label,
        assistant_label=persona.assistant_label,
        turn_policy=turn_policy(turn, route),
        reply_shape=ReplyShapeSpec.from_policy(shape),
        allow_sticker=config.chat.allow_sticker,
        timeline_mode=timeline_mode(len(rows.timeline), route.trigger.addressed),
        timeline_messages=rows.timeline,
        # the group's other bots: configured, and the deployment's other accounts
        other_bot_ids=tuple(sorted({*config.other_bot_ids, *other_bots} - {turn.bot_id})),
        quoted_bot_text=rows.quoted_bot_text,
        vision_enabled=profile.supports_images,
        # "这是谁 / 啥梗" about the member's own (or quoted) image: no timeline images
        recognition_question=bool(turn.image_urls or turn.reply_to is not None)
        and is_recognition_question(current_text),
        user_turns=rows.user_turns,
        group_turns=rows.group_turns,
        short_social=short_social,
        include_recent_pair=bool(decision and decision.include_recent_pair),
        feedback_blocklist=bundle.feedback_blocklist,
        blocks=bundle.blocks,
        tool_results=tool.results if tool else (),
        tool_rules=tool.rules if tool else (),
        token_budget=max(profile.context_window - profile.reserved_output, 256),
        rules=rules,
    )
