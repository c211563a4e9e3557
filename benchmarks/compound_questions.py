"""Compound questions (issue 47): how a question asked in clauses should be encoded.

A question asked in clauses is encoded clause by clause (`pallas.ranking.text.encoded_parts`);
a fact's cosine is its best over them. Until 2026-12-07 the whole question was encoded too.
The encode is the largest piece of an @'s wait for memory (`benchmarks.reply_turn --encoder`:
three parts take ~5.5 ms of the encoder's process, one ~3 ms), and no quality bench asked
anything in clauses, so this one measures the choice on the DEVELOPMENT half only: the
member-recall dev facts (`member_recall_fusion.members`: each member's facts padded with
distractors to `--facts`) and new compound questions written for it
(`_compound_questions_data`). Pure ranking, in-process, the product's `retrieve` with the
person-facts block's gate and threshold, the cosine passed as the vector index would.

Per way of encoding: the asks whose fact is among the first five past the gate, ungated, and
first; the questions with every ask in the first five; the encode's time (p50 of the parts of
each question, this process's encoder).

    python -m benchmarks.compound_questions [--facts 50]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence

from benchmarks._compound_questions_data import QUESTIONS, CompoundQuestion
from benchmarks.member_recall_fusion import NOW, OPEN, SCOPE, members
from benchmarks.stats import percentile
from pallas.features.memory.config import RetrievalConfig
from pallas.features.memory.items import to_candidate
from pallas.features.memory.records import MemoryItem
from pallas.providers.sentence_encoder import LocalEncoder, Matrix, load_local_encoder
from pallas.ranking import encoded_parts, question_parts, retrieve, speaker_voice

WAYS: dict[str, Callable[[str], tuple[str, ...]]] = {
    "the clauses (the product, `encoded_parts`)": encoded_parts,
    "the whole and the clauses (before 2026-12-07)": question_parts,
    "the whole only": lambda q: question_parts(q)[:1],
}


def _ranks(
    q: CompoundQuestion, rows: Sequence[MemoryItem], cosines: dict[str, float], gated: bool
) -> list[int | None]:
    """Each ask's rank (0-based) among the member's facts chosen by `retrieve`, None if out."""
    config = RetrievalConfig()
    config = config.model_copy(update={"concept_weight": config.concept_weight_with_vectors})
    if not gated:
        config = config.model_copy(update={"person_facts": OPEN})
    else:
        block = config.person_facts.model_copy(update={"top_k": 500, "max_chars": 100_000})
        config = config.model_copy(update={"person_facts": block})
    result = retrieve(q.question, [to_candidate(i) for i in rows], kind="person_facts",
                      now=NOW, allowed_scopes={SCOPE}, config=config,
                      semantic_scores=cosines)  # fmt: skip
    by_ref = {i.ref: i.text for i in rows}
    texts = [by_ref[c.id] for c in result.chosen]
    return [next((n for n, t in enumerate(texts) if answer in t), None) for answer in q.answers]


def measure(
    encoder: LocalEncoder,
    way: Callable[[str], tuple[str, ...]],
    rows: dict[int, list[MemoryItem]],
    vectors: dict[int, Matrix],
) -> dict[str, int]:
    """The counts of one way of encoding; `vectors`: each member's facts, encoded once."""
    counts = {"asks": 0, "first five": 0, "ungated five": 0, "first": 0, "all asks": 0}
    for q in QUESTIONS:
        mine = rows[q.member]
        asked = encoder.encode_sync(list(way(q.question)))
        best = (asked @ vectors[q.member].T).max(axis=0)
        cosines = {i.ref: min(max(float(c), 0.0), 1.0) for i, c in zip(mine, best, strict=True)}
        gated, ungated = _ranks(q, mine, cosines, True), _ranks(q, mine, cosines, False)
        counts["asks"] += len(q.answers)
        counts["first five"] += sum(r is not None and r < 5 for r in gated)
        counts["ungated five"] += sum(r is not None and r < 5 for r in ungated)
        counts["first"] += sum(r is not None and r < len(q.answers) for r in gated)
        counts["all asks"] += all(r is not None and r < 5 for r in gated)
    return counts


def encode_ms(encoder: LocalEncoder, rounds: int = 5) -> dict[str, float]:
    """Each way's encode of a question, p50 over the questions and rounds; the ways take
    turns question by question, so a shared machine's drift falls on all of them alike."""
    spent: dict[str, list[float]] = {name: [] for name in WAYS}
    for _ in range(rounds):
        for q in QUESTIONS:
            for name, way in WAYS.items():
                parts = list(way(q.question))
                started = time.perf_counter()
                encoder.encode_sync(parts)
                spent[name].append((time.perf_counter() - started) * 1000)
    return {name: percentile(ms, 50) for name, ms in spent.items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--facts", type=int, default=50)
    args = parser.parse_args(argv)
    encoder = load_local_encoder()
    if encoder is None:
        raise SystemExit("the sentence encoder did not load")
    print(f"{len(QUESTIONS)} compound questions (dev), {args.facts} facts a member\n")
    print("| encoded | asks in the first five | ungated | among the first n | every ask "
          "| encode p50 |\n|---|---|---|---|---|---|")  # fmt: skip
    timing = encode_ms(encoder)
    rows = members(args.facts)
    vectors = {
        m: encoder.encode_sync([speaker_voice(i.text) for i in its]) for m, its in rows.items()
    }
    for name, way in WAYS.items():
        c = measure(encoder, way, rows, vectors)
        n = c["asks"]
        print(f"| {name} | {c['first five']}/{n} | {c['ungated five']}/{n} | {c['first']}/{n} "
              f"| {c['all asks']}/{len(QUESTIONS)} | {timing[name]:.2f} ms |")  # fmt: skip


if __name__ == "__main__":
    main()
