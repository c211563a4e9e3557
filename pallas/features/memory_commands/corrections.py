"""A 记住 that corrects, without a model: which live fact it replaces, chosen by meaning (pure).

The teaching judge (`update_judge`) decides by meaning when the cheap model answers; the slot
rules (`denials.rule_update`) know the slots they were written for (residence, job, pets …).
For everything else, when no model answered, a teaching corrects when

- it says so (`read_correction`): it opens with 不对 / 错了 / 更正一下 / 纠正一下 / 订正 …, or names
  what it replaces as void ("之前的游戏ID作废了，新ID是…", "每周二游泳过时了，现在…"). The
  marker is not part of the fact stored ("不对，我的血型是O型" stores "TA的血型是O型");
- or it gives a new value for a thing already known (`same_frame`): the two facts say the same
  around a different value ("TA的座右铭是天道酬勤" → "TA的座右铭是知行合一", "每天走八千步" →
  "每天走一万五千步"), where the thing is single-valued (not "会说日语" → "会说韩语": one speaks
  both);
- or it tells a change in other words (`tells_change`: a verb of change — "把头发染成栗色了",
  "涨工资了，现在月薪一万", "换手机号了", "改学西班牙语了" — or "现在…了", a new state) and the
  encoder finds ONE live fact close and clearly nearest (`memory.meaning.clearly_nearest`):
  the thing it changed. Only with vectors: the words of "换了新的床垫" and "换了新的窗帘"
  are no evidence, and their cosine (0.59) is no clear lead either (0.03 over the next).

`choose_replaced` picks the ONE live fact it replaces: by the sentence encoder's cosine when
vectors are given (`pallas.providers.sentence_encoder`, offline, in-process), plus what the two
share in words; without vectors by the words alone. An explicit marker with nothing close enough
retires nothing ("纠正一下，我其实不吃香菜" when no food fact is known): the new fact is added.
The thresholds were tuned on `benchmarks/_memory_corrections_dev.py`, never on the frozen set.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from pallas.features.memory import ALREADY, CHANGE_PARTICLE, CLAUSE_ENDS, clearly_nearest, related
from pallas.ranking import normalize_text

# denials' vocabulary of a change told in words, plus a colon or an enumeration comma
_SEP = rf"[\s:：、{CLAUSE_ENDS}]"
# Markers that open the line (repeated: "不对不对，…", "不对，更正一下：…").
_LEAD = re.compile(
    rf"^(?:(?:之前|刚才|上次|前面)?(?:我)?(?:说|记|写)?(?:的)?"
    rf"(?:不对|错了|说错了|记错了|搞错了|弄错了|说反了|更正|纠正|订正|修正|改正|更新|作废|过时)"
    rf"(?:一下|了|下)?(?:不对)*{_SEP}+)+"
)
# A thing named void before the new value: "<topic>作废了，<rest>" / "<topic>过时了，<rest>".
_TOPIC = re.compile(
    rf"^(?P<topic>[^,，。.!！;；]{{1,16}}?){ALREADY}?(?:作废|过时|不对|错了|不算数?|不算了)"
    rf"{CHANGE_PARTICLE}?{_SEP}+(?P<rest>.+)$"
)
_TOPIC_LEAD = re.compile(r"^(?:之前|以前|原来|刚才|上次|前面)?(?:我)?(?:说|记|写)?(?:的|那个)?")
# Time words that say "now" without changing what the fact is about.
_NOW = re.compile(r"现在|目前|如今|最近|已经|后来|今年|改成了?|换成了?|变成了?")
_CONTENT = re.compile(r"[\u4e00-\u9fff]|[a-z0-9]+")
# A many-valued thing: a different value is one more, not a correction ("会说日语" → "会说韩语").
_MANY = re.compile(
    r"(?:会说|会做|会|喜欢|爱|爱吃|爱看|养了?|去过|学过|玩过|看过|吃过|读过|在学|收藏了?|买了|想去"
    r"|认识|讨厌|怕|也|还|有|觉得自己|觉得|认为自己|认为)$"
)

# "养了一盆" → "养了", "去过一次" → "去过"
_COUNTED = re.compile(r"(?:一|两|几|\d+)?[盆只个条本台辆双件张位棵株套次趟回遍]$")

# Tuned on the development half (benchmarks/_memory_corrections_dev.py).
EXPLICIT_MIN_COS = 0.55  # an explicit marker: the encoder alone says it is the same thing
EXPLICIT_MIN_COS_SHARED = 0.3  # ... or, lower, when they also share words
EXPLICIT_MIN_SHARED = 0.2  # share of the smaller fact's character bigrams, without vectors too
SHARED_WEIGHT = 0.5
FRAME_BONUS = 0.3
MARGIN = 0.05  # an explicit marker between two close candidates retires neither
# a verb of change with its result or direction ("染成", "搬到", "改学", "换了"), a clause with
# such a verb closed by the change particle ("换手机号了"), "现在…了": a new state, or a loss
# closed by it ("多肉死掉了", "猫走丢了", "山地车被偷了", "卖掉了"): the thing is no more. Not
# damage ("屏幕摔坏了"): the thing is still there.
_CHANGE_VERB = "换改染搬涨降升转"
_LOSS = "死|去世|走丢|丢|被偷|被抢|卖|送人|送走"
_CLOSED = rf"{CHANGE_PARTICLE}(?:[{CLAUSE_ENDS}]|$)"
_CHANGE = re.compile(
    rf"[{_CHANGE_VERB}变](?:了|成|到|去|学|用)"
    rf"|[{_CHANGE_VERB}][^{CLAUSE_ENDS}]{{0,8}}?{_CLOSED}"
    rf"|现在[^{CLAUSE_ENDS}]{{1,12}}?{_CLOSED}"
    rf"|(?:{_LOSS})[^{CLAUSE_ENDS}]{{0,2}}?{_CLOSED}"
)


@dataclass(frozen=True, slots=True)
class Correction:
    """A teaching read for a correction: `body` is what to store (the marker left out), `query`
    what to look the replaced fact up by (with the thing named void)."""

    explicit: bool
    body: str
    query: str
    marker: str = ""


def read_correction(text: str) -> Correction:
    """The teaching without its correction marker, and whether it had one."""
    body = text.strip()
    lead = _LEAD.match(body)
    marker = ""
    if lead is not None and lead.end() < len(body):
        marker, body = lead.group(0).strip(" ,，。:：、~～"), body[lead.end() :].strip()
    topic = _TOPIC.match(body)
    if topic is not None:
        named = _TOPIC_LEAD.sub("", topic.group("topic")).strip()
        rest = topic.group("rest").strip()
        marker = marker or "作废"
        if named and not rest.startswith(("我", "俺")) and not _bigrams(named) & _bigrams(rest):
            rest = named.rstrip("的") + rest  # "我的血型不对，是O型" → "我的血型是O型"
        return Correction(True, rest, f"{named} {rest}", marker)
    return Correction(bool(marker), body, body, marker)


def tells_change(text: str) -> bool:
    """Whether a plain teaching tells a change ("我把头发染成栗色了", "我现在用iPad了"), not
    only a fact ("我喜欢看蚂蚁搬家", "我现在在读高二")."""
    return _CHANGE.search(normalize_text(text)) is not None


def needs_vectors(correction: Correction, new_fact: str, live: Sequence[tuple[int, str]]) -> bool:
    """Whether the encoder has anything to decide: an explicit marker (which fact?), a change
    told in words (which fact changed?), or more than one fact of the same frame. A plain new
    fact with none of these is simply added."""
    if correction.explicit or tells_change(correction.body):
        return bool(live)
    return sum(same_frame(new_fact, text) for _, text in live) > 1


def _core(text: str) -> str:
    body = normalize_text(text).replace(" ", "")
    body = re.sub(r"^(?:ta|我|俺)", "", body)
    return _NOW.sub("", body.replace("ta", ""))


def _bigrams(text: str) -> frozenset[str]:
    units = _CONTENT.findall(_core(text))
    grams = {a + b for a, b in itertools.pairwise(units) if len(a) == len(b) == 1}
    grams.update(u for u in units if len(u) > 1)  # a Latin word or a number is a unit
    return frozenset(grams)


def shared(a: str, b: str) -> float:
    """The share of the smaller fact's character bigrams (Latin words, numbers) the other has."""
    ga, gb = _bigrams(a), _bigrams(b)
    if not ga or not gb:
        return 0.0
    return len(ga & gb) / min(len(ga), len(gb))


def same_frame(new: str, old: str) -> bool:
    """The two facts say the same around a different value of a single-valued thing: a common
    head and tail (in characters, a number or a Latin word counting one) at least as long as the
    longer value and naming something (not just "的"). "TA的体重是65公斤" / "TA的体重是70公斤":
    head "的体重是", tail "公斤"."""
    a, b = _core(new), _core(old)
    if not a or not b or a == b:
        return False
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    while head and a[head - 1].isalnum() and a[head - 1].isascii():
        head -= 1  # never split a number or a Latin word: "第10" / "第11" differ in the number
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    while tail and a[len(a) - tail].isalnum() and a[len(a) - tail].isascii():
        tail -= 1
    value_a, value_b = a[head : len(a) - tail], b[head : len(b) - tail]
    if not value_a or not value_b or "不" in value_a + value_b or "没" in value_a + value_b:
        return False
    if a[:head].endswith("第"):  # "第2张…" / "第14张…": an ordinal names another thing
        return False
    frame = len(_CONTENT.findall(a[:head].lstrip("的"))) + len(_CONTENT.findall(a[len(a) - tail :]))
    if frame < 2 or _MANY.search(_COUNTED.sub("", a[:head])):
        return False
    # a number or a Latin word is one unit of a value ("172" / "178")
    if frame < max(len(_CONTENT.findall(value_a)), len(_CONTENT.findall(value_b))):
        return False
    # one value in place of another, not two differences around a shared middle ("第8张…杭州"
    # / "第3张…广州" share "张明信片是从": two values, so two different things)
    pairs_a = set(itertools.pairwise(_CONTENT.findall(value_a)))
    return not pairs_a & set(itertools.pairwise(_CONTENT.findall(value_b)))


@dataclass(frozen=True, slots=True)
class Replaced:
    item_id: int
    reason: str  # "meaning:explicit" / "meaning:frame" / "words:explicit" …
    score: float


def choose_replaced(
    correction: Correction,
    new_fact: str,
    live: Sequence[tuple[int, str]],
    cosines: Sequence[float] | None = None,
) -> Replaced | None:
    """The one live fact (id, text) `new_fact` replaces, or None (it is added beside them).

    `cosines[i]`: the encoder's cosine of the correction's query and `live[i]` (None: no
    encoder; the words decide)."""
    scored: list[tuple[float, bool, float, float, int]] = []
    for n, (item_id, text) in enumerate(live):
        frame = same_frame(new_fact, text)
        words = shared(correction.query, text)
        cos = cosines[n] if cosines is not None else 0.0
        score = cos + SHARED_WEIGHT * words + (FRAME_BONUS if frame else 0.0)
        scored.append((score, frame, cos, words, item_id))
    if not correction.explicit:  # a plain teaching: a fact of the same frame, or a change
        framed = [row for row in scored if row[1]]
        if not framed:
            return _changed(correction, live, cosines) if cosines is not None else None
        scored = framed
    scored.sort(reverse=True)
    if not scored:
        return None
    score, frame, cos, words, item_id = scored[0]
    by = "meaning" if cosines is not None else "words"
    if frame:
        return Replaced(item_id, f"{by}:frame", score)
    if not correction.explicit:
        return None
    close = (
        cos >= EXPLICIT_MIN_COS or (cos >= EXPLICIT_MIN_COS_SHARED and words >= EXPLICIT_MIN_SHARED)
        if cosines is not None
        else words >= EXPLICIT_MIN_SHARED
    )
    if not close or (len(scored) > 1 and score - scored[1][0] < MARGIN):
        return None
    return Replaced(item_id, f"{by}:explicit", score)


def _changed(
    correction: Correction, live: Sequence[tuple[int, str]], cosines: Sequence[float]
) -> Replaced | None:
    """A change told in words: the fact the encoder finds close and clearly nearest of ALL
    the live facts (the lead is the encoder's certainty, measured against every fact), when it
    is `related` to the line."""
    if not tells_change(correction.body):
        return None
    at = clearly_nearest(cosines)
    if at is None or not related(correction.body, live[at][1]):
        return None
    return Replaced(live[at][0], "meaning:change", cosines[at])
