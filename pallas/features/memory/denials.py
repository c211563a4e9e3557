"""What a member's new statement does to their stored facts, by rules: the offline fallback.

The extraction model and the teaching judge decide updates and denials by meaning
(`judgement`); these rules decide when no model answered (unavailable, failed, over budget):

- `rule_update(new, live)`: a new fact of the member against their live facts — first the
  slots (`slots.decide_update`: a new residence replaces the old one, "已经不住海淀了" denies
  it), then a denial told in words no slot knows ("不再喝咖啡了", "戒烟了", "早就不玩原神了"),
  matched to the old fact by content overlap (jieba words of what is denied, all found in the
  old fact);
- `chat_denials(text)`: the denials in a plain chat message, clause by clause. Only the
  speaker's own ("我已经不养猫了", not "我朋友不养猫了"), only a change ("已经 / 早就 / 不再 /
  戒 / 辞职 / …了": "我不养猫" states a fact, it retracts nothing), never a question.

What a denial leaves behind: a bare negation ("已经不住海淀了", "不养猫了", "辞职了") only says an
old fact no longer holds, so it is kept as history (the retired fact's `replaced_by`) and never
injected: op "deny". A negation that is information of its own — a habit given up ("戒烟了": the
bot should not offer a cigarette) or a dislike ("不喜欢猫了") — is stored as the new fact: op
"update".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pallas.features.memory.judgement import Judgement, Op
from pallas.features.memory.slots import decide_update, parse_slot
from pallas.ranking import STOPWORDS, fact_concepts, normalize_text, tokenize

# The words of a change told in words, shared with the correction reader
# (`memory_commands.corrections`): what ends a clause, "already", the particle that closes a change.
CLAUSE_ENDS = ",，。.!！;；~～"
ALREADY = "(?:已经|早就)"
CHANGE_PARTICLE = "(?:了|啦)"

_SUBJECT = re.compile(r"^(?:ta|我|本人|俺)")
# clauses: punctuation, a contrast, or a space before the speaker ("牛牛 我已经不养猫了")
_CLAUSES = re.compile(rf"[{CLAUSE_ENDS}\n]+|但是|不过|可是|\s+(?=我|俺)")
_END_NOISE = re.compile(r"[啊呀哦哈嘛吧~～!！。.\s]+$")
_QUESTION = re.compile(r"[?？]|(?:吗|么|呢|没有|是不是)$")
# a habit given up: information of its own ("戒烟了")
_QUIT = re.compile(
    rf"^(?:已经|早就|终于|现在)?戒(?:掉)?了?(?P<obj>[^,]{{1,8}}?){CHANGE_PARTICLE}?$"
)
# a change told with a negation: a lead word, or 不再 / 再也不, or a bare 不 / 没 closed by 了
_NEG_LEAD = re.compile(
    r"^(?:已经|早就|早都|现在|都|决定|还是)+(?:不再|再也不|没再|没有再|不|没有|没)"
    rf"(?P<obj>[^,]{{1,12}}?){CHANGE_PARTICLE}?$"
)
# given up or called off: "退坑原神了", "原神我退坑了", "去青岛的计划取消了"
_DROPPED = re.compile(
    rf"^{ALREADY}?(?:退坑|弃坑|放弃|卸载|退出|删)了?(?P<obj>[^,]{{1,10}}?){CHANGE_PARTICLE}$"
)
_DROPPED_TOPIC = re.compile(
    rf"^(?P<obj>[^,]{{1,10}}?)(?:的计划|的行程|这事|这件事)?{ALREADY}?"
    rf"(?:退坑|弃坑|放弃|卸载|取消|泡汤|弃剧|黄)了?{CHANGE_PARTICLE}$"
)
# what a denied object says before its verb ("不能吃辣了", "不敢熬夜了"): not in the old fact
_MODAL = re.compile(r"^(?:能|会|敢|再|常|经常|怎么|太|咋|用|想)")
_NEG_AGAIN = re.compile(
    rf"^(?:不再|再也不|再也没|没再|没有再)(?P<obj>[^,]{{1,12}}?){CHANGE_PARTICLE}?$"
)
_NEG_DONE = re.compile(rf"^(?:不|没)(?P<obj>[^,]{{1,12}}?){CHANGE_PARTICLE}$")
_LEFT = re.compile(rf"^{ALREADY}?(?:从[^,]{{1,12}}?)?(?:辞职|离职|退学|被裁){CHANGE_PARTICLE}?$")
# the thing first, then the negation: "钢琴不学了", "黄山不去了", "英雄联盟(我)早就不玩了"
_TOPIC_NEG = re.compile(
    r"^(?P<topic>[^,不没]{1,8}?)(?:已经|早就|早都|现在|都|也)*(?:不再|再也不|没再|没有再|不|没)"
    rf"(?P<verb>[^,]{{1,6}}?){CHANGE_PARTICLE}$"
)
# a topic the speaker names is not another person ("我弟弟不读书了" is the brother's)
_PERSON = re.compile(
    r"他|她|你|朋友|同事|同学|室友|舍友|老公|老婆|对象|儿子|女儿|孩子|老师|领导|老板|邻居|家人"
    r"|[爸妈爷奶哥姐弟妹叔婶舅姨姑]|表|堂|亲戚"
)
# a supposition or a wish is no change ("如果我不养猫了会怎样")
_HYPOTHETICAL = re.compile(r"如果|要是|假如|万一|的话|假设|会不会|打算|想|可能|也许|或许")
# the speaker moves on to something else of the same kind: "改打羽毛球", "改去成都"
_SWITCH = re.compile(
    r"^(?:最近|现在|后来)?(?:改|换|转)(?:成|为)?(?P<verb>打|玩|学|练|听|看|去|追|骑|弹|跳|喝)"
    rf"(?P<obj>[^,]{{1,10}}?){CHANGE_PARTICLE}?$"
)
_NEGATED = re.compile(r"不|没|戒")
_VERB = re.compile(r"^(?:玩|弹|打|学|练|吃|喝|看|听|追|养|抽|用|开|骑|踢|跳|拉|吹|下)")


@dataclass(frozen=True, slots=True)
class Denial:
    """A statement that an old fact of the speaker no longer holds."""

    fact: str  # in the third person, as stored: "TA已经不养猫了"
    obj: str  # what is denied, in the member's words: "养猫"
    keep: bool  # information of its own (a habit given up): stored as the new fact
    reason: str


def _body(text: str) -> str | None:
    """The clause without its first-person subject, or None when it is not about the speaker
    ("我朋友…", "小王…"), asks something or supposes it. The subject may follow the thing
    denied ("英雄联盟我早就不玩了") or go unsaid before it ("黄山不去了")."""
    clause = normalize_text(text).replace(" ", "")
    if not clause or _QUESTION.search(clause) or _HYPOTHETICAL.search(clause):
        return None
    clause = _END_NOISE.sub("", clause)
    subject = _SUBJECT.match(clause)
    if subject is not None:
        return clause[subject.end() :]
    later = re.match(r"^(?P<topic>[^,]{1,8}?)(?:ta|我|俺)(?P<rest>.+)$", clause)
    if later is not None and not _PERSON.search(later.group("topic")):
        clause = later.group("topic") + later.group("rest")
    topic = _TOPIC_NEG.match(clause) or _DROPPED_TOPIC.match(clause)
    if topic is None or _PERSON.search(topic.group(1)):
        return None
    return clause


def read_denial(text: str) -> Denial | None:
    """The denial a first-person clause makes ("我已经不养猫了", "TA戒烟了"), or None."""
    body = _body(text)
    if not body:
        return None
    fact = f"TA{body}"
    quit_habit = _QUIT.match(body)
    if quit_habit is not None:
        return Denial(fact, quit_habit.group("obj"), True, "quit")
    if _LEFT.match(body):
        return Denial(fact, "", False, "left")
    for name, pattern in (("lead", _NEG_LEAD), ("again", _NEG_AGAIN), ("done", _NEG_DONE)):
        match = pattern.match(body)
        if match is not None:
            return Denial(fact, _MODAL.sub("", match.group("obj")), False, f"negation:{name}")
    for name, pattern in (("dropped", _DROPPED), ("dropped", _DROPPED_TOPIC)):
        match = pattern.match(body)
        if match is not None:
            return Denial(fact, match.group("obj"), False, name)
    topic = _TOPIC_NEG.match(body)
    if topic is not None and not _PERSON.search(topic.group("topic")):
        obj = topic.group("verb") + topic.group("topic")  # "学" + "钢琴"
        return Denial(fact, obj, False, "negation:topic")
    slot = parse_slot(fact)  # "家里的仓鼠去世了", "和女朋友分手了", "搬出宿舍了"
    changed = body.endswith(("了", "啦")) or re.search(r"已经|早就|不再|再也", body)
    if slot is not None and slot.negative and changed:  # "我不养猫" states, retracts nothing
        return Denial(fact, "", False, f"slot:{slot.name}")
    return None


def chat_denials(text: str) -> list[Denial]:
    """The speaker's denials in a plain chat message, one per clause that makes one."""
    out: list[Denial] = []
    for clause in _CLAUSES.split(text):
        denial = read_denial(clause)
        if denial is not None:
            out.append(denial)
    return out


def _content_chars(text: str) -> set[str]:
    return {ch for ch in normalize_text(text) if ch.isalnum() and ch not in STOPWORDS}


def overlaps(obj: str, old: str, *, min_chars: int = 2) -> bool:
    """Every jieba word of what is denied is a word of the old fact or spelled in it, and the
    denied part has at least `min_chars` content characters ("不玩了" names nothing)."""
    chars = _content_chars(obj)
    if len(chars) < min_chars:
        return False
    words = [w for w in tokenize(obj) if w not in ("ta",)]
    if not words:
        return False
    old_words, old_chars = set(tokenize(old)), _content_chars(old)
    return all(w in old_words or set(w) <= old_chars for w in words)


def _positive(text: str) -> bool:
    body = _SUBJECT.sub("", normalize_text(text))
    return not _NEGATED.search(body)


def denied_by_overlap(denial: Denial, live: Sequence[tuple[int, str]]) -> tuple[int, ...]:
    """The member's positive facts that the denial's object is found in; else, for a verb and
    its thing ("弹吉他"), those that name the thing ("喜欢玩吉他")."""
    if not denial.obj:
        return ()
    need = 1 if denial.keep else 2  # "戒烟" names its habit in one character
    found = tuple(
        i for i, text in live if _positive(text) and overlaps(denial.obj, text, min_chars=need)
    )
    thing = _VERB.sub("", denial.obj)
    if found or thing == denial.obj or len(thing) < 2:
        return found
    return tuple(i for i, text in live if _positive(text) and overlaps(thing, text, min_chars=1))


def rule_update(new_text: str, live: Sequence[tuple[int, str]]) -> Judgement:
    """What storing `new_text` does to the member's live facts `live` (id, text), by rules:
    the statement as a whole, else clause by clause ("TA不玩原神了，入坑星穹铁道了": the first
    clause denies, the second is news, so the statement is stored as the update)."""
    whole = _rule_update(new_text, live)
    clauses = [c for c in _CLAUSES.split(normalize_text(new_text)) if c]
    if whole.op != "add" or len(clauses) < 2:
        return whole
    retire: list[int] = []
    reasons: list[str] = []
    bare = True  # every clause only denies: the statement is history only
    for clause in clauses:
        judged = _rule_update(clause, live)
        bare = bare and judged.op == "deny"
        if judged.op != "add":
            retire.extend(judged.retire_ids)
            reasons.append(judged.reason)
    if not retire:
        return whole
    op: Op = "deny" if bare else "update"
    return Judgement(op, tuple(dict.fromkeys(retire)), "rule", "clauses:" + "+".join(reasons))


def _switched(new_text: str, live: Sequence[tuple[int, str]]) -> tuple[int, ...]:
    """A switch ("改打羽毛球" after "每周打篮球"): the member's positive facts with the same
    verb and an object of the same class (a sport for a sport, a place for a place)."""
    switch = _SWITCH.match(_SUBJECT.sub("", normalize_text(new_text)))
    if switch is None:
        return ()
    verb, classes = switch.group("verb"), fact_concepts(switch.group("obj"))
    out: list[int] = []
    for item_id, text in live:
        old = _SUBJECT.sub("", normalize_text(text))
        at = old.find(verb)
        if at < 0 or not _positive(text):
            continue
        if classes & fact_concepts(old[at + 1 :]) - {"hobby"}:
            out.append(item_id)
    return tuple(out)


def _rule_update(new_text: str, live: Sequence[tuple[int, str]]) -> Judgement:
    new_slot = parse_slot(new_text)
    decision = decide_update(new_slot, [(i, parse_slot(t)) for i, t in live])
    if decision.retire_ids:
        keep = decision.action == "replace" or (
            new_slot is not None and new_slot.name.startswith("like:")  # a dislike informs
        )
        op: Op = "update" if keep else "deny"
        return Judgement(op, decision.retire_ids, "rule", decision.reason)
    switched = _switched(new_text, live)
    if switched:
        return Judgement("update", switched, "rule", "switch")
    denial = read_denial(new_text)
    if denial is None:
        return Judgement("add", (), "rule", decision.reason)
    denied = denied_by_overlap(denial, live)
    if not denied:
        return Judgement("add", (), "rule", f"denial_without_match:{denial.reason}")
    return Judgement(
        "update" if denial.keep else "deny", denied, "rule", f"overlap:{denial.reason}"
    )
