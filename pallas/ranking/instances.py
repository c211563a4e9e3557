"""Which instance of a class a question names, and whether a fact names another one instead.

The concept table (`concepts_table`) puts "狗" and "猫", "身高" and "体重", "生日" and "过年"
in one class each, so a question about one matches a fact about the other: "我养的狗叫什么"
finds "TA养了一只猫", "我的身高" finds "TA有一个放了很久的体重秤", "我的生日是哪天" finds
"TA过年喜欢守岁" — a full class share, which raises the fused similarity past the person-facts
gate on its own (`scoring.concept_bonus`). Such words are co-hyponyms: mutually exclusive
instances of their class, and a fact naming one says nothing about another. A class lists
them in its `instances` (each with its synonyms and kinds: "狗|柯基|柴犬").

`names_other_instance(question, fact)`: the question names an instance of some class, the fact
names another instance of that class, and no instance the question names is named by the fact.
`names_none_of_class`: the fact names no instance of the question's classes at all — what a
yes-or-no question's fact fails when it only shares the question's frame (`vetoes`).
A word naming the class itself ("运动", "宠物", "养了") is no instance: "我爱什么运动" asks for
any sport, and "TA养了一只博美" is not about another animal than "我的狗". The person-facts
block gates such a fact out unless the encoder finds it close anyway (`scoring`,
`match_instance`, `instance_min_cosine`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from pallas.ranking.answer_type import asks_yes_no
from pallas.ranking.concepts_table import CLASSES, ConceptClass
from pallas.ranking.text import normalize_text, recall_question


def _compile(cls: ConceptClass) -> tuple[re.Pattern[str], re.Pattern[str] | None, dict[str, int]]:
    group = {word: n for n, words in enumerate(cls.instances) for word in words}
    words = sorted(group, key=len, reverse=True)  # longest first: 小提琴 before 提琴
    pattern = re.compile("|".join(re.escape(w) for w in words))
    excludes = "|".join(re.escape(e) for e in cls.excludes)
    return pattern, (re.compile(excludes) if excludes else None), group


_INSTANCES = tuple((cls.name, *_compile(cls)) for cls in CLASSES if cls.instances)
_NESTED = frozenset(cls.name for cls in CLASSES if cls.nested)

Instance = tuple[str, int]  # (class name, the instance's index in the class)


def _mentions(norm: str) -> Iterator[tuple[Instance, str]]:
    """Each instance named in the normalised `norm`, with the text before it."""
    for name, pattern, excludes, group in _INSTANCES:
        body = excludes.sub(" ", norm) if excludes is not None else norm
        for m in pattern.finditer(body):
            yield (name, group[m.group(0)]), body[: m.start()]


@lru_cache(maxsize=16384)
def named_instances(text: str) -> frozenset[Instance]:
    """The instances `text` names (normalised as the concept table matches)."""
    return frozenset(instance for instance, _ in _mentions(normalize_text(text)))


# an instance named as the value asked of an identity ("是四川人", "是不是北京", "是一只狗"),
# or as the point a distance or a move is measured from ("离成都", "从武汉")
_NOT_ASKED = re.compile(r"(?:是(?:不是)?(?:一?[个只位家种])?|离|从)$")


@lru_cache(maxsize=4096)
def asked_instances(question: str) -> frozenset[Instance]:
    """The instances a question asks about: those it names (without its remember-frame), less
    those it names as the value of an identity — "我老婆是四川人吗", "我最爱喝的是奶茶吗",
    "我是不是北京人" ask what a single value is, and a fact naming another instance ("TA老婆是
    湖南长沙人") answers them: no — or as a reference point ("我老家离成都远吗"). A nested
    class's instances (places) count only in a yes-or-no question ("我去过西藏吗"): elsewhere
    a place frames a question that asks a value."""
    yes_no = asks_yes_no(question)
    return frozenset(
        instance
        for instance, before in _mentions(normalize_text(recall_question(question)))
        if (yes_no or instance[0] not in _NESTED) and not _NOT_ASKED.search(before)
    )


def other_instance(asked: frozenset[Instance], told: frozenset[Instance]) -> bool:
    """Whether a fact naming `told` names another instance of a class the question, naming
    `asked`, names an instance of — and none of those the question names."""
    if not asked or not told or asked & told:
        return False
    classes = {name for name, _ in asked}
    return any(name in classes for name, _ in told)


def names_none_of_class(asked: frozenset[Instance], told: frozenset[Instance]) -> bool:
    """Whether a fact naming `told` names no instance of any class the question, naming
    `asked`, names one of: a yes-or-no question asks about its instance ("我喜欢吃包子吗"),
    and "TA冬天喜欢吃糖葫芦" says nothing of it, however close the frame (喜欢吃)."""
    classes = {name for name, _ in asked if name not in _NESTED}  # "滨江" is in 杭州
    return bool(classes) and not any(name in classes for name, _ in told)


def name_one_instance(a: str, b: str) -> bool:
    """Whether both texts name the same instance of a class ("不养狗了" and "TA养了一只柯基":
    柯基 is a 狗): what a denial and the fact it denies share when no word is shared."""
    return bool(named_instances(a) & named_instances(b))


def share_a_class(a: str, b: str) -> bool:
    """Whether both texts name an instance of one class, the same or another ("改学西班牙语了"
    and "TA在学韩语": two languages): what a change of a thing from one instance to another
    says in two lines that share no word."""
    classes = {name for name, _ in named_instances(a)}
    return any(name in classes for name, _ in named_instances(b))


def names_other_instance(question: str, fact: str) -> bool:
    """`other_instance` of what the question asks about (`asked_instances`) and the fact."""
    return other_instance(asked_instances(question), named_instances(fact))
