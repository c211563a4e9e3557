"""A long-running member (issue #47): facts taught over months, not in one afternoon.

`benchmarks.member_recall` teaches a member's facts ten minutes apart and asks twenty days later,
so every fact is about as old as every other and recency never reorders them. In a real group a
member teaches over months, and every reply to them touches the facts it chose (`touch`:
`last_access_at` = then, `access_count` + 1), which recency and frequency then reward.

This bench, on the DEVELOPMENT sets only (`member_recall_gate.DEV_SETS`; the frozen halves are
never read here), stores each member's facts as the gate bench does, spreads their teaching
evenly over `--days` (the last one a day before the questions), then replays `--turns` earlier
replies to that member at random times (seeded): each a question of another dev set, retrieved
with the block as configured, touching what it chose. Then the set's questions are asked, and
the product's order is read as it reaches the request: the chosen facts, past the gate, the
vetoes and the relevance threshold, by relevance (`retrieve`'s `chosen_ids`, top-k and the char
cap opened). acc@1: the needed fact chosen first; kept: among the first five chosen. Per block
weights (similarity / recency / frequency), the same facts and the same replay.

    python -m benchmarks.member_recall_ages [--facts 50,200] [--days 120] [--turns 60]
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
from collections.abc import Sequence

from benchmarks.member_recall_gate import DEV_SETS, NOW, SCOPE, Asked, Cosines, encoder_cosines
from benchmarks.member_recall_gate import learners as dev_learners
from pallas.features.memory.config import RetrievalConfig
from pallas.features.memory.items import to_candidate
from pallas.features.memory.records import MemoryItem
from pallas.ranking import RelevanceWeights, recall_question, retrieve, speaker_voice
from pallas.ranking.scoring import RetrievalResult

DAY = 86_400.0
WEIGHTS: dict[str, RelevanceWeights | None] = {
    "the product's": None,
    "0.6 / 0.3 / 0.1 (the other blocks')": RelevanceWeights(),
    "0.6 / 0.1 / 0.05": RelevanceWeights(recency=0.1, frequency=0.05),
    "0.6 / 0.05 / 0.02": RelevanceWeights(recency=0.05, frequency=0.02),
    "0.6 / 0 / 0": RelevanceWeights(recency=0.0, frequency=0.0),
}


def config_for(weights: RelevanceWeights | None, *, opened: bool) -> RetrievalConfig:
    """The memory config with vectors, its person-facts block weighted by `weights` (None:
    as configured); `opened`: top-k and the char cap out of the way (the order is read)."""
    base = RetrievalConfig()
    base = base.model_copy(update={"concept_weight": base.concept_weight_with_vectors})
    update: dict[str, object] = {}
    if weights is not None:
        update["weights"] = weights
    if opened:
        update |= {"top_k": 100_000, "max_chars": 10**9}
    block = base.person_facts.model_copy(update=update)
    return base.model_copy(update={"person_facts": block})


def ask(question: str, items: Sequence[MemoryItem], config: RetrievalConfig, now: float,
        cos: Cosines) -> RetrievalResult:  # fmt: skip
    query = recall_question(question)
    semantic = {i.ref: float(cos(query, [speaker_voice(i.text)]).max()) for i in items}
    return retrieve(question, [to_candidate(i) for i in items], kind="person_facts", now=now,
                    allowed_scopes={SCOPE}, config=config, semantic_scores=semantic)  # fmt: skip


def taught_over(items: Sequence[MemoryItem], days: float) -> list[MemoryItem]:
    """`items` taught evenly over `days`, in their order, the last a day before `NOW`."""
    n = len(items)
    out = []
    for k, item in enumerate(items):
        at = NOW - DAY * (1.0 + days * (n - 1 - k) / max(1, n - 1))
        out.append(dataclasses.replace(item, created_at=at, updated_at=at))
    return out


def replayed(
    items: list[MemoryItem],
    chat: Sequence[str],
    turns: int,
    days: float,
    config: RetrievalConfig,
    cos: Cosines,
    rng: random.Random,
) -> list[MemoryItem]:
    """`items` after `turns` earlier replies at random moments of the last `days`: each a
    question from `chat` over the facts taught by then, touching the chosen ones."""
    for at in sorted(NOW - DAY * days * rng.random() for _ in range(turns)):
        known = [i for i in items if i.created_at <= at]
        if not known:
            continue
        chosen = set(ask(rng.choice(chat), known, config, at, cos).trace.chosen_ids)
        items = [
            dataclasses.replace(i, access_count=i.access_count + 1, last_access_at=at)
            if i.ref in chosen
            else i
            for i in items
        ]
    return items


def measure(rows: dict[int, list[MemoryItem]], asked: Sequence[Asked],
            weights: RelevanceWeights | None, cos: Cosines) -> tuple[int, int, int]:  # fmt: skip
    """(first, among the first five, questions) over the set's positive questions."""
    config = config_for(weights, opened=True)
    first = five = total = 0
    for q in asked:
        if q.expected is None:
            continue
        items = rows[q.user]
        text = {i.ref: i.text for i in items}
        chosen = [text[ref] for ref in ask(q.text, items, config, NOW, cos).trace.chosen_ids]
        rank = chosen.index(q.expected) if q.expected in chosen else None
        first += rank == 0
        five += rank is not None and rank < 5
        total += 1
    return first, five, total


def added(total: list[int], more: tuple[int, int, int]) -> list[int]:
    return [a + b for a, b in zip(total, more, strict=True)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.member_recall_ages")
    parser.add_argument("--facts", default="50,200")
    parser.add_argument("--days", type=float, default=120.0)
    parser.add_argument("--turns", type=int, default=60, help="earlier replies per member")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    cos = encoder_cosines()
    pct = lambda a, b: f"{100 * a / max(1, b):3.0f}%"  # noqa: E731
    chat = {s: [a.text for a in dev_learners(10, data)[1]] for s, data in DEV_SETS.items()}
    print(f"dev sets {', '.join(DEV_SETS)}; taught over {args.days:.0f} days, "
          f"{args.turns} earlier replies a member")  # fmt: skip
    print("| facts | weights (similarity / recency / frequency) | same day acc@1 / kept "
          "| over the days acc@1 / kept |")  # fmt: skip
    print("|---|---|---|---|")
    for size in [int(s) for s in args.facts.split(",")]:
        data = {s: dev_learners(size, module) for s, module in DEV_SETS.items()}
        for name, weights in WEIGHTS.items():
            same, aged = [0, 0, 0], [0, 0, 0]
            rng = random.Random(args.seed)
            live = config_for(weights, opened=False)
            for s, (rows, asked) in data.items():
                others = [t for o, texts in chat.items() if o != s for t in texts]
                old = {
                    user: replayed(taught_over(items, args.days), others, args.turns,
                                   args.days, live, cos, rng)
                    for user, items in rows.items()
                }  # fmt: skip
                same = added(same, measure(rows, asked, weights, cos))
                aged = added(aged, measure(old, asked, weights, cos))
            print(f"| {size} | {name} | {pct(same[0], same[2])} / {pct(same[1], same[2])} "
                  f"| {pct(aged[0], aged[2])} / {pct(aged[1], aged[2])} |", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
