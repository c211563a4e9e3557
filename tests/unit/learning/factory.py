"""Builders for learning tests: StoredMessage rows and ReplyPair values."""

from __future__ import annotations

from pallas.core.records import StoredMessage
from pallas.features.learning.pairs import LearningType, PairKind, ReplyPair

BOT = 10_000
GROUP = 555
OTHER_GROUP = 777
T0 = 1_760_000_000.0


def msg(
    message_id: int,
    user_id: int,
    text: str,
    t: float,
    *,
    reply_to: int | None = None,
    is_bot: bool = False,
    row_id: int | None = None,
    group_id: int = GROUP,
    bot_id: int = BOT,
    role: str = "member",
) -> StoredMessage:
    return StoredMessage(
        bot_id=bot_id,
        group_id=group_id,
        message_id=message_id,
        user_id=user_id,
        time=T0 + t,
        text=text,
        reply_to=reply_to,
        is_bot=is_bot,
        row_id=message_id if row_id is None else row_id,
        role=role,
    )


def pair(
    trigger: str,
    response: str,
    *,
    trigger_id: int = 1,
    response_id: int = 2,
    group_id: int = GROUP,
    bot_id: int = BOT,
    learning_type: LearningType = LearningType.OBSERVED,
    t: float = 0.0,
    kind: PairKind = PairKind.ADJACENT,
) -> ReplyPair:
    return ReplyPair(
        trigger_id=trigger_id,
        response_id=response_id,
        trigger_text=trigger,
        response_text=response,
        kind=kind,
        trigger_user=1,
        response_user=2,
        time=T0 + t,
        learning_type=learning_type,
        bot_id=bot_id,
        group_id=group_id,
        response_row_id=response_id,
    )
