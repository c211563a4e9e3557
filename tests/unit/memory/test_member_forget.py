"""Which fact "忘掉我<某件事>" means, and how "你记得我什么" pages (pure parts, issue 47)."""

from __future__ import annotations

import pytest

from pallas.features.memory.records import MemoryItem
from pallas.features.memory_commands.member_forget import pick_fact
from pallas.features.memory_commands.recall_pages import PAGE_SIZE, page_reply


def _item(item_id: int, text: str) -> MemoryItem:
    return MemoryItem(item_id, 1, "group:1:2", "person_facts", f"k{item_id}", text, "teach", 0, 0)


FACTS = [_item(1, "TA的血型是O型"), _item(2, "TA在腾讯上班"), _item(3, "TA的猫叫咪咪"),
         _item(4, "TA的狗叫旺财"), _item(5, "TA周末喜欢去爬山")]  # fmt: skip


@pytest.mark.parametrize(
    ("what", "cosines", "picked", "ties"),
    [
        ("血型", None, 1, ()),  # the words
        ("工作", None, 2, ()),  # the concept table: 上班 is a job
        ("爬山的事", None, 5, ()),
        ("工作", [0.1, 0.6, 0.1, 0.1, 0.2], 2, ()),  # the encoder
        ("宠物名字", [0.1, 0.1, 0.5, 0.5, 0.1], None, (3, 4)),  # two alike: ask which
        ("星座", [0.1, 0.1, 0.1, 0.1, 0.2], None, ()),  # nothing meant
        ("星座", None, None, ()),
    ],
)
def test_pick_fact(
    what: str, cosines: list[float] | None, picked: int | None, ties: tuple[int, ...]
) -> None:
    pick = pick_fact(what, FACTS, cosines)
    assert (pick.item.id if pick.item else None, tuple(i.id for i in pick.ties)) == (picked, ties)


def test_page_reply_shows_every_fact_across_pages() -> None:
    facts = [f"TA去过城市{n}" for n in range(20)]
    pages = [page_reply(facts, p) for p in (1, 2, 3)]
    assert [p.count("· ") for p in pages] == [PAGE_SIZE, PAGE_SIZE, 4]
    assert all(f"去过城市{n}" in "".join(pages) for n in range(20))
    assert pages[0].endswith("（第1/3页，共 20 条；说“下一页”看后面的）")
    assert pages[2].endswith("（第3/3页，共 20 条；这是最后一页啦）")
    assert page_reply(facts, 4) == "只有 3 页哦，说“你记得我什么 3”看最后一页"
    assert page_reply(facts[:3], 1) == "我记得你：\n· 去过城市0\n· 去过城市1\n· 去过城市2"
    assert page_reply([], 1) == "我还没记住关于你的事哦，可以跟我说“记住 …”"
