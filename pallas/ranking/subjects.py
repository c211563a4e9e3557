"""Whom a member's fact is about, and whom a question asks about: the member, or one of theirs.

A member teaches facts about their family too ("我女儿在读幼儿园大班", stored "TA女儿在读幼儿园
大班"). Such a fact does not answer a question about the member ("我大学学的什么" →
"TA外孙女在北京读大学": a class match, school) nor about another of theirs ("我儿子在哪读书" →
"TA女儿在读幼儿园大班", cosine 0.54) — the encoder and the concept table see the topic, not
the person. `about_someone_else` says when a fact is about someone the question does not ask
about; the person-facts block gates such a fact out (`scoring`, `match_subject`). The same
switch gates the other way round: a question about one of the member's people ("我老婆叫什么")
is not answered by a fact that names none of them ("TA喜欢给文件起很长的名字", cosine 0.50
with "名字"; `names_none_of`) — unless the question asks about the whole family ("家里人").

Who a fact is about: a relation word leading it ("TA女儿…", "TA的老婆…", "TA最好的朋友…"),
unless the member comes back in it ("TA爸教TA弹吉他", "TA老婆周末常带TA去爬山": about the
member as well) or the relation only qualifies what follows ("TA妈妈做的红烧肉最好吃": the
member's taste). Who a question asks about: "我<relation>" or "我有<relation>" anywhere in it
("你还记得我儿子在哪读书吗", "你记得我有孩子吗"); none means the member. The two match when
their relations overlap ("孩子" is a son or a daughter, "爱人" / "老伴" a wife or a husband).
"""

from __future__ import annotations

import re
from functools import lru_cache

_CHILD = frozenset({"son", "daughter"})
_SPOUSE = frozenset({"wife", "husband"})
_PARTNER = _SPOUSE | {"girlfriend", "boyfriend"}
_PARENTS = frozenset({"father", "mother"})
# relation word → the people it can name (a word naming several matches any of them)
RELATIONS: dict[str, frozenset[str]] = {
    **dict.fromkeys(("儿子",), frozenset({"son"})),
    **dict.fromkeys(("女儿", "闺女"), frozenset({"daughter"})),
    **dict.fromkeys(("孩子", "小孩", "娃"), _CHILD),
    **dict.fromkeys(("老婆", "媳妇", "妻子", "太太"), frozenset({"wife"})),
    **dict.fromkeys(("老公", "丈夫"), frozenset({"husband"})),
    **dict.fromkeys(("爱人", "老伴"), _SPOUSE),
    **dict.fromkeys(("对象",), _PARTNER),
    **dict.fromkeys(("男朋友", "男友"), frozenset({"boyfriend"})),
    **dict.fromkeys(("女朋友", "女友"), frozenset({"girlfriend"})),
    **dict.fromkeys(("爸爸", "老爸", "父亲", "爸"), frozenset({"father"})),
    **dict.fromkeys(("妈妈", "老妈", "母亲", "妈"), frozenset({"mother"})),
    **dict.fromkeys(("父母", "爸妈"), _PARENTS),
    **dict.fromkeys(("哥哥", "哥"), frozenset({"elder brother"})),
    **dict.fromkeys(("弟弟",), frozenset({"younger brother"})),
    **dict.fromkeys(("姐姐", "姐"), frozenset({"elder sister"})),
    **dict.fromkeys(("妹妹",), frozenset({"younger sister"})),
    **dict.fromkeys(("爷爷",), frozenset({"grandfather"})),
    **dict.fromkeys(("奶奶",), frozenset({"grandmother"})),
    **dict.fromkeys(("外公", "姥爷"), frozenset({"maternal grandfather"})),
    **dict.fromkeys(("外婆", "姥姥"), frozenset({"maternal grandmother"})),
    **dict.fromkeys(("孙子",), frozenset({"grandson"})),
    **dict.fromkeys(("孙女",), frozenset({"granddaughter"})),
    **dict.fromkeys(("外孙",), frozenset({"maternal grandson"})),
    **dict.fromkeys(("外孙女",), frozenset({"maternal granddaughter"})),
    **dict.fromkeys(("朋友", "闺蜜"), frozenset({"friend"})),
    **dict.fromkeys(("室友",), frozenset({"roommate"})),
    **dict.fromkeys(("同事",), frozenset({"colleague"})),
    **dict.fromkeys(("同学",), frozenset({"classmate"})),
    **dict.fromkeys(("老板", "领导"), frozenset({"boss"})),
    # in-laws, a wife's side and a husband's: one person each to the member
    **dict.fromkeys(("婆婆", "岳母", "丈母娘"), frozenset({"mother-in-law"})),
    **dict.fromkeys(("公公", "岳父", "老丈人"), frozenset({"father-in-law"})),
}
_EVERYONE = frozenset().union(*RELATIONS.values())
RELATIONS.update(dict.fromkeys(("家人", "家里人"), _EVERYONE))

_WORD = "|".join(sorted(RELATIONS, key=len, reverse=True))  # longest first: 外孙女 before 外孙
# "的" / "家" or a short qualifier ending in 的 ("最好的") between the person and the relation
_BETWEEN = r"(?:的|家)?(?:[\u4e00-\u9fff]{1,3}的)?"
_FACT = re.compile(rf"^(?:TA|我){_BETWEEN}({_WORD})(.*)$", re.DOTALL)
# "我有个妹妹吗", "我是不是还有个妹妹" ask about a sister as "我妹妹…" does
_ASKED = re.compile(rf"我(?:是不是|有没有)?(?:还?有(?:[一两]?个)?)?{_BETWEEN}({_WORD})")
# "妈妈做的红烧肉": a verb and 的 after the relation, which then qualifies what follows (a 的
# straight after it is possessive: "TA女儿的生日" is about the daughter)
_QUALIFIES = re.compile(r"^[\u4e00-\u9fff]{1,2}的")
_MEMBER = ("TA", "我")
_NAMED = re.compile(_WORD)  # a relation word anywhere in a fact


@lru_cache(maxsize=16384)
def fact_about(text: str) -> frozenset[str] | None:
    """The people a stored fact is about, or None for the member (see the module)."""
    found = _FACT.match(text.strip())
    if found is None:
        return None
    rest = found.group(2)
    if _QUALIFIES.match(rest) or any(m in rest for m in _MEMBER):
        return None
    return RELATIONS[found.group(1)]


@lru_cache(maxsize=4096)
def question_about(text: str) -> frozenset[str] | None:
    """The people a question asks about, or None for the member (see the module)."""
    asked: set[str] = set()
    for word in _ASKED.findall(text):
        asked |= RELATIONS[word]
    return frozenset(asked) if asked else None


def about_someone_else(fact: frozenset[str] | None, asked: frozenset[str] | None) -> bool:
    """Whether a fact about `fact` (None: the member) is about someone the question, asking
    about `asked` (None: the member), does not ask about."""
    return fact is not None and (asked is None or fact.isdisjoint(asked))


@lru_cache(maxsize=16384)
def _named_in(text: str) -> frozenset[str]:
    """The people the relation words anywhere in a fact can name ("TA和老伴都退休了": a wife
    or a husband, though the fact is about the member too)."""
    return frozenset().union(*(RELATIONS[word] for word in _NAMED.findall(text)))


def names_none_of(text: str, asked: frozenset[str] | None) -> bool:
    """Whether a fact names none of the people a question asks about (`asked`; None: the
    member, and a question about the whole family may be answered by any fact)."""
    if asked is None or asked == _EVERYONE:
        return False
    return _named_in(text).isdisjoint(asked)


def asks_about_one_of_them(asked: frozenset[str] | None) -> bool:
    """Whether a question asking about `asked` asks about some of the member's people, not
    the member (None) nor the whole family ("我家里人…": everyone)."""
    return asked is not None and asked != _EVERYONE
