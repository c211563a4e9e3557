"""The console's members' lines of a group today, when two accounts each stored some."""

from __future__ import annotations

from pallas.web.queries import MessageCounts, members_today

A, B, GROUP, OTHER = 900_001, 900_002, 62_000_001, 62_000_002


def test_a_shared_groups_members_lines_are_counted_over_its_accounts() -> None:
    counts = {
        (A, GROUP): MessageCounts(messages=10, bot_messages=3),  # A stored 7 member lines
        (B, GROUP): MessageCounts(messages=6, bot_messages=2),  # B stored the other 4
        (A, OTHER): MessageCounts(messages=5, bot_messages=0),
    }
    assert members_today(counts, GROUP) == 11
    assert members_today(counts, OTHER) == 5
    assert members_today(counts, 1) == 0
