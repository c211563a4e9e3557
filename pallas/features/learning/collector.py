"""Which account collects a group's learning when several accounts of the deployment share it.

Every account reads the group's lines (each line is stored once, `pallas.core.lines`), so one
account's learning sweep sees them all; two collecting accounts would label every pair twice
and pay twice. `choose_collector` picks one, with a reason:

    configured      `[learning] collector_bot_id` names it (0 / unset: automatic)
    continues       an account already collecting here keeps on (its cursor is where the group
                    was learned up to; the lowest if several did, as before this rule)
    lowest_account  nobody collected yet: the lowest account id that stored lines in the group

It depends on no connection: an account that drops for a minute keeps collecting (its cursor
goes on where it stopped), and every process of a deployment picks the same account. The
reply path reads the group's learning from that same account (`GroupLearningCache`).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

CONFIGURED = "configured"
CONTINUES = "continues"
LOWEST_ACCOUNT = "lowest_account"
NOBODY = "no_account"


@dataclass(frozen=True, slots=True)
class CollectorChoice:
    bot_id: int | None  # None: no account has any line of the group yet
    reason: str


def choose_collector(
    configured: int | None,
    *,
    collecting: Collection[int] = (),
    stored_by: Collection[int] = (),
) -> CollectorChoice:
    """`collecting`: accounts with a learning cursor past 0 in the group; `stored_by`: accounts
    that stored any of its lines."""
    if configured:
        return CollectorChoice(configured, CONFIGURED)
    if collecting:
        return CollectorChoice(min(collecting), CONTINUES)
    if stored_by:
        return CollectorChoice(min(stored_by), LOWEST_ACCOUNT)
    return CollectorChoice(None, NOBODY)


__all__ = ["CollectorChoice", "choose_collector"]
