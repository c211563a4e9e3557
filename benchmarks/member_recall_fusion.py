"""How to fuse the sentence encoder's cosine with BM25 and the concept table (issue #47),
measured on the member-recall DEVELOPMENT half only (`_member_recall_data`; the frozen test
half is never read here).

Pure ranking, in-process: each member's facts as the product stores them ("我" → "TA"),
padded with distractor facts to `--facts` per member, scored by the product's `retrieve`
(BM25 + concepts + the cosine passed as the vector index would) for every question, under a
grid of fusion settings. Prints, per setting, accuracy@1 and recall@5 over the questions, the
similarity of the best fact for the negative controls (questions about things never said),
and the gate that keeps >= 90 % of the negatives empty with the recall it costs.

    python -m benchmarks.member_recall_fusion [--facts 50] [--grid]
"""

from __future__ import annotations

import argparse
import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from benchmarks._member_recall_data import DISTRACTORS, FACTS, NEGATIVES
from pallas.features.memory.config import RetrievalConfig
from pallas.features.memory.items import to_candidate
from pallas.features.memory.records import MemoryItem
from pallas.providers.sentence_encoder import load_local_encoder
from pallas.ranking import BlockRetrievalConfig, MemoryCandidate, retrieve

SCOPE = "group:1:2"
NOW = 1_780_000_000.0
OPEN = BlockRetrievalConfig(top_k=500, max_chars=100_000, threshold=0.0, min_similarity=0.0)


@dataclass(frozen=True)
class Question:
    member: int
    text: str
    expected: str | None  # the ref of the fact; None for a negative control


def stored(taught: str) -> str:
    return taught.replace("我", "TA")


def members(facts_per_member: int) -> dict[int, list[MemoryItem]]:
    """Each member's facts plus distractors (a different slice per member) to the size."""
    out: dict[int, list[MemoryItem]] = {}
    next_id = 1
    for member in sorted({f.member for f in FACTS}):
        own = [f.taught for f in FACTS if f.member == member]
        pad = max(0, facts_per_member - len(own))
        start = (member * 37) % len(DISTRACTORS)
        extra = [DISTRACTORS[(start + i) % len(DISTRACTORS)] for i in range(pad)]
        rows = []
        for text in own + extra:
            rows.append(MemoryItem(id=next_id, bot_id=1, scope=SCOPE, kind="person_facts",
                                   key=f"k{next_id}", text=stored(text), origin="teach",
                                   created_at=NOW - 86_400 * 3, updated_at=NOW - 86_400 * 3,
                                   subject_user_id=member))  # fmt: skip
            next_id += 1
        out[member] = rows
    return out


def questions(rows: dict[int, list[MemoryItem]]) -> list[Question]:
    out = []
    for fact in FACTS:
        ref = next(i.ref for i in rows[fact.member] if i.text == stored(fact.taught))
        out.append(Question(fact.member, fact.question, ref))
    out += [Question(n.member, n.question, None) for n in NEGATIVES]
    return out


@dataclass(frozen=True)
class Setting:
    embedding_weight: float
    concept_weight: float
    floor: float  # cosine rescaled as max(0, (c - floor) / (1 - floor))
    vectors: bool = True


def rescale(cosine: float, floor: float) -> float:
    return max(0.0, (cosine - floor) / (1.0 - floor)) if floor < 1 else 0.0


def run(setting: Setting, rows: dict[int, list[MemoryItem]], qs: Sequence[Question],
        cos: dict[tuple[str, str], float],
        ) -> tuple[float, float, list[tuple[float, bool]], list[float]]:  # fmt: skip
    """(accuracy@1, recall@5, (similarity, in the first five) of each positive's fact, the best
    similarity of each negative)."""
    config = RetrievalConfig(embedding_weight=setting.embedding_weight,
                             concept_weight=setting.concept_weight, person_facts=OPEN)  # fmt: skip
    cands: dict[int, list[MemoryCandidate]] = {
        m: [to_candidate(i) for i in items] for m, items in rows.items()
    }
    top1 = top5 = 0
    pos_sim: list[tuple[float, bool]] = []
    neg_sim: list[float] = []
    for q in qs:
        semantic = None
        if setting.vectors:
            semantic = {i.ref: rescale(cos[(q.text, i.ref)], setting.floor) for i in rows[q.member]}
        result = retrieve(q.text, cands[q.member], kind="person_facts", now=NOW,
                          allowed_scopes={SCOPE}, config=config,
                          semantic_scores=semantic)  # fmt: skip
        ranked = [c.id for c in result.chosen]
        sims = {c.id: c.similarity for c in result.trace.candidates}
        if q.expected is None:
            neg_sim.append(max(sims.values(), default=0.0))
            continue
        top1 += bool(ranked[:1] == [q.expected])
        top5 += q.expected in ranked[:5]
        pos_sim.append((sims.get(q.expected, 0.0), q.expected in ranked[:5]))
    n = len(pos_sim)
    return top1 / n, top5 / n, pos_sim, neg_sim


def gate_for(neg_sim: list[float], empty_share: float = 0.9) -> float:
    """The lowest similarity gate that leaves `empty_share` of the negatives with nothing."""
    ranked = sorted(neg_sim)
    keep = int(np.ceil(empty_share * len(ranked)))
    return ranked[keep - 1] + 1e-6 if keep else 0.0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--facts", type=int, default=50)
    parser.add_argument("--grid", action="store_true", help="the full grid (else a few rows)")
    args = parser.parse_args(argv)
    rows = members(args.facts)
    qs = questions(rows)
    encoder = load_local_encoder()
    if encoder is None:
        raise SystemExit("the sentence encoder did not load")
    started = time.perf_counter()
    texts = sorted({q.text for q in qs})
    items = [i for its in rows.values() for i in its]
    tv = encoder.encode_sync(texts)
    for variant in ("TA", "我"):  # the stored text, or with the speaker back as 我
        iv = encoder.encode_sync([i.text.replace("TA", variant) for i in items])
        sims = tv @ iv.T
        cos_v = {(t, i.ref): float(sims[a, b]) for a, t in enumerate(texts)
                 for b, i in enumerate(items)}  # fmt: skip
        if variant == "TA":
            cos = cos_v
        else:
            cos_me = cos_v
    print(f"{len(qs)} questions ({len(NEGATIVES)} negative), {args.facts} facts a member; "
          f"encoded in {time.perf_counter() - started:.1f}s")  # fmt: skip
    if args.grid:
        weights = (0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
        grid = [Setting(w, c, f) for w, c, f in itertools.product(
            weights, (0.0, 0.5, 0.8), (0.0, 0.2, 0.3, 0.4))]  # fmt: skip
    else:
        grid = [Setting(0.5, 0.8, 0.0), Setting(0.7, 0.8, 0.0), Setting(0.7, 0.5, 0.0)]
    baseline = Setting(0.5, 0.8, 0.0, vectors=False)
    product_gate = RetrievalConfig().person_facts.min_similarity
    print(
        f"{'setting':38} {'acc@1':>6} {'rec@5':>6} {'gate90':>7} {'rec@5>=gate':>11} "
        f"| at the product's gate {product_gate}: {'neg empty':>9} {'rec@5 kept':>10}"
    )
    for label, setting, table in [("BM25 + concepts (today)", baseline, cos)] + [
        (f"w={s.embedding_weight} c={s.concept_weight} floor={s.floor} {v}", s, t)
        for s in grid
        for v, t in (("TA", cos), ("我", cos_me))
    ]:
        acc, rec, pos, neg = run(setting, rows, qs, table)
        gate = gate_for(neg)
        # the questions whose fact is in the first five AND passes the gate
        ok = sum(1 for s, hit in pos if s >= gate and hit) / len(pos)
        empty = sum(1 for s in neg if s < product_gate) / len(neg)
        kept = sum(1 for s, hit in pos if s >= product_gate and hit) / len(pos)
        print(
            f"{label:38} {acc:6.0%} {rec:6.0%} {gate:7.3f} {ok:11.0%} "
            f"| {'':>27} {empty:9.0%} {kept:10.0%}"
        )
    for variant, table in (("TA", cos), ("我", cos_me)):
        best_neg = sorted(max(table[(q.text, i.ref)] for i in rows[q.member])
                          for q in qs if q.expected is None)  # fmt: skip
        pos_cos = sorted(table[(q.text, q.expected)] for q in qs if q.expected is not None)
        gate = gate_for(best_neg)
        print(f"raw cosine ({variant}): negatives' best {np.round(best_neg, 2).tolist()}")
        print(f"  gate90 {gate:.3f}: positives' own fact at or above it "
              f"{sum(c >= gate for c in pos_cos)}/{len(pos_cos)}; positives' cosine p10/p50 "
              f"{np.percentile(pos_cos, 10):.2f}/{np.percentile(pos_cos, 50):.2f}")  # fmt: skip


if __name__ == "__main__":
    main()


def margins() -> None:
    """Exploratory: would a margin over the member's other facts separate the negatives
    better than a threshold? (`python -c "from benchmarks.member_recall_fusion import
    margins; margins()"`; it did not: see docs/providers.md)"""
    rows = members(50)
    qs = questions(rows)
    enc = load_local_encoder()
    assert enc is not None
    for variant in ("TA", "我"):
        for q_kind in ("z", "gap"):
            pos, neg = [], []
            for q in qs:
                items = rows[q.member]
                v = enc.encode_sync([q.text] + [i.text.replace("TA", variant) for i in items])
                c = v[1:] @ v[0]
                ref = [i.ref for i in items]
                score = (c - c.mean()) / (c.std() + 1e-9) if q_kind == "z" else c - c.mean()
                if q.expected is None:
                    neg.append(float(score.max()))
                else:
                    pos.append(float(score[ref.index(q.expected)]))
            gate = gate_for(neg)
            print(variant, q_kind, "neg", np.round(sorted(neg), 2).tolist())
            print(
                f"  gate90 {gate:.2f}: positives above {sum(p >= gate for p in pos)}/{len(pos)}"
                f" p10/p50 {np.percentile(pos, 10):.2f}/{np.percentile(pos, 50):.2f}"
            )


def sweep(facts: int = 50, setting: Setting | None = None) -> None:
    """The person-facts gate against the negatives: for each gate, the negatives left empty
    and the questions whose fact is in the first five and passes the gate."""
    setting = setting or Setting(0.7, 0.5, 0.0)
    rows = members(facts)
    qs = questions(rows)
    encoder = load_local_encoder()
    assert encoder is not None
    texts = sorted({q.text for q in qs})
    items = [i for its in rows.values() for i in its]
    sims = encoder.encode_sync(texts) @ encoder.encode_sync([i.text for i in items]).T
    cos = {(t, i.ref): float(sims[a, b]) for a, t in enumerate(texts) for b, i in enumerate(items)}
    _, _, pos, neg = run(setting, rows, qs, cos)
    for gate in (0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5):
        empty = sum(1 for s in neg if s < gate) / len(neg)
        kept = sum(1 for s, hit in pos if s >= gate and hit) / len(pos)
        print(
            f"{facts} facts, gate {gate:.2f}: negatives empty {empty:4.0%}, facts kept {kept:4.0%}"
        )
