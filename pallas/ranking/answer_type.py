"""What kind of value a question asks for, and whether a fact tells one.

A wh-question expects an answer of a type: "我几岁了" a number, "我几点起床" a clock time.
A fact with no value of that type cannot answer it, however close its topic: "TA过年喜欢守岁"
(cosine 0.60 with "我几岁了", the shared 岁) or "TA从不午睡" (0.60 with "我几点起床") name
no number and no time of day. The person-facts block gates such a fact out unless the encoder
finds it very close (`scoring`, `match_answer_type`, `answer_type_min_cosine`).

Only the number is checked, the one type a pattern reads reliably on both sides: a question
with 几 and a measure word (几岁, 几点, 几号, 几年级, 几次; not 几乎 or 茶几) asks for a count or
an ordinal; a fact tells one with a digit or a Chinese numeral (一 … 十, 百, 千, 万, 两, 半, 零).
几点 is answered by a part of the day too ("TA半夜起来": 半夜). Lenient on the fact's side on
purpose: "一直", "一起" count as a number, so only a fact with no numeral at all is gated.
多少 and 多久 are left out: they ask for an amount or a degree as often, which members tell in
words ("我一次能喝多少酒" → "TA酒量不行，喝点白酒就上头", a fact of the extra development set
`benchmarks._member_recall_extra` this rule gated while it still read 多少; "很久").

A yes-or-no question ("我说过我养猫吗", "我是不是去过日本") names its value instead of asking
for one, so a fact of the same class names another value, not the answer: "我跟你说过我去过
新疆吗" → "TA在成都读大三" (place), "我是不是喜欢喝咖啡" → "TA对绿茶没什么感觉" (drink).
`asks_yes_no` tells such a question; with vectors its class match is a bonus only, never the
raise that passes the gate alone (`scoring.concept_bonus`). A remembered noun phrase ("你记得
我的生日吗", "我跟你讲过我最喜欢的电影吗") asks for the value, so a 的 in what is asked keeps it
a value question.

A question asking only for a name ("我婆婆叫什么", "我的民宿叫什么") is no better answered by its
class: every fact telling a name of anything ("TA家仓鼠取名叫奶盖") has the name class, which
says how a thing is told, not what it is. `class_answers_alone` is false for both kinds.
"""

from __future__ import annotations

import re
from functools import lru_cache

from pallas.ranking.text import normalize_text, question_parts, recall_question

# 几 with a measure word after it (not 几乎 / 几何 / 茶几), asking: not the "a few" of 这几天 /
# 前几天 / 好几年 / 没几个, nor the approximate 十几 / 二十几
_ASKS_NUMBER = re.compile(
    r"(?<![茶这那前后过好没十百千万两一二三四五六七八九])几(?![乎何])[\u4e00-\u9fff]"
)
_NUMBER = re.compile(r"[0-9零〇一二三四五六七八九十百千万亿两半俩仨]")
_PART_OF_DAY = re.compile(r"早上|上午|中午|下午|晚上|凌晨|半夜|深夜|傍晚|清早|早晨|夜里|夜间")
CLOCK = "几点"
# a 吗 / 嘛 closing the question, or an A-not-A verb
_YES_NO = re.compile(r"[吗嘛][?!.\s]*$|是不是|有没有|会不会|能不能|要不要|对不对|是否")
# a question word: the question asks for a value (干嘛 before the particle 嘛 is read)
_QUESTION_WORD = re.compile(
    r"什么|啥|哪|谁|几|多少|多久|多大|多高|多长|多远|怎么|怎样|如何|为什么|为何|干嘛"
)


@lru_cache(maxsize=4096)
def asks_number(question: str) -> str | None:
    """What the question asks a number with ("几岁", "几点", "几号"), None when it asks none
    (the remember-frame removed first: "你还记得…吗") — or when it asks two things or more
    and one of them is no number ("我几岁了，住在哪": a fact may answer the other clause;
    `text.question_parts`)."""
    parts = question_parts(question)
    clauses = parts[1:] or parts
    asked = [m for m in (_ASKS_NUMBER.search(normalize_text(p)) for p in clauses) if m]
    return asked[0].group(0) if asked and len(asked) == len(clauses) else None


def tells_number(fact: str, asked: str) -> bool:
    """Whether `fact` tells a number (for `asked` 几点, a part of the day as well). The
    member's placeholder "TA" is no number; digits are NFKC-normalised."""
    norm = normalize_text(fact)
    if _NUMBER.search(norm):
        return True
    return asked == CLOCK and _PART_OF_DAY.search(norm) is not None


@lru_cache(maxsize=4096)
def asks_yes_no(question: str) -> bool:
    """Whether the question asks yes or no rather than for a value (see the module): a 吗 at
    its end or an A-not-A verb (是不是, 有没有 …), no question word anywhere, and no 的 in what
    is asked ("你记得我的生日吗" asks for the birthday)."""
    norm = normalize_text(question)
    if _QUESTION_WORD.search(norm) or not _YES_NO.search(norm):
        return False
    return "的" not in recall_question(question)


# classes that say how a thing is told, not what it is about: 叫 names anything
FRAME_CLASSES = frozenset({"name"})


def class_answers_alone(question: str, asked: frozenset[str]) -> bool:
    """Whether a fact's class match alone can answer `question`, which asks the concept
    classes `asked`: not for a yes-or-no question (it names its value) nor for one asking only
    frame classes (`FRAME_CLASSES`: "我婆婆叫什么" is not answered by "TA家仓鼠取名叫奶盖")."""
    return not (asks_yes_no(question) or asked <= FRAME_CLASSES)
