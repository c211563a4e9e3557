"""Which account of the deployment answers a group line (`pallas.routing.accounts`).

`AnswerClaims.may_answer` runs after routing decided to speak (a reply or a PASS phrase): the
pure verdict first (another bot's line, a line addressed to another account, one addressed to
this account only), and for a line several accounts may answer the line's claim in the
StateStore (`state_keys.answer_claim`, one atomic `set_if_absent` per line, held across
accounts and, on Redis, across processes). The claim fails open: with the store unreachable
every account answers rather than none.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

from pallas.core import state_keys
from pallas.core.state import StateStore, claim
from pallas.core.turn import TurnInput
from pallas.routing.accounts import SHARED, AnswerVerdict, answer_verdict

CLAIM_WON = "claim_won"
CLAIMED_BY_OTHER = "claimed_by_other_account"


@dataclass
class AnswerClaims:
    state: StateStore
    # every account of the deployment a group's lines may come from or be addressed to: the
    # connected accounts and the group's `other_bot_ids`
    deployment_bots: Callable[[int], Collection[int]]

    def verdict(self, turn: TurnInput) -> AnswerVerdict:
        return answer_verdict(
            turn.bot_id,
            turn.user_id,
            mentions=turn.mentions,
            reply_to_user_id=turn.reply_to_user_id,
            deployment_bots=self.deployment_bots(turn.group_id),
        )

    async def may_answer(self, turn: TurnInput) -> AnswerVerdict:
        """The verdict, with a shared line's claim taken (private chats: always answered)."""
        if turn.is_private:
            return AnswerVerdict(True, "private")
        verdict = self.verdict(turn)
        if verdict.answers is not None:
            return verdict
        if not turn.line_key:  # not numbered at read (the stock adapter): nothing to share
            return AnswerVerdict(True, SHARED)
        key = state_keys.answer_claim(turn.group_id, turn.line_key)
        won = await claim(
            self.state, key, turn.bot_id, ttl=state_keys.ANSWER_CLAIM_TTL_S, when_unavailable=True
        )
        if not won:  # this account's own earlier claim (a line routed again) still holds
            won = await self.state.get(key) == turn.bot_id
        return AnswerVerdict(won, CLAIM_WON if won else CLAIMED_BY_OTHER)


def no_other_bots(group_id: int) -> Collection[int]:
    return ()


__all__ = ["CLAIMED_BY_OTHER", "CLAIM_WON", "AnswerClaims", "no_other_bots"]
