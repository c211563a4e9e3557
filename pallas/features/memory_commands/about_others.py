"""Whose fact a teaching states: the speaker's own, or somebody else's (pure).

"记住 张伟欠钱不还" is not the speaker's fact: stored as theirs it became "TA张伟欠钱不还", a
claim about another member in the speaker's profile. A teaching whose *subject* (what the line
opens with) is another person is answered with the about-others reply and never stored:

- a member of the group by the name they go by here (`GroupNames.others`: the cards and
  nicknames of the group's recent speakers, read by the member-command path);
- a QQ id ("12345678的密码是…"; the speaker's own id is theirs), told as a number followed by
  what one says of a person;
- a bare personal name ("张伟…", "欧阳娜娜…"): a surname and one or two characters that are
  no word of jieba's dictionary ("周末", "高铁", "杨梅" are words), followed by what one says of
  a person.

(@, 他 / 她, 小X / 老X / 王老师 are caught by `teaching`'s older rule.) The speaker's own facts
stay theirs with or without 我 ("对芒果过敏", "我的血型是O型"), and so does the speaker's opinion
of someone ("我觉得老王人不错", "老王人不错，我觉得"), a line that says the speaker did
something with them ("老王和我是同学"), and a line opening with the speaker's own card
("咸鱼喜欢猫" said by 咸鱼 is "TA喜欢猫").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from pallas.ranking import dictionary_frequency

SubjectKind = Literal["self", "other", "unknown"]

# What one says of a person right after their name or id: a predicate or a possession.
_PERSON_TAIL = re.compile(
    r"^(?:是个|是一个|是一名|是位|这个?人|这家伙|的(?:密码|手机号?|电话|号码|QQ|qq|微信|身份证"
    r"|住址|地址|家|银行卡|工资|生日|女朋友|男朋友|老婆|老公|对象|孩子|爸|妈|账号|成绩)"
    r"|欠|说|喜欢|爱|讨厌|恨|住|在|要|想|有|会|不|没|很|人|长得|怀孕|结婚|离婚|生|去|今天|昨天"
    r"|最近|天天|总是|老是|经常|已经|考|买|被|借|偷|骗|打|骂|真|太|超|特别|是(?!我|俺))"
)
_SURNAMES_2 = ("欧阳", "司马", "诸葛", "上官", "慕容", "东方", "皇甫", "令狐", "公孙", "夏侯")
_SURNAMES_1 = (
    "王李张刘陈杨赵黄周吴徐孙胡朱高林何郭马罗梁宋郑谢韩唐冯于董萧程曹袁邓许傅沈曾彭吕苏卢"
    "蒋蔡贾丁魏薛叶阎余潘杜戴夏钟汪田任姜范方石姚谭廖邹熊金陆郝孔白崔康毛邱秦江史顾侯邵孟"
    "龙万段雷钱汤尹黎易常武乔贺赖龚文"
)
_CJK = re.compile(r"[\u4e00-\u9fff]")
# "12345678…" / "QQ12345678…" / "QQ号12345678…": a QQ id opens the line (5 to 12 digits)
_QQ_ID = re.compile(r"^(?:qq|QQ|Q)?(?:号)?(?:是)?(?P<id>[1-9]\d{4,11})(?![\d.])(?P<rest>.*)$")
# The speaker's opinion ("我觉得…", "…，我觉得") or a line they are part of ("老王和我…").
_OPINION = re.compile(r"(?:我|俺)(?:觉得|认为|感觉|觉着|相信|猜|以为|希望|看来)|在我看来")
_WITH_ME = re.compile(r"^.{1,12}?(?:和|跟|与|同)(?:我|俺)")
_EDGE = " \t\n,，。.!！~～:：、"
_TAG = r"[\[【(（<《][^\]】)）>》]{0,8}[\]】)）>》]"  # "【管理】", "(在线)"
_CARD_DECOR = re.compile(rf"^{_TAG}|{_TAG}$")


@dataclass(frozen=True, slots=True)
class GroupNames:
    """What the member-command path knows of the group's members: the names other members go
    by here (card or nickname → their user id) and the speaker's own names and id."""

    others: dict[str, int] = field(default_factory=dict)
    own: frozenset[str] = frozenset()
    own_id: int = 0

    @classmethod
    def of(
        cls, speaker_id: int, speaker_names: Iterable[str], members: Iterable[tuple[int, str]]
    ) -> GroupNames:
        """From the speaker and (user id, card or nickname) pairs of the group's members."""
        own = frozenset(n for raw in speaker_names for n in name_forms(raw))
        others: dict[str, int] = {}
        for user_id, raw in members:
            if user_id == speaker_id:
                continue
            for name in name_forms(raw):
                if name not in own:
                    others.setdefault(name, user_id)
        return cls(others, own, speaker_id)


NO_NAMES = GroupNames()


def name_forms(raw: str) -> tuple[str, ...]:
    """A card as written and without its decoration ("【管理】咸鱼" → "咸鱼"); names shorter than
    two characters name nobody reliably."""
    name = raw.strip()
    bare = _CARD_DECOR.sub("", name).strip()
    return tuple(dict.fromkeys(n for n in (name, bare) if len(n) >= 2))


@dataclass(frozen=True, slots=True)
class Subject:
    kind: SubjectKind
    reason: str
    rest: str = ""  # for an own name: the line without it ("喜欢猫")


def subject_of(text: str, names: GroupNames = NO_NAMES) -> Subject:
    """Whose fact `text` (a teaching, without "记住") states, by what it opens with."""
    body = text.strip(_EDGE)
    if body.startswith(("我", "俺")):
        return Subject("self", "first_person")
    if _OPINION.search(body):
        return Subject("self", "opinion")
    for name in sorted(names.own, key=len, reverse=True):
        if body.startswith(name):
            return Subject("self", "own_name", body[len(name) :].lstrip(_EDGE))
    if _WITH_ME.match(body):
        return Subject("self", "with_me")
    for name in sorted(names.others, key=len, reverse=True):
        rest = body[len(name) :]
        if body.startswith(name) and (not rest or rest[0] in _EDGE or _PERSON_TAIL.match(rest)):
            return Subject("other", "group_name")
    qq = _QQ_ID.match(body)
    if qq is not None:
        if names.own_id and int(qq.group("id")) == names.own_id:
            return Subject("self", "own_id", qq.group("rest").lstrip(_EDGE))
        if int(qq.group("id")) in names.others.values() or _PERSON_TAIL.match(
            qq.group("rest").lstrip(_EDGE)
        ):
            return Subject("other", "qq_id")
    if bare_name(body) is not None:
        return Subject("other", "bare_name")
    return Subject("unknown", "")


def bare_name(body: str) -> str | None:
    """The personal name `body` opens with ("张伟欠钱不还" → "张伟"), or None."""
    for surname in (*_SURNAMES_2, *_SURNAMES_1):
        if body.startswith(surname):
            break
    else:
        return None
    if _is_word(body, len(surname)):
        return None
    for given in (1, 2):
        name = body[: len(surname) + given]
        if len(name) < len(surname) + given or not all(_CJK.match(c) for c in name):
            return None
        if _PERSON_TAIL.match(body[len(name) :]):
            return name
    return None


def _is_word(body: str, surname: int) -> bool:
    """`body` opens with a word of jieba's dictionary longer than its surname, by up to three
    characters ("周末", "杨梅", "任天堂"; "欧阳" alone is a word but no given name): no personal
    name then. A prefix of longer words only has frequency 0 there."""
    return any(dictionary_frequency(body[:n]) > 0 for n in range(surname + 1, surname + 4))
