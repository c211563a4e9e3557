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
from pallas.features.memory.text import STOPWORDS, normalize_text, tokenize

_SUBJECT = re.compile(r"^(?:ta|我|本人|俺)")
# clauses: punctuation, a contrast, or a space before the speaker ("牛牛 我已经不养猫了")
_CLAUSES = re.compile(r"[,，。.!！;；~～\n]+|但是|不过|可是|\s+(?=我|俺)")
_END_NOISE = re.compile(r"[啊呀哦哈嘛吧~～!！。.\s]+$")
_QUESTION = re.compile(r"[?？]|(?:吗|么|呢|没有|是不是)$")
# a habit given up: information of its own ("戒烟了")
_QUIT = re.compile(r"^(?:已经|早就|终于|现在)?戒(?:掉)?了?(?P<obj>[^,]{1,8}?)(?:了|啦)?$")
# a change told with a negation: a lead word, or 不再 / 再也不, or a bare 不 / 没 closed by 了
_NEG_LEAD = re.compile(
    r"^(?:已经|早就|早都|现在|都)+(?:不再|再也不|没再|没有再|不|没有|没)(?P<obj>[^,]{1,12}?)(?:了|啦)?$"
)
_NEG_AGAIN = re.compile(r"^(?:不再|再也不|再也没|没再|没有再)(?P<obj>[^,]{1,12}?)(?:了|啦)?$")
_NEG_DONE = re.compile(r"^(?:不|没)(?P<obj>[^,]{1,12}?)(?:了|啦)$")
_LEFT = re.compile(r"^(?:已经|早就)?(?:从[^,]{1,12}?)?(?:辞职|离职|退学|被裁)(?:了|啦)?$")
_NEGATED = re.compile(r"不|没|戒")


@dataclass(frozen=True, slots=True)
class Denial:
    """A statement that an old fact of the speaker no longer holds."""

    fact: str  # in the third person, as stored: "TA已经不养猫了"
    obj: str  # what is denied, in the member's words: "养猫"
    keep: bool  # information of its own (a habit given up): stored as the new fact
    reason: str


def _body(text: str) -> str | None:
    """The clause without its first-person subject, or None when it is not about the speaker
    ("我朋友…", "小王…") or asks something."""
    clause = normalize_text(text).replace(" ", "")
    if not clause or _QUESTION.search(clause):
        return None
    clause = _END_NOISE.sub("", clause)
    subject = _SUBJECT.match(clause)
    if subject is None:
        return None
    return clause[subject.end() :]


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
            return Denial(fact, match.group("obj"), False, f"negation:{name}")
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
    """The member's positive facts that the denial's object is found in."""
    if not denial.obj:
        return ()
    need = 1 if denial.keep else 2  # "戒烟" names its habit in one character
    return tuple(
        i for i, text in live if _positive(text) and overlaps(denial.obj, text, min_chars=need)
    )


def rule_update(new_text: str, live: Sequence[tuple[int, str]]) -> Judgement:
    """What storing `new_text` does to the member's live facts `live` (id, text), by rules."""
    new_slot = parse_slot(new_text)
    decision = decide_update(new_slot, [(i, parse_slot(t)) for i, t in live])
    if decision.retire_ids:
        keep = decision.action == "replace" or (
            new_slot is not None and new_slot.name.startswith("like:")  # a dislike informs
        )
        op: Op = "update" if keep else "deny"
        return Judgement(op, decision.retire_ids, "rule", decision.reason)
    denial = read_denial(new_text)
    if denial is None:
        return Judgement("add", (), "rule", decision.reason)
    denied = denied_by_overlap(denial, live)
    if not denied:
        return Judgement("add", (), "rule", f"denial_without_match:{denial.reason}")
    return Judgement(
        "update" if denial.keep else "deny", denied, "rule", f"overlap:{denial.reason}"
    )
