"""Facts that update: which *slot* of a person a fact fills, and what a new fact does to old ones.

A person fact ("TA住在海淀区", "最爱吃火锅", "已经不住海淀了") is parsed by rules into a
`Slot`: a name (residence, hometown, job, school, favorite:<class>, like:<class>, pet, exam,
wake, sleep, partner), a value ("海淀区") and a polarity (negative: "不住…了", "辞职了",
"不喜欢…了"). Slots are single-valued (one place one lives, one job) or multi-valued (one
likes many things, can keep several pets).

`decide_update(new, old)` — pure — says what storing `new` does to the same member's live facts:

- **replace**: a positive fact in a single-valued slot retires every older fact of that slot
  ("住在朝阳" after "住在海淀区"; the same place in other words too: the newest wins), and a
  positive fact retires an older negative one of the same value ("喜欢猫" after "不喜欢猫了");
- **contradict**: a negative fact retires the positive facts it denies ("已经不住海淀了" →
  "住在海淀区"; "辞职了" → any job);
- **add**: anything else (a second pet, another liking, a fact without a slot).

Retired rows are soft-deleted with the reason and `replaced_by` pointing at the new row: they
stay in the history (audit) and are never injected again.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pallas.features.memory.concepts import fact_concepts
from pallas.features.memory.text import normalize_text

UpdateAction = Literal["add", "replace", "contradict"]

_SUBJECT = re.compile(r"^(?:ta|我|本人|俺)")
_TAIL = re.compile(r"[了啦哦呀吧啊的,，。.!！~～\s]+$")
_NEG = r"(?P<neg>(?:已经|早就|现在)?(?:不再?|没再?|没有再?))"
_V = r"(?P<v>[^，。,.;；!！?？]{1,16}?)"
_END = r"(?:了|啦)?$"
# What a school is called at the end of "读/上 …": "读高二", "上北京大学", "在读研究生".
_SCHOOL = (
    r"(?:大学|学院|中学|小学|高中|初中|学校|幼儿园|技校|职高|本科|专科|研究生|博士|硕士|专业"
    r"|大[一二三四]|高[一二三]|初[一二三]|研[一二三]|[一二三四五六]年级|[^\s]{1,3}大)"
)
# A statement that opens with its date ("上周末帮表妹搬家", "昨天去了趟医院") tells an event:
# it fills no slot, except a change of state told with its date ("昨天搬到朝阳了").
_WHEN = re.compile(
    r"^(?:上(?:周末?|个?星期|个?礼拜|个?月|次)|前天|昨天|今天|刚才|刚刚|去年|前年|今年|那天"
    r"|周末|[一二三四五六七八九十两几\d]+(?:天|周|个星期|个月|年)(?:前|之前))(?:的)?"
)

# Classes that name what a favourite / liking is about, most specific first.
_PREFERENCE_CLASSES = (
    "instrument", "sport", "game", "media", "music", "pet", "animal", "drink", "food",
    "color", "hobby",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Slot:
    name: str
    value: str
    negative: bool = False
    single: bool = True


@dataclass(frozen=True, slots=True)
class _Rule:
    name: str
    pattern: re.Pattern[str]
    single: bool = True
    negative: bool = False  # the whole pattern is a negation
    by_class: bool = False  # slot name gets the value's preference class
    change: bool = False  # a change of state, which may be told with its date
    job_hint: bool = False  # the value must look like an occupation ("产品经理", not "饭")


def _r(text: str) -> re.Pattern[str]:
    return re.compile(text)


# "换工作了，现在在做…" / "换手机了，现在用的是…": the change told before the new value
_NEW_JOB = r"(?:换(?:了)?(?:个|份)?(?:新)?工作了?,?)?"
_NEW_PHONE = r"换(?:了)?(?:个|部)?(?:新)?手机了?,?(?:现在)?"
# "升高三了" / "读到大二了": a school year reached
_SCHOOL_UP = r"^(?:升|升到|升上|读到|上到|进入)了?"

# fmt: off
RULES: tuple[_Rule, ...] = (
    _Rule("residence", _r(rf"^{_NEG}?住(?:在)?{_V}{_END}")),
    _Rule("residence", _r(rf"^(?:搬到了?|搬去了?|现在住在?){_V}{_END}"), change=True),
    _Rule("residence", _r(rf"^从{_V}搬走{_END}"), negative=True, change=True),
    _Rule("residence", _r(rf"^搬离(?:了)?{_V}{_END}"), negative=True, change=True),
    _Rule("residence", _r(rf"^(?<!老)家(?:住)?在{_V}{_END}")),
    _Rule("hometown", _r(rf"^(?:老家|家乡|籍贯)(?:在|是){_V}{_END}")),
    _Rule("job", _r(rf"^{_NEG}?{_NEW_JOB}(?:现在)?在{_V}(?:上班|工作|打工){_END}")),
    _Rule("job", _r(rf"^{_NEW_JOB}现在(?:在)?(?:做|当|干|是){_V}{_END}"), change=True,
          job_hint=True),
    _Rule("job", _r(rf"^(?:已经|早就)?从{_V}(?:辞职|离职|跳槽|被裁)(?:了)?$"), negative=True,
          change=True),
    _Rule("job", _r(rf"^(?:是做|做|是干|干){_V}的{_END}")),
    _Rule("job", _r(rf"^(?:是做|是干){_V}$")),  # "是做设计的" (the tail's 的 is cleaned off)
    _Rule("job", _r(rf"^(?:工作是|职业是|当了?|是一名|是个|是一个|是){_V}{_END}")),
    _Rule("job", _r(r"^(?P<v>)(?:已经)?(?:辞职|离职|失业|被裁|不干)(?:了)?$"), negative=True,
          change=True),
    _Rule("school", _r(rf"{_SCHOOL_UP}(?P<v>[^，。,.;；!！?？]{{0,12}}{_SCHOOL}){_END}"),
          change=True),
    _Rule("school", _r(rf"^(?:在读|读|上|在上)(?P<v>[^，。,.;；!！?？]{{0,12}}{_SCHOOL}){_END}")),
    _Rule("exam", _r(rf"^(?:在|正在)?(?:备考|准备考|准备|要考|在考){_V}(?:考试)?{_END}")),
    _Rule("wake", _r(rf"^(?:每天|平时|一般)?{_V}起床{_END}")),
    _Rule("sleep", _r(rf"^(?:每天|平时|一般)?{_V}(?:睡觉|睡){_END}")),
    _Rule("partner", _r(rf"^(?:女朋友|男朋友|对象|老婆|老公)(?:叫|是){_V}{_END}")),
    _Rule("partner", _r(r"^(?P<v>)(?:和|跟)?.{0,6}分手(?:了)?$"), negative=True, change=True),
    _Rule("phone", _r(rf"^{_NEW_PHONE}(?:用的是|用的|换成了?|用上了?|用){_V}{_END}"),
          change=True),
    _Rule("phone", _r(rf"^的?手机(?:是|用的是|换成了?){_V}{_END}")),
    _Rule("phone", _r(rf"^(?:现在)?用(?:的是|的|着)?{_V}手机{_END}")),
    # "最喜欢的水果是草莓" / "现在最喜欢的水果变成芒果了": the favourite of a named kind
    _Rule("favorite", _r(rf"^(?:现在)?最(?:喜欢|爱)的(?P<kind>[^,是]{{1,6}}?)"
                         rf"(?:是|变成了?|换成了?|改成了?){_V}{_END}"), by_class=True),
    _Rule("favorite", _r(rf"^(?:现在)?最(?:喜欢|爱)(?:吃|喝|玩|听|看|的)?{_V}{_END}"),
          by_class=True),
    _Rule("like", _r(rf"^{_NEG}?(?:喜欢|爱)(?:吃|喝|玩|听|看)?{_V}{_END}"), single=False,
          by_class=True),
    _Rule("pet", _r(rf"^{_NEG}?养(?:了|着)?{_V}{_END}"), single=False),
    _Rule("pet", _r(rf"^(?:家里?的|养的){_V}(?:去世|走|没|丢|送人){_END}"), single=False,
          negative=True, change=True),
)
# fmt: on

_JOB_HINT = re.compile(r"师|员|生|工|医|护|警|家|手|长|经理|老板|会计|策划|开发|程序|律|厨|司机")


def _clean(text: str) -> str:
    body = _SUBJECT.sub("", normalize_text(text).replace(" ", ""))
    return _TAIL.sub("", body)


def _preference_class(value: str) -> str:
    classes = fact_concepts(value)
    return next((c for c in _PREFERENCE_CLASSES if c in classes), "other")


def parse_slot(text: str) -> Slot | None:
    """The slot a person fact fills, or None when no rule recognises it."""
    body = _clean(text)
    dated = _WHEN.match(body)
    if dated is not None:
        body = body[dated.end() :]
    if not body:
        return None
    for rule in RULES:
        if dated is not None and not rule.change:
            continue  # an event ("上周末帮表妹搬家") is not a standing fact
        match = rule.pattern.match(body)
        if match is None:
            continue
        groups = match.groupdict()
        value = next((v for k, v in groups.items() if k.startswith("v") and v), "") or ""
        if _not_a_job(rule, body, value):
            continue  # "是左撇子" / "现在在做饭" is not a job
        negative = rule.negative or bool(groups.get("neg"))
        name = _slot_name(rule, value, groups.get("kind") or "")
        return Slot(name, _value_key(value), negative, rule.single)
    return None


def _not_a_job(rule: _Rule, body: str, value: str) -> bool:
    if rule.name != "job" or rule.negative or _JOB_HINT.search(value):
        return False
    if rule.job_hint:
        return "工作" not in body  # "换工作了，现在在做运营" names the job whatever it is
    return "是" in body[:4] and not body.startswith(("是做", "是干"))


def _slot_name(rule: _Rule, value: str, kind: str) -> str:
    """The slot's name; a favourite of a named kind ("最喜欢的水果") is that kind's when no
    preference class knows it ("favorite:歌"), so two favourites of one kind meet."""
    if not rule.by_class:
        return rule.name
    cls = _preference_class(kind + value) if kind else _preference_class(value)
    if cls == "other" and kind:
        return f"{rule.name}:{kind}"
    return f"{rule.name}:{cls}"


def _value_key(value: str) -> str:
    value = re.sub(r"^(?:一只|两只|一条|一个|只|条|个)", "", value)
    return re.sub(r"(?:区|市|省|县)$", "", value).strip()


def same_value(a: str, b: str) -> bool:
    """Values name the same thing: equal, or one contains the other ("海淀" / "海淀区")."""
    if not a or not b:
        return False
    return a == b or a in b or b in a


@dataclass(frozen=True, slots=True)
class UpdateDecision:
    action: UpdateAction
    retire_ids: tuple[int, ...]
    reason: str


def decide_update(new: Slot | None, old: Sequence[tuple[int, Slot | None]]) -> UpdateDecision:
    """What storing a fact with slot `new` does to the member's live facts `old` (id, slot)."""
    if new is None:
        return UpdateDecision("add", (), "no_slot")
    same = [(i, s) for i, s in old if s is not None and s.name == new.name]
    if new.negative:
        denied = tuple(
            i
            for i, s in same
            if not s.negative and (not new.value or same_value(s.value, new.value))
        )
        if denied:
            return UpdateDecision("contradict", denied, f"negates:{new.name}")
        return UpdateDecision("add", (), f"negative_without_match:{new.name}")
    if new.single:
        retired = tuple(i for i, _ in same)  # the newest statement of a single slot wins
        if retired:
            return UpdateDecision("replace", retired, f"single_slot:{new.name}")
        return UpdateDecision("add", (), f"new_in_slot:{new.name}")
    undone = tuple(i for i, s in same if s.negative and same_value(s.value, new.value))
    if undone:
        return UpdateDecision("replace", undone, f"undoes_negation:{new.name}")
    return UpdateDecision("add", (), f"multi_slot:{new.name}")
