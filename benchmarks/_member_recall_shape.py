"""The shape of the member-recall sets (issue 47): one fact, one question, one update.

Both halves (`_member_recall_frozen`, the test half; `_member_recall_data`, the development
half) are tuples of these records; `benchmarks.member_recall` teaches and asks them.
Every text a member "types" is what follows "@牛牛 " (a 记住 teaching carries its "记住 ").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

QuestionKind = Literal["direct", "paraphrase", "category"]


@dataclass(frozen=True, slots=True)
class MemberFact:
    """A fact a member teaches about themselves and asks about days later in other words.

    `answer` is a fragment of the stored fact (the taught text with 我 → TA) and of no other
    fact of that member: the fact "reaches the request" when the fragment is in the request.
    `kind`: direct (the question shares the fact's content word), paraphrase (the same thing
    in other words), category (the question names a class the fact is an instance of).
    """

    member: int
    taught: str  # after "记住 ", first person
    question: str
    answer: str
    kind: QuestionKind


@dataclass(frozen=True, slots=True)
class NegativeControl:
    """A question about something `member` never said (neither a fact nor a distractor)."""

    member: int
    question: str


@dataclass(frozen=True, slots=True)
class Correction:
    """`old` taught with 记住, then `new` taught with 记住; the new value must replace the old.

    `marker`: the new line opens with an explicit marker (不对 / 更正一下 / 纠正一下 / 作废 /
    过时了); otherwise it is only a new value for something already known.
    """

    old: str
    new: str
    question: str
    new_answer: str
    old_answer: str
    marker: bool


@dataclass(frozen=True, slots=True)
class Denial:
    """`old` taught with 记住, then `line` says it no longer holds; the old fact must go.

    `via`: "teach" — `line` is a 记住 teaching; "chat" — `line` is said to the bot in plain chat.
    """

    old: str
    line: str
    question: str
    old_answer: str
    via: Literal["teach", "chat"]
