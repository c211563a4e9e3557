""" "你记得我什么" by pages: every live fact of the member can be seen, eight at a time.

"你记得我什么" shows the first page with a page indicator ("第1/3页"); "你记得我什么 2" (or "第2页")
a given page; "下一页" / "上一页" step from the page last shown to that member, remembered in the
shared state for `PAGE_TTL_S` (a "下一页" long after, or never preceded by a listing, is left to
the chat). Only the speaker's own facts in this group are listed (`recall.own_facts`).
"""

from __future__ import annotations

from collections.abc import Sequence

from pallas.core import state_keys
from pallas.features.memory import MemoryService
from pallas.features.memory_prompt import (
    MAX_LISTED_FACTS,
    RECALL_HEADER,
    own_facts,
    second_person,
)

PAGE_SIZE = 8
PAGE_TTL_S = 600.0


REPLY_NOTHING_KNOWN = "我还没记住关于你的事哦，可以跟我说“记住 …”"
REPLY_NO_SUCH_PAGE = "只有 {pages} 页哦，说“你记得我什么 {pages}”看最后一页"


def page_count(total: int) -> int:
    return max(1, -(-total // PAGE_SIZE))


def page_reply(facts: Sequence[str], page: int) -> str:
    """The reply listing page `page` (1-based) of `facts` (stored form, "TA…"), pure."""
    if not facts:
        return REPLY_NOTHING_KNOWN
    pages = page_count(len(facts))
    if not 1 <= page <= pages:
        return REPLY_NO_SUCH_PAGE.format(pages=pages)
    shown = facts[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
    lines = [f"· {second_person(text)}" for text in shown]
    if pages == 1:
        return "\n".join([RECALL_HEADER, *lines])
    more = "说“下一页”看后面的" if page < pages else "这是最后一页啦"
    hint = f"（第{page}/{pages}页，共 {len(facts)} 条；{more}）"
    return "\n".join([RECALL_HEADER, *lines, hint])


async def recall_page(service: MemoryService, user_id: int, scope: str, page: int) -> str:
    """Page `page` (0 or 1: the first) of what is stored about `user_id` in `scope`."""
    facts = [i.text for i in await own_facts(service, user_id, scope, MAX_LISTED_FACTS)]
    page = max(page, 1)
    if facts and page <= page_count(len(facts)):
        await service.state.set(state_keys.memory_recall_page(scope, user_id), page,
                                ttl=PAGE_TTL_S)  # fmt: skip
    return page_reply(facts, page)


async def step_page(service: MemoryService, user_id: int, scope: str, step: int) -> str | None:
    """ "下一页" / "上一页" after a listing; None when there was no recent listing."""
    shown = await service.state.get(state_keys.memory_recall_page(scope, user_id))
    if not isinstance(shown, int):
        return None
    facts = [i.text for i in await own_facts(service, user_id, scope, MAX_LISTED_FACTS)]
    page = min(max(shown + step, 1), page_count(len(facts)))
    await service.state.set(state_keys.memory_recall_page(scope, user_id), page, ttl=PAGE_TTL_S)
    return page_reply(facts, page)
