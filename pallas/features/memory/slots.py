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

from pallas.features.memory.slot_rules import RULES, Rule, animal_key, device_class, passes_gate
from pallas.ranking import fact_concepts, normalize_text

UpdateAction = Literal["add", "replace", "contradict"]

_SUBJECT = re.compile(r"^(?:ta|我|本人|俺)")
_TAIL = re.compile(r"[了啦哦呀吧啊的,，。.!！~～\s]+$")
# A statement that opens with its date ("上周末帮表妹搬家", "昨天去了趟医院") tells an event:
# it fills no slot, except a change of state told with its date ("昨天搬到朝阳了").
_WHEN = re.compile(
    r"^(?:上(?:周末?|个?星期|个?礼拜|个?月|次)|前天|昨天|今天|刚才|刚刚|去年|前年|今年|那天"
    r"|周末|[一二三四五六七八九十两几\d]+(?:天|周|个星期|个月|年)(?:前|之前))(?:的)?"
)
# Words of time or manner before the statement proper ("现在读研一了", "最近改打羽毛球了"):
# the statement is matched as said, then without them.
_ADVERBS = re.compile(r"^(?:现在|目前|最近|如今|已经|早就|终于|刚刚?|又|也|还)+")
_DETERMINER = re.compile(r"^(?:之前|原来|以前)?(?:那|这|一)(?:家|个|间|所|座)")

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
    slot = _match(body, dated is not None)
    plain = _ADVERBS.sub("", body)
    if slot is None and plain and plain != body:
        slot = _match(plain, dated is not None)
    return slot


def _match(body: str, dated: bool) -> Slot | None:
    for rule in RULES:
        if dated and not rule.change:
            continue  # an event ("上周末帮表妹搬家") is not a standing fact
        match = rule.pattern.match(body)
        if match is None:
            continue
        groups = match.groupdict()
        value = groups.get("v") or ""
        if not rule.negative and not passes_gate(rule, body, value, groups):
            continue  # "是左撇子" / "现在在做饭" is not a job, "换了发型" not a device
        name = _slot_name(rule, value, groups)
        if name is None:
            continue
        negative = rule.negative or bool(groups.get("neg"))
        return Slot(name, _value_key(value), negative, rule.single)
    return None


def _slot_name(rule: Rule, value: str, groups: dict[str, str | None]) -> str | None:
    """The slot's name. A device is its class; a pet's name is per animal; a favourite of a
    named kind ("最喜欢的水果") is that kind's when no preference class knows it
    ("favorite:歌"), so two favourites of one kind meet."""
    if rule.name == "device":
        return device_class(value, groups.get("hint") or "")
    if rule.name == "petname":
        return f"petname:{animal_key(groups.get('a') or '')}"
    if rule.name not in ("favorite", "like"):
        return rule.name
    kind = groups.get("kind") or ""
    cls = _preference_class(kind + value) if kind else _preference_class(value)
    if cls == "other" and kind:
        return f"{rule.name}:{kind}"
    return f"{rule.name}:{cls}"


def _value_key(value: str) -> str:
    value = _DETERMINER.sub("", _ADVERBS.sub("", value)).removeprefix("在")
    value = re.sub(r"^(?:一只|两只|一条|一个|只|条|个)", "", value)
    return re.sub(r"(?<=..)(?:区|市|省|县)$", "", value).strip()  # "海淀区", not "超市"


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
        ) + _names_of_a_pet_gone(new, old)
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


def _names_of_a_pet_gone(new: Slot, old: Sequence[tuple[int, Slot | None]]) -> tuple[int, ...]:
    """A pet gone ("家里的猫送人了") also retires its name ("TA的猫叫咪咪")."""
    if new.name != "pet" or not new.value:
        return ()
    name = f"petname:{animal_key(new.value)}"
    return tuple(i for i, s in old if s is not None and s.name == name and not s.negative)
