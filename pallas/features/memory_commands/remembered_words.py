"""The words of a remembered text that make a later line about them the bot's business.

Routing lets the bot speak up unaddressed only with a stake; what it remembers is one: a member
it knows is learning Japanese ("TA在学日语") who says "日语的敬语好难" is talking about something
the bot knows about them. `stake_words(text)` picks the naming words of a memory row, a
knowledge heading or a remembered topic: nouns, place and proper names, set phrases and Latin
words of two or more characters (jieba's dictionary tags, no HMM) and the dictionary words inside
a longer one ("学法语" → "法语"), minus a short list of words too common to name anything (时候,
事情, 大家 …). Deterministic, cached, microseconds a text once
jieba is loaded.
"""

from __future__ import annotations

import re
from functools import lru_cache

from pallas.ranking import warm_up

# jieba tags that name things: nouns (n, nr person, ns place, nt organisation, nz other proper,
# nrt, nrfg), verbal nouns (vn), idioms and set phrases (i: "平面设计") and Latin words (eng);
# not time words (t: 周五, 晚上) nor habitual phrases (l: 每周五)
_NAMING_TAGS = ("n", "i", "vn", "eng")
MAX_WORDS_PER_TEXT = 8
_SENTENCE_MARKS = re.compile(r"[，。！？；,.!?;]")
# too common to be about anything in particular: a stake on them would be a stake on everything
_COMMON = frozenset({
    "时候", "事情", "东西", "问题", "大家", "朋友", "今天", "明天", "昨天", "时间",
    "地方", "样子", "感觉", "人家", "别人", "自己", "我们", "他们", "一下", "一点",
    "有点", "最近", "现在", "以后", "之前", "情况", "方面", "意思", "办法", "数字",
    "消息", "群里", "群友", "群主", "管理", "用户", "ta", "bot",
})  # fmt: skip


def _pairs(text: str) -> list[tuple[str, str]]:
    warm_up()
    import jieba.posseg as pseg  # after warm_up: the dictionary it shares is loaded

    return [(p.word, p.flag) for p in pseg.cut(text, HMM=False)]


@lru_cache(maxsize=8192)
def stake_words(text: str) -> frozenset[str]:
    """Up to `MAX_WORDS_PER_TEXT` naming words of `text`, lower-cased, in order of appearance."""
    words: list[str] = []
    for word, flag in _pairs(text):
        lowered = word.strip().lower()
        if len(lowered) < 2 or lowered in _COMMON or lowered in words:
            continue
        if not flag.startswith(_NAMING_TAGS):
            continue
        if flag == "eng" and (len(lowered) < 3 or lowered.isdigit()):
            continue
        words.append(lowered)
        # "学法语" / "海淀区": jieba keeps some phrases whole; their dictionary words name too
        words += [w for w in _inner_words(lowered) if w not in words and w not in _COMMON]
        if len(words) >= MAX_WORDS_PER_TEXT:
            break
    return frozenset(words[:MAX_WORDS_PER_TEXT])


def _inner_words(word: str) -> list[str]:
    if len(word) < 3 or word.isascii():
        return []
    import jieba
    import jieba.posseg as pseg

    tags: dict[str, str] = pseg.dt.word_tag_tab
    return [
        w
        for w in jieba.lcut_for_search(word, HMM=False)
        if 2 <= len(w) < len(word) and tags.get(w, "x").startswith(_NAMING_TAGS)
    ]


def heading_of(knowledge_text: str, *, max_chars: int = 24) -> str:
    """The heading an imported knowledge chunk starts with ("源石病：…" → "源石病"), or ''."""
    head, sep, _ = knowledge_text.partition("：")
    head = head.strip()
    if not sep or not 0 < len(head) <= max_chars or _SENTENCE_MARKS.search(head):
        return ""  # a sentence with a colon in it, not a heading
    return head
