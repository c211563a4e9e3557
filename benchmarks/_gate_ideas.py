"""Rules tried against the person-facts negatives (issue #47): does a fact answer what the
question asks about, or only something near it? Measured by `benchmarks.member_recall_gate`
on the development half only; what worked is in the product as `pallas.ranking.instances`.

- `sibling_mismatch` (the first form of the product's instance veto): the question names a
  member X of the concept table ("狗", "生日", "身高"), the fact names another member Y with
  exactly X's classes ("猫", "过年", "体重") and not X. `GENERAL` lists the words naming a class
  itself (hypernyms: "运动", "宠物", "名字"), which are no instance. Measured as well as the
  product's rule, but unsafe off the half: the table's members include synonyms (爸爸 / 老爸),
  kinds (跑步 / 夜跑), units (身高 / 一米) and nested places (北京 / 海淀), all of which it
  would call siblings; the product lists the exclusive instances of a class outright.
- `head_mismatch`: none of the question's nouns (jieba.posseg, the remember-frame removed, and
  the table's members), nor a class of theirs, is in the fact. Kills category questions: the
  noun after the question word restricts the answer ("哪个演员" → "赵本山"), which need not
  name it.
- `referent_mismatch`: the same for the nouns before the question word only (what the
  question is about, not what it asks for), unless the fact covers a class of the question.
- `person_not_named`, now the product's (`pallas.ranking.subjects.names_none_of`, under
  `match_subject`): the question asks about one of the member's people ("我老婆…") and the
  fact names none of them. It gained no negative at the gate on this half; the third dev set
  (`_member_recall_extra2`, written after it) showed it gaining. (The answer-type rule tried
  next to it is the product's `pallas.ranking.answer_type`.)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from pallas.ranking.concepts import fact_concepts, query_concepts
from pallas.ranking.concepts_table import CLASSES
from pallas.ranking.scoring import CandidateScore
from pallas.ranking.text import normalize_text, recall_question, warm_up_word_tags

# words naming a class itself (hypernyms), never one of its instances
GENERAL: dict[str, tuple[str, ...]] = {
    "place": ("地方", "位置", "地址", "城市", "哪里", "哪儿", "市区", "郊区"),
    "residence": ("住", "家在", "住址"),
    "hometown": ("老家", "家乡", "故乡", "籍贯", "出生地"),
    "food": ("吃", "食物", "美食", "菜", "饭", "零食", "口味"),
    "drink": ("喝", "饮料"),
    "alcohol": ("酒", "喝酒"),
    "restriction": ("忌口", "不吃", "不能吃", "吃不了", "不喝", "不能喝", "不沾", "不碰"),
    "sport": ("运动", "锻炼", "健身", "体育", "球赛"),
    "hobby": ("爱好", "兴趣", "业余", "闲暇", "手工"),
    "instrument": ("乐器", "弹琴", "拉琴"),
    "music": ("音乐", "听歌", "歌曲", "歌手", "乐队"),
    "game": ("游戏", "手游", "端游"),
    "media": ("番", "看剧"),
    "exam": ("考试", "考", "证书", "资格证", "备考", "复习", "刷题"),
    "school": ("学校", "上学", "学生", "读书", "年级", "专业"),
    "job": ("工作", "上班", "职业", "公司", "单位", "行业", "打工", "上岗", "职员", "社畜"),
    "commute": ("通勤", "上班路"),
    "vehicle": ("汽车",),
    "language": ("语言", "外语", "方言"),
    "family": ("家人", "家里人", "亲戚", "孩子", "父母", "兄弟", "姐妹"),
    "sibling": ("兄弟姐妹",),
    "partner": ("对象", "伴侣"),
    "pet": ("宠物", "养了", "主子", "铲屎"),
    "animal": ("动物",),
    "eyes": ("眼睛", "视力", "度数"),
    "health": ("身体", "毛病", "生病", "病", "不舒服"),
    "appearance": ("长相",),
    "clock": ("每天",),
    "weekday": ("星期", "礼拜"),
    "schedule": ("安排", "日程", "计划"),
    "sleep": ("睡觉", "睡", "休息", "作息"),
    "name": ("名字", "叫", "称呼"),
    "color": ("颜色",),
    "device": (),
}
_GENERAL = frozenset(w for words in GENERAL.values() for w in words)

_SIGNATURE: dict[str, frozenset[str]] = {}
for _c in CLASSES:
    for _m in _c.members:
        _SIGNATURE[_m] = _SIGNATURE.get(_m, frozenset()) | {_c.name}
_MEMBERS = [
    (
        re.compile("|".join(re.escape(m) for m in sorted(c.members, key=len, reverse=True))),
        re.compile("|".join(re.escape(e) for e in c.excludes)) if c.excludes else None,
    )
    for c in CLASSES
    if c.members
]


@lru_cache(maxsize=16384)
def members_in(text: str) -> frozenset[str]:
    """The concept table's member words in `text` (longest first per class, excludes out)."""
    norm = normalize_text(text)
    found: set[str] = set()
    for members, excludes in _MEMBERS:
        body = excludes.sub(" ", norm) if excludes is not None else norm
        found.update(m.group(0) for m in members.finditer(body))
    return frozenset(found)


def instances(text: str) -> frozenset[str]:
    return frozenset(m for m in members_in(text) if m not in _GENERAL)


def sibling_mismatch(question: str, fact: str) -> bool:
    """An instance the question names, another instance of exactly its classes in the fact,
    and the first not in the fact (see the module)."""
    asked = instances(recall_question(question))
    if not asked:
        return False
    told = instances(fact)
    norm = normalize_text(fact)
    for x in asked:
        if x in norm:
            return False
    for x in asked:
        for y in told:
            if y != x and x not in y and y not in x and _SIGNATURE[y] == _SIGNATURE[x]:
                return True
    return False


_NOUN = re.compile(r"^(?:n|nr|ns|nz|nt|ng|vn|t)$")
_WH = frozenset({"什么", "啥", "哪", "谁", "几", "多少"})


@lru_cache(maxsize=4096)
def question_nouns(question: str) -> frozenset[str]:
    """The nouns of the question without its remember-frame, plus the table's members."""
    warm_up_word_tags()
    import jieba.posseg as pseg

    body = recall_question(question)
    words = {
        w
        for w, tag in pseg.lcut(body)
        if _NOUN.match(tag) and w not in _WH and not w.startswith("我")
    }
    return frozenset(words | members_in(body))


def head_mismatch(question: str, fact: str) -> bool:
    """None of the question's nouns, nor a class of theirs, is in the fact (see the module)."""
    nouns = question_nouns(question)
    if not nouns:
        return False
    norm = normalize_text(fact)
    classes = fact_concepts(fact)
    return not any(x in norm or query_concepts(x) & classes for x in nouns)


_WH_WORD = re.compile(r"什么|啥|哪|谁|几|多少|怎么|多大|多久")
_REFERENT = re.compile(r"^(?:n|nr|ns|nz|nt|ng|vn)$")


@lru_cache(maxsize=4096)
def referents(question: str) -> frozenset[str]:
    """What the question is about, not what it asks for: the nouns (and the table's members)
    before its first question word — "我骑的自行车是什么牌子" → 自行车 ("牌子", what is asked
    for, restricts the answer: an instance of it need not name it); the whole question when it
    has none ("我的星座吗")."""
    warm_up_word_tags()
    import jieba.posseg as pseg

    body = recall_question(question)
    wh = _WH_WORD.search(body)
    head = body[: wh.start()] if wh else body
    words = {w for w, tag in pseg.lcut(head) if _REFERENT.match(tag) and not w.startswith("我")}
    return frozenset(words | members_in(head))


def referent_mismatch(question: str, fact: str, share: float | None) -> bool:
    """The question is about X (`referents`); the fact names no X, shares none of X's classes
    and covers none of the question's classes (`share`, the concept share)."""
    nouns = referents(question)
    if not nouns or (share or 0.0) > 0.0:
        return False
    norm = normalize_text(fact)
    classes = fact_concepts(fact)
    return not any(x in norm or query_concepts(x) & classes for x in nouns)


# ---------------------------------------------------------------- as the bench's `adjust`


def veto(
    rule: Callable[[str, str], bool], floor: float
) -> Callable[[str, str, CandidateScore], float | None]:
    """Nothing for a fact `rule` calls unrelated to the question unless its cosine is at
    least `floor`."""
    return lambda q, fact, c: 0.0 if (c.embedding or 0.0) < floor and rule(q, fact) else None


def unclassed(
    rule: Callable[[str, str], bool],
) -> Callable[[str, str, CandidateScore], float | None]:
    """The fusion without the concept share for a fact `rule` calls unrelated."""
    return lambda q, fact, c: (
        0.7 * (c.embedding or 0.0) + 0.3 * (c.bm25 or 0.0) if rule(q, fact) else None
    )


def either(
    *rules: Callable[[str, str, CandidateScore], float | None],
) -> Callable[[str, str, CandidateScore], float | None]:
    def adjust(q: str, fact: str, c: CandidateScore) -> float | None:
        for rule in rules:
            if (v := rule(q, fact, c)) is not None:
                return v
        return None

    return adjust
