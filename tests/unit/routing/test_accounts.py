"""Which account of a deployment answers a group line: the pure verdict, table-driven."""

from __future__ import annotations

import pytest

from pallas.routing.accounts import (
    ADDRESSED_TO_ME,
    ADDRESSED_TO_OTHER,
    FROM_OTHER_BOT,
    SHARED,
    answer_verdict,
)

A, B, OTHER_BOT = 900_001, 900_002, 900_009
MEMBER, FRIEND = 31_001, 31_002
BOTS = (A, B, OTHER_BOT)


@pytest.mark.parametrize(
    ("me", "user", "mentions", "quoted", "bots", "answers", "reason"),
    [
        # another account's line (its reply in the group): never answered, even addressed
        (A, B, (), None, BOTS, False, FROM_OTHER_BOT),
        (A, B, (A,), None, BOTS, False, FROM_OTHER_BOT),
        (A, OTHER_BOT, (), None, BOTS, False, FROM_OTHER_BOT),
        (A, A, (), None, (), False, FROM_OTHER_BOT),  # our own line echoed back
        # an @ of B: B answers, A never
        (A, MEMBER, (B,), None, BOTS, False, ADDRESSED_TO_OTHER),
        (B, MEMBER, (B,), None, BOTS, True, ADDRESSED_TO_ME),
        # a quote of B's line: the same
        (A, MEMBER, (), B, BOTS, False, ADDRESSED_TO_OTHER),
        (B, MEMBER, (), B, BOTS, True, ADDRESSED_TO_ME),
        # an @ of a member only, or of nobody: shared (the claim decides)
        (A, MEMBER, (FRIEND,), None, BOTS, None, SHARED),
        (A, MEMBER, (), None, BOTS, None, SHARED),
        (A, MEMBER, (), FRIEND, BOTS, None, SHARED),
        # both accounts addressed (an @ of each, an @ of one and a quote of the other): shared
        (A, MEMBER, (A, B), None, BOTS, None, SHARED),
        (B, MEMBER, (A,), B, BOTS, None, SHARED),
        # one account, no other bot: an @ of it is its own; an @ of a member is not "other"
        (A, MEMBER, (A,), None, (), True, ADDRESSED_TO_ME),
        (A, MEMBER, (FRIEND,), None, (), None, SHARED),
    ],
)
def test_answer_verdict(
    me: int,
    user: int,
    mentions: tuple[int, ...],
    quoted: int | None,
    bots: tuple[int, ...],
    answers: bool | None,
    reason: str,
) -> None:
    verdict = answer_verdict(
        me, user, mentions=mentions, reply_to_user_id=quoted, deployment_bots=bots
    )
    assert (verdict.answers, verdict.reason) == (answers, reason)
