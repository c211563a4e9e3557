"""Pure text classifiers shared by the routing stages (no state, no I/O).

All functions take the *content* text of a turn: what the member typed, with the @bot,
the reply marker and a vocative alias ("牛牛，…" / "…牛牛") already removed.
"""

from __future__ import annotations

import re
import unicodedata
from enum import StrEnum

from pallas.core.text import clean_text, is_invisible

__all__ = ["clean_text"]  # the one cleaning function, re-exported for the routing stages


_LAUGH_RE = re.compile(
    r"^(?:[哈呵嘿嘻桀]{2,}|h{2,}|w{2,}|2333*|x?swl|lol|lmao|笑死(?:我了)?|草+|蚌+|绷+)$",
    re.IGNORECASE,
)
_REPEAT_RE = re.compile(r"^(.)\1{2,}$|^(..)\2{2,}$", re.DOTALL)
_SHORT_REACTIONS = frozenset(
    {
        "草", "好", "嗯", "啊", "哦", "噢", "哇", "6", "?", "？", "!", "！", "ok", "好吧", "确实",
        "真的", "是的", "对", "对的", "嗯嗯", "哦哦", "牛", "强", "蚌", "绷", "笑死", "乐", "典",
        "寄", "急", "好家伙", "绝了", "离谱", "还行", "可以", "行", "收到", "了解",
    }
)  # fmt: skip
_QUESTION_RE = re.compile(
    r"[?？]|怎么|如何|为什么|为啥|干嘛|干啥|吗|么[?？~～]*$|谁|什么|啥|哪|几[点个号岁天时次]|多少|咋|"
    r"是不是|能不能|会不会|有没有|要不要|可不可以|行不行|对不对|好不好|"
    # "x 呢" / "多大" / "等于几" / "几月": questions without a question mark
    r"(?:^|[，,\s])那.{1,30}呢[~～]*$|[你您]呢[~～]*$|多[大久长远高重]|等于几|几[月年周分]"
)
_REQUEST_RE = re.compile(
    r"帮我|帮忙|能不能|可以吗|麻烦|请你|给我|教我|告诉我|推荐|求求|来个|来一个|讲个|讲讲|"
    r"说说|介绍一下|查一下|查查|算一下|翻译|解释一下|写一"
)
_SPAM_TERMS = (
    "加我微信", "加微信", "免费领", "扫码", "代练", "兼职", "日结", "刷单", "点击链接",
    "点击即玩", "不用下载", "私聊我领", "红包群", "扩列", "陪聊", "引流", "返利",
)  # fmt: skip
_URL_RE = re.compile(r"https?://|www\.|b23\.tv|t\.cn/", re.IGNORECASE)
_INCOMPLETE_EXACT = frozenset(
    {
        "我觉得", "我感觉", "我想", "我想问", "那个", "就是", "然后", "所以", "因为", "但是",
        "你是", "我是", "那你", "话说", "问一下", "请问", "我问你", "问个问题", "帮我", "你能",
        "我要", "其实", "而且", "还有", "你说", "我跟你说", "等等", "等下",
    }
)  # fmt: skip
_DANGLING_TAIL_RE = re.compile(
    r"(?:[，,、：:；;]|然后|但是|因为|所以|而且|如果|并且|或者|不过|还有|的话|就是|比如)$"
)
_SHUT_UP_RE = re.compile(
    r"(?<![不别没])(?:闭嘴|住口|住嘴)|"
    # 安静 as an order ("安静", "你安静一下", "都给我安静点"), not a description ("好安静")
    r"(?:^|你|给我|请|都|能不能|可以)安静(?:点|一点|一会儿?|些|下来|一下)?(?:吧|啊|好吗)?$|"
    r"别说话|不要说话|别说了|别吵|别bb|少说两句|少说点|别插嘴|别刷屏|shut\s*up|"
    r"^(?:滚|爬)(?:吧|开|远点|远一点)?$",
    re.IGNORECASE,
)
_GREETING_RE = re.compile(
    r"^(?:早|早安|早上好|上午好|中午好|午安|下午好|晚上好|晚安|你好|您好|哈喽|嗨|hi|hello|hey|"
    r"在吗|在不在|在嘛|在么|我来了|我回来了|来了|好久不见|大家好|摸鱼)[呀啊哦喔哇呢啦了~～]*$",
    re.IGNORECASE,
)
_THANKS_RE = re.compile(r"^(?:谢谢|谢啦|谢了|多谢|感谢|感恩|辛苦了|辛苦啦|thx|thanks|3q)")
_TEASE_RE = re.compile(
    r"笨蛋|笨笨|笨牛|坏牛|呆|憨|傻牛|小笨|可爱|摸摸|摸头|贴贴|蹭蹭|rua|揉揉|抱抱|亲亲|"
    r"嘿嘿|略略|哼|戳|捏捏|好乖|乖乖|么么",
    re.IGNORECASE,
)
_VENT_RE = re.compile(
    r"烦|唉|哎|累|难受|没绷住|服了|崩溃|破防|麻了|emo|无语|好困|困死|气死|心累|裂开|想哭|"
    r"呜呜|难绷|玉玉|焦虑",
    re.IGNORECASE,
)
_ACK_RE = re.compile(
    r"^(?:好|好的|好哒|好滴|好吧|嗯|嗯嗯|哦|哦哦|噢|ok|okay|收到|了解|明白|知道了|行|可以|"
    r"对|对的|是的|确实|懂了|原来如此)[呀啊哦喔哇呢啦了~～]*$",
    re.IGNORECASE,
)
_EMOTION_KEYWORDS = (
    "难绷", "绷", "破防", "麻了", "emo", "玉玉", "崩溃", "想死", "哭", "太惨", "无聊", "烦",
    "累", "焦虑", "离谱", "裂开", "气死", "要死", "好气", "难受", "心态崩",
)  # fmt: skip
_TRIM_CHARS = " \t\r\n~～!！。.,，、…?？"


class SocialAction(StrEnum):
    """The visible social move of a short turn (drives memory trimming and PASS)."""

    NONE = "none"
    GREETING = "greeting"
    NICKNAME = "nickname"
    TEASING = "teasing"
    VENTING = "venting"
    THANKS = "thanks"
    ACK = "ack"


def meaningful_length(text: str) -> int:
    """Characters that carry content: letters, digits, CJK (not spaces, punctuation, symbols)."""
    return sum(1 for ch in text if unicodedata.category(ch)[0] in "LN")


def is_symbol_only(text: str) -> bool:
    """Only punctuation, symbols (emoji are symbols) and spaces."""
    return bool(text) and all(
        ch.isspace() or is_invisible(ch) or unicodedata.category(ch)[0] in "PSZM" for ch in text
    )


def is_noise(text: str) -> bool:
    """Content-free: punctuation / emoji only, digits only, laughter, a repeated char run."""
    plain = text.strip()
    if not plain:
        return False
    if is_symbol_only(plain):
        return True
    compact = "".join(ch for ch in plain if unicodedata.category(ch)[0] in "LN").lower()
    if not compact:
        return True
    if compact.isdigit():
        return True
    return bool(_LAUGH_RE.match(compact) or _REPEAT_RE.match(compact))


def is_short_reaction(text: str) -> bool:
    return text.strip(_TRIM_CHARS).lower() in _SHORT_REACTIONS


def is_question(text: str) -> bool:
    return bool(_QUESTION_RE.search(text))


def is_request(text: str) -> bool:
    return bool(_REQUEST_RE.search(text))


def is_spam(text: str) -> bool:
    plain = text.strip()
    if _URL_RE.search(plain) and len(plain) >= 24:
        return True
    return any(term in plain for term in _SPAM_TERMS)


def is_incomplete(text: str) -> bool:
    """The member has not finished: a lone opener ("我觉得") or a dangling connector / comma."""
    plain = text.strip()
    if not plain:
        return False
    if plain.rstrip("…. ") in _INCOMPLETE_EXACT:
        return True
    return bool(_DANGLING_TAIL_RE.search(plain))


def is_shut_up(text: str, *, max_chars: int = 16) -> bool:
    """闭嘴 / 别说话 / 安静 / 滚 … (negated forms such as 别闭嘴 / 不安静 do not count)."""
    plain = text.strip(_TRIM_CHARS)
    return bool(plain) and len(plain) <= max_chars and bool(_SHUT_UP_RE.search(plain))


def has_emotion(text: str) -> bool:
    lowered = text.lower()
    return any(word in lowered for word in _EMOTION_KEYWORDS)


def classify_social_action(
    content: str,
    *,
    alias_only: bool = False,
    max_chars: int = 24,
    venting_max_chars: int = 24,
) -> SocialAction:
    """Short social move of `content`; NONE when it carries a real question or request.

    `alias_only`: the member typed only the bot's name / @ (content is empty after stripping).
    """
    plain = content.strip()
    if alias_only and not plain:
        return SocialAction.NICKNAME
    bare = plain.strip(_TRIM_CHARS)
    if not bare:
        return SocialAction.NONE
    if _GREETING_RE.match(bare) and len(bare) <= max_chars:
        return SocialAction.GREETING
    if is_request(plain) or (is_question(plain) and not _TEASE_RE.search(plain)):
        return SocialAction.NONE
    if len(bare) <= max_chars and _THANKS_RE.match(bare):
        return SocialAction.THANKS
    if len(bare) <= venting_max_chars and _VENT_RE.search(bare):
        return SocialAction.VENTING
    if len(bare) <= max_chars and _TEASE_RE.search(bare):
        return SocialAction.TEASING
    if len(bare) <= max_chars and (_ACK_RE.match(bare) or is_noise(bare)):
        return SocialAction.ACK
    return SocialAction.NONE
