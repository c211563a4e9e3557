"""Candidates past the similarity gate that still do not answer the question.

A block may gate out, after the similarity gate, a candidate that is near the question's topic
but about something else; each rule is a block switch, gates a candidate by setting `gated`
and its score to 0, and is listed on its own in the trace (`trace.RetrievalTrace`):

- `match_subject`: about one of the member's people the question does not ask about
  ("TA女儿…" for "我儿子…", or for a question about the member), or naming none of the people
  the question asks about ("TA喜欢给文件起很长的名字" for "我老婆叫什么"; `subjects`);
- `match_instance`: naming another instance of a class than the question names ("TA过年喜欢
  守岁" for "我的生日是哪天"; `instances`), unless its cosine reaches `instance_min_cosine`;
  for a yes-or-no question, which asks about the instance it names, also naming none of its
  class ("TA冬天喜欢吃糖葫芦" for "我喜欢吃包子吗"), unless its cosine reaches
  `yes_no_min_cosine` (only with a cosine: without vectors the words are all there is);
- `match_answer_type`: telling no number for a question asking one ("TA从不午睡" for "我几点
  起床"; `answer_type`), unless its cosine reaches `answer_type_min_cosine`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

from pallas.ranking.answer_type import asks_number, asks_yes_no, tells_number
from pallas.ranking.candidate import MemoryCandidate
from pallas.ranking.candidate_score import CandidateScore
from pallas.ranking.instances import (
    asked_instances,
    named_instances,
    names_none_of_class,
    other_instance,
)
from pallas.ranking.subjects import (
    about_someone_else,
    fact_about,
    names_none_of,
    question_about,
)
from pallas.ranking.weights import BlockRetrievalConfig


class Vetoed(NamedTuple):
    """The candidates kept (in their order) and those each rule gated."""

    kept: list[CandidateScore]
    subject: list[CandidateScore]
    instance: list[CandidateScore]
    answer_type: list[CandidateScore]


def veto(
    passed: list[CandidateScore],
    by_id: Mapping[str, MemoryCandidate],
    query: str,
    block: BlockRetrievalConfig,
) -> Vetoed:
    """`passed` (past the similarity gate, ranked) through the block's rules, in turn."""

    def text(s: CandidateScore) -> str:
        return by_id[s.id].text

    kept = passed
    subject: list[CandidateScore] = []
    instance: list[CandidateScore] = []
    answer_type: list[CandidateScore] = []
    if block.match_subject and kept:
        asked = question_about(query)
        kept, subject = _split(
            kept,
            lambda s: (
                about_someone_else(fact_about(text(s)), asked) or names_none_of(text(s), asked)
            ),
        )
    named = asked_instances(query) if block.match_instance and kept else None
    if named:
        floor = block.instance_min_cosine
        silent = block.yes_no_min_cosine if asks_yes_no(query) else None

        def elsewhere(s: CandidateScore) -> bool:
            told = named_instances(text(s))
            if other_instance(named, told):
                return not _close(s, floor)
            return (
                silent is not None
                and s.embedding is not None
                and not _close(s, silent)
                and names_none_of_class(named, told)
            )

        kept, instance = _split(kept, elsewhere)
    number = asks_number(query) if block.match_answer_type and kept else None
    if number is not None:
        floor = block.answer_type_min_cosine
        kept, answer_type = _split(
            kept, lambda s: not _close(s, floor) and not tells_number(text(s), number)
        )
    return Vetoed(kept, subject, instance, answer_type)


def _close(s: CandidateScore, min_cosine: float) -> bool:
    """The encoder finds it very close anyway: no rule overrides that."""
    return s.embedding is not None and s.embedding >= min_cosine


def _split(
    items: Sequence[CandidateScore], vetoed: Callable[[CandidateScore], bool]
) -> tuple[list[CandidateScore], list[CandidateScore]]:
    """(the items kept, in order; the vetoed ones, gated with score 0)."""
    kept: list[CandidateScore] = []
    out: list[CandidateScore] = []
    for s in items:
        if vetoed(s):
            out.append(s._replace(gated=True, score=0.0))
        else:
            kept.append(s)
    return kept, out
