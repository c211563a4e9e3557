"""The answer claim of a group line shared by two accounts: one answers, the other not."""

from __future__ import annotations

import asyncio
from typing import Any

from pallas.core.accounts import Accounts
from pallas.core.state import MemoryStateStore, StateUnavailableError
from pallas.core.turn import TurnInput
from pallas.turn.parts.accounts import CLAIM_WON, CLAIMED_BY_OTHER, AnswerClaims

A, B, ALICE, GROUP = 900_001, 900_002, 31_001, 62_000_001


def line(account: int, **changes: Any) -> TurnInput:
    fields: dict[str, Any] = {
        "bot_id": account, "group_id": GROUP, "user_id": ALICE, "message_id": 1,
        "time": 1.0, "text": "牛牛在吗", "to_me": True, "line_key": "ab12:1",
    }  # fmt: skip
    fields.update(changes)
    return TurnInput(**fields)


def claims(store: MemoryStateStore | None = None) -> AnswerClaims:
    return AnswerClaims(store or MemoryStateStore(), lambda group_id: {A, B})


async def test_a_shared_line_is_answered_by_the_first_account_to_claim_it_only() -> None:
    c = claims()
    verdicts = await asyncio.gather(c.may_answer(line(A)), c.may_answer(line(B)))
    assert [(v.answers, v.reason) for v in verdicts] == [
        (True, CLAIM_WON),
        (False, CLAIMED_BY_OTHER),
    ]
    # the winner routing the line again (a cooldown retry) still holds it
    assert (await c.may_answer(line(A))).answers is True
    # another line (the same words said again: the next key) is claimed afresh
    assert (await c.may_answer(line(B, line_key="ab12:2"))).answers is True


async def test_a_line_addressed_to_one_account_takes_no_claim() -> None:
    store = MemoryStateStore()
    c = claims(store)
    assert (await c.may_answer(line(B, mentions=(B,)))).answers is True
    assert (await c.may_answer(line(A, mentions=(B,)))).answers is False
    assert await store.keys("answer:") == []


class Unreachable(MemoryStateStore):
    async def set_if_absent(self, key: str, value: Any, *, ttl: float | None = None) -> bool:
        raise StateUnavailableError("redis://test is unreachable")


async def test_an_unreachable_store_lets_every_account_answer_rather_than_none() -> None:
    c = claims(Unreachable())
    assert [(await c.may_answer(line(x))).answers for x in (A, B)] == [True, True]


def test_connected_accounts_follow_connections() -> None:
    accounts = Accounts(lambda: 0.0)
    accounts.connected(A)
    accounts.connected(B)
    accounts.disconnected(A)
    assert accounts.connected_ids() == {B}
    accounts.connected(A)
    assert accounts.connected_ids() == {A, B}
