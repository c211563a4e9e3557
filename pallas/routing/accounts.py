"""Several QQ accounts of one deployment in one group: which of them answers a line.

Every account receives every line and routes it on its own (cooldowns, sessions and reply
context are per account). Before an account speaks (a reply, a PASS phrase) it asks
`answer_verdict`, a pure decision over the line's addressees and the deployment's accounts:

    from_other_bot              the speaker is one of the deployment's bots: never answered
                                (bots would answer each other forever)
    addressed_to_other_account  the line @s or quotes another account and not this one: that
                                account answers, this one stays silent
    addressed_to_me             it @s or quotes this account and no other one: this one answers
    shared                      nobody in particular, or several accounts at once (an alias
                                both answer to, an @ of both, ambient chat): the first account
                                to claim the line (`state_keys.answer_claim`) answers, once

`answers` is None for `shared`: the claim decides. With one account every verdict but
`from_other_bot` lets it answer, and the claim is always won.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

FROM_OTHER_BOT = "from_other_bot"
ADDRESSED_TO_OTHER = "addressed_to_other_account"
ADDRESSED_TO_ME = "addressed_to_me"
SHARED = "shared"


@dataclass(frozen=True, slots=True)
class AnswerVerdict:
    answers: bool | None  # None: the line's claim decides
    reason: str


def answer_verdict(
    bot_id: int,
    user_id: int,
    *,
    mentions: Collection[int],
    reply_to_user_id: int | None,
    deployment_bots: Collection[int],
) -> AnswerVerdict:
    """Whether account `bot_id` answers a line of `user_id` (see the module doc).
    `deployment_bots`: every account of the deployment (connected ones and `other_bot_ids`)."""
    bots = {*deployment_bots, bot_id}
    if user_id in bots:
        return AnswerVerdict(False, FROM_OTHER_BOT)
    addressed = {uid for uid in mentions if uid in bots}
    if reply_to_user_id is not None and reply_to_user_id in bots:
        addressed.add(reply_to_user_id)
    if addressed and bot_id not in addressed:
        return AnswerVerdict(False, ADDRESSED_TO_OTHER)
    if addressed == {bot_id}:
        return AnswerVerdict(True, ADDRESSED_TO_ME)
    return AnswerVerdict(None, SHARED)


__all__ = [
    "ADDRESSED_TO_ME",
    "ADDRESSED_TO_OTHER",
    "FROM_OTHER_BOT",
    "SHARED",
    "AnswerVerdict",
    "answer_verdict",
]
