"""The cache-aware layout sends the same sections as the spec layout, in cacheable order."""

from __future__ import annotations

import re
from typing import Any

import pytest

from pallas.context.cache_layout import in_head, is_stable_section
from pallas.context.config import ContextConfig
from pallas.turn.parts.chat_pipeline import assemble_chat_request
from tests.unit.context.test_processors import make_ctx

HEADER = re.compile(r"^【([^】]+)】", re.M)


def _ctx(layout: str) -> Any:
    return make_ctx(config=ContextConfig(prompt_layout=layout))  # type: ignore[arg-type]


def _text(messages: Any) -> str:
    return "\n".join(str(m["content"]) for m in messages)


async def test_no_section_is_lost_and_none_is_doubled() -> None:
    spec = await assemble_chat_request(_ctx("spec"))
    cache = await assemble_chat_request(_ctx("cache"))
    assert spec.section_ids == cache.section_ids
    for section in cache.draft.sections:
        assert _text(cache.messages).count(section.text) == 1, section.section_id
    assert sorted(HEADER.findall(_text(spec.messages))) == sorted(
        HEADER.findall(_text(cache.messages))
    )


async def test_stable_head_then_history_then_this_turn() -> None:
    request = await assemble_chat_request(_ctx("cache"))
    messages = list(request.messages)
    head = messages[0]
    assert head["role"] == "system"
    assert head["content"].startswith(request.draft.sections[0].text)  # the guard first
    for section in request.draft.sections:
        assert (section.text in head["content"]) == in_head(section.section_id)
    assert head["content"].endswith(request.draft.get_section("group_timeline").text)
    late = [i for i, m in enumerate(messages) if m["role"] == "system" and i > 0]
    assert len(late) == 1
    history = messages[1 : late[0]]
    assert [m["content"] for m in history][-1].endswith("嗯嗯记得")  # the member's own rows
    assert "牛牛你觉得呢" in str(messages[-1]["content"])  # the current message is last
    assert "【当前时间】" in messages[late[0]]["content"]
    trace = request.draft.meta["trace.formatter"]
    assert trace["prefix_messages"] == late[0] and trace["layout"] == "cache"


async def test_the_next_turn_of_anyone_repeats_this_head() -> None:
    one = await assemble_chat_request(_ctx("cache"))
    other = await assemble_chat_request(  # another member, one message later
        make_ctx(config=ContextConfig(), user_id=8, current_text="另一个人的问题", message_id=6)
    )
    head, next_head = one.messages[0]["content"], other.messages[0]["content"]
    assert next_head.startswith(head) and next_head.endswith("小红：牛牛你觉得呢")
    spec = await assemble_chat_request(_ctx("spec"))
    assert spec.messages[0]["content"] != one.messages[0]["content"]  # spec: timeline inside


@pytest.mark.parametrize(
    ("section_id", "stable"),
    [
        ("guard", True),
        ("persona", True),
        ("self_identity", True),
        ("persona@after:worldbook", True),  # constant worldbook entries
        ("persona@after:worldbook_keyed", False),  # entries activated by this turn's words
        ("group_timeline", False),  # in the head, but append-only rather than stable
        ("reply_shape", True),
        ("current_time", False),
        ("memory@before:injection", False),
        ("plugin_section", False),
    ],
)
def test_which_sections_are_stable(section_id: str, stable: bool) -> None:
    assert is_stable_section(section_id) is stable
