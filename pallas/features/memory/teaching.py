"""Member memory commands, detected from what a member says to the bot (pure).

    @帕拉斯 记住 我喜欢猫        teach: a fact about the speaker ("TA喜欢猫"), subject = speaker
    帕拉斯，记住：叫我小明就行     teach
    @帕拉斯 忘记我 / 忘掉关于我的事 / 把我忘了吧     forget: drop what the bot knows about them
    @帕拉斯 你记得我什么 / 你都知道我哪些事          recall: list what is stored about them

Only messages addressed to the bot are considered (the plugin checks `to_me`). A teaching must
be about the speaker (first person): members cannot plant facts about others or about the
group — that is what admin commands are for. Questions ("记住我喜欢什么了吗？") are not
commands, and neither is anything that merely mentions forgetting ("你忘了我吗").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

TEACH_MAX_CHARS = 120

_LEAD = r"^(?:请|麻烦)?(?:你)?(?:帮我|给我)?"
_TEACH = re.compile(
    _LEAD
    + r"(?:记住|记下|记一下|记着|记好|记得)(?:了)?(?:哦|喔|啊|呀|哈)?"
    + r"[\s:：,，、]*(?P<body>.+)$",
    re.DOTALL,
)
_FORGET = re.compile(
    _LEAD + r"(?:把)?(?:忘记|忘掉|忘了|删掉|删除|清除|清空)(?:掉)?"
    r"(?:我|关于我的(?:事情?|一切|所有(?:事情?|记忆|信息)?|记忆|信息|资料)?"
    r"|我的(?:事情?|记忆|信息|资料|一切))"
    r"(?:吧|啦|了|哦|呀|好吗|好不好)?[\s。！!~～.]*$"
)
_FORGET_BA = re.compile(
    _LEAD
    + r"把我(?:的事情?|的记忆)?(?:都|全)?(?:忘了|忘掉|忘记|删了|删掉)"
    + r"(?:吧|啦|哦|呀)?[\s。！!~～.]*$"
)
_RECALL = re.compile(
    r"^(?:你)?(?:还|都)?(?:记得|记住了|知道|记着)(?:关于)?我(?:的)?(?:什么|啥|哪些|些什么|多少)"
    r"(?:事情?|东西|信息)?(?:了|呢|吗|呀|啊)?[\s?？。！!~～.]*$"
    r"|^关于我(?:的事)?你(?:都|还)?(?:记得|知道|记住了)(?:些)?(?:什么|啥|哪些)"
    r"[\s?？。！!~～.]*$"
)
_QUESTION_END = re.compile(r"(?:吗|嘛|么|没|不)?[\s]*[?？]+[\s]*$|(?:了吗|没有|了没)[\s。.]*$")
_PUNCT_EDGES = " \t\n,，。.!！~～:：、"
_GROUP_WORDS = ("我们", "咱们", "大家", "群里", "本群", "你们")
_FIRST_PERSON = re.compile(r"我(?!们)|俺(?!们)|本人")


@dataclass(frozen=True, slots=True)
class MemberCommand:
    action: Literal["teach", "forget", "recall"]
    text: str = ""


def strip_address(text: str, aliases: Iterable[str] = ()) -> str:
    """Drop a leading call of the bot's name ("帕拉斯，…", "牛牛 …") and edge punctuation."""
    body = text.strip()
    for alias in sorted({a for a in aliases if a}, key=len, reverse=True):
        if body.startswith(alias):
            body = body[len(alias) :]
            break
    return body.strip(_PUNCT_EDGES)


def detect_member_command(text: str, aliases: Iterable[str] = ()) -> MemberCommand | None:
    body = strip_address(text, aliases)
    if not body:
        return None
    if _FORGET.match(body) or _FORGET_BA.match(body):
        return MemberCommand("forget")
    if _RECALL.match(body):
        return MemberCommand("recall")
    match = _TEACH.match(body)
    if match is None:
        return None
    content = match.group("body").strip(_PUNCT_EDGES)
    if len(content) < 2 or len(content) > TEACH_MAX_CHARS or _QUESTION_END.search(content):
        return None
    return MemberCommand("teach", content)


def third_person(text: str) -> str | None:
    """The teaching rewritten about the speaker ("我喜欢猫" → "TA喜欢猫").

    None when it is not about the speaker: no first person, or about the group / others.
    """
    if any(word in text for word in _GROUP_WORDS):
        return None
    if not _FIRST_PERSON.search(text):
        return None
    return _FIRST_PERSON.sub("TA", text).strip()
