"""SillyTavern-export books (every field ST writes; self-written content, one in Chinese) load
and activate over a short scripted chat as SillyTavern would with its shipped settings (scan
depth 2, recursion on, whole words on), apart from the differences docs/configuration.md lists."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from pallas.features.worldbook.activation import activate_worldbook
from pallas.features.worldbook.loader import load_worldbook_file
from pallas.features.worldbook.model import WorldbookConfig, WorldbookState

FIXTURES = Path(__file__).parent / "fixtures"
ST_SHIPPED = WorldbookConfig(scan_depth=2, recursion=True, budget_cap_tokens=0)


def replay(book: str, chat: list[str], evaluate_at: list[int]):
    """Run the activation at each chat length in `evaluate_at` (a member just spoke)."""
    loaded = load_worldbook_file(FIXTURES / f"{book}.json")
    assert loaded.errors == () and loaded.format == "st_world_info"
    state = WorldbookState()
    out = {}
    for length in evaluate_at:
        result = activate_worldbook(
            loaded.entries,
            chat[:length],
            state,
            turn_index=length,
            rng=random.Random(length),
            config=ST_SHIPPED,
            count_tokens=len,
            context_tokens=8000,
            chat_length=length,
            message_index=length,
        )
        state = result.state
        out[length] = result
    return out


TEAHOUSE_CHAT = [
    "掌柜，今天有什么茶？",  # 1 member
    "有明前龙井，新茶刚到。",  # 2 bot
    "来一壶龙井，配桂花糕",  # 3
    "好嘞",  # 4
    "晚上有说书吗",  # 5
    "有的",  # 6
    "几点打烊？",  # 7
    "亥时",  # 8
    "说书还有吗，桂花糕呢",  # 9
    "有",  # 10
    "点心有哪些",  # 11
]


def uids(result) -> list[int]:
    return sorted(a.entry.uid for a in result.activated)


def test_cjk_book_scripted_chat() -> None:
    runs = replay("st_teahouse", TEAHOUSE_CHAT, [1, 3, 5, 7, 9, 11])
    assert uids(runs[1]) == [0, 4]  # 掌柜 (before char) + the constant rule
    assert runs[1].activated[0].position.value in ("before_persona", "after_persona")
    assert {a.entry.uid: a.position.value for a in runs[1].activated}[0] == "before_persona"
    assert uids(runs[3]) == [1, 4], "龙井 with its secondary key 明前 in the scanned window"
    assert runs[3].skip_reason("st_teahouse.5") == "delay", "桂花糕: chat shorter than 6"
    assert uids(runs[5]) == [2, 4, 8], "说书, and 三国 by recursion from its content"
    assert {a.entry.uid: a.reason for a in runs[7].activated}[2] == "sticky"
    depth = {a.entry.uid: a for a in runs[7].activated}[3]
    assert (depth.position.value, depth.entry.depth, depth.entry.role) == ("at_depth", 0, "user")
    assert uids(runs[9]) == [4, 5], "桂花糕 after 6 messages"
    assert runs[9].skip_reason("st_teahouse.2") == "cooldown", "sticky over at 8: cooldown"
    assert uids(runs[11]) == [4, 6], "inclusion group 点心: the override member wins"
    assert runs[11].skip_reason("st_teahouse.7") == "group_lost"


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("Any tea left?", [0]),
        ("Nice teapot", []),  # whole words: "tea" is not in "teapot"
        ("The SHIPS are in", [1]),  # /ship(s)?/i regex key
        ("is captain reed here", []),  # case-sensitive key
        ("Captain Reed arrived", [2]),
    ],
)
def test_latin_book_keys(message: str, expected: list[int]) -> None:
    result = replay("st_harbor", [message], [1])[1]
    assert uids(result) == expected


def test_latin_book_depth_entry_keeps_role_and_depth() -> None:
    result = replay("st_harbor", ["Captain Reed arrived"], [1])[1]
    entry = result.activated[0].entry
    assert (entry.position.value, entry.depth, entry.role) == ("at_depth", 2, "assistant")
    assert "{{char}}" in load_worldbook_file(FIXTURES / "st_harbor.json").entries[0].content
