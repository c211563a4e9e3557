"""Fit the question adapter (`pallas.ranking.adapter`) on the DEVELOPMENT sets, and measure it
leaving one set out (issue #47). The frozen halves are never read here.

Pairs: every question of `member_recall_gate.DEV_SETS` but `unfit` (`FIT_SETS`; that one is
the shipped fit's check on questions it has not seen) at 50 facts a member, against each of the
member's facts — label 1 for the fact it asks about, 0 for the others and for every fact of a
never-said question; a question's negatives weigh 1 in all, as its positive does. Features: the
elementwise product of the question's unit vector (its remember-frame removed) and the fact's
(in the member's voice), as the product encodes them. A logistic loss on Σ (1 + d)ᵢ·qᵢ·fᵢ with
`--l2` × |d|² (d starts at 0: the plain cosine), Adam, a fixed number of steps (deterministic).
The weighted score is then mapped linearly onto the plain cosines' mean and spread over the
same pairs, so the gate and the cosine floors keep their scale.

    python -m benchmarks.fit_question_adapter            # fit, write the data file
    python -m benchmarks.fit_question_adapter --loso     # each set scored by a fit on the others
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from benchmarks.member_recall_gate import (
    DEV_SETS,
    PRODUCT_GATE,
    Asked,
    Cosines,
    Outcome,
    Variant,
    at_gate,
    gate_for,
    learners,
    run,
)
from pallas.features.memory.records import MemoryItem
from pallas.providers.sentence_encoder import SentenceEncoder, load_local_encoder
from pallas.ranking import recall_question, speaker_voice
from pallas.ranking.adapter import DATA_FILE, QuestionAdapter

Matrix = npt.NDArray[np.float64]
# every dev set but the one written after the fit to check it (`_member_recall_unfit`)
FIT_SETS = tuple(name for name in DEV_SETS if name != "unfit")
SIZE = 50  # facts a member in the pairs
STEPS, RATE = 1500, 0.01
Data = dict[str, tuple[dict[int, list[MemoryItem]], list[Asked]]]


class Vectors:
    """Unit vectors of texts, each encoded once."""

    def __init__(self, encoder: SentenceEncoder) -> None:
        self.encoder = encoder
        self.cache: dict[str, Matrix] = {}

    def __call__(self, texts: Sequence[str]) -> Matrix:
        todo = [t for t in dict.fromkeys(texts) if t not in self.cache]
        for text, row in zip(todo, self.encoder.encode_sync(todo) if todo else [], strict=True):
            v = np.asarray(row, dtype=np.float64)
            self.cache[text] = v / np.linalg.norm(v)
        return np.stack([self.cache[t] for t in texts])


def pairs(data: Data, sets: Sequence[str], vec: Vectors) -> tuple[Matrix, Matrix, Matrix]:
    """(features q∘f, labels, weights) of every question of `sets` against its member's facts."""
    xs, ys, ws = [], [], []
    for name in sets:
        rows, asked = data[name]
        for q in asked:
            facts = [i.text for i in rows[q.user]]
            label = np.array([t == q.expected for t in facts], dtype=np.float64)
            xs.append(vec([speaker_voice(t) for t in facts]) * vec([recall_question(q.text)])[0])
            ys.append(label)
            ws.append(np.where(label == 1, 1.0, 1.0 / max(1, len(facts) - int(label.sum()))))
    return np.vstack(xs), np.concatenate(ys), np.concatenate(ws)


def fit(x: Matrix, y: Matrix, sw: Matrix, l2: float) -> tuple[Matrix, float]:
    """(weights with the scale folded in, offset)."""
    dims = x.shape[1]
    p = np.concatenate([np.zeros(dims), [-5.0, 10.0]])  # d, bias, slope of the logistic
    m, v = np.zeros_like(p), np.zeros_like(p)
    for t in range(1, STEPS + 1):
        d, bias, slope = p[:dims], p[dims], p[dims + 1]
        s = x @ (1 + d)
        prob = 1 / (1 + np.exp(-(slope * s + bias)))
        gz = sw * (prob - y)
        grad = np.concatenate([slope * (x.T @ gz) + 2 * l2 * d, [gz.sum(), gz @ s]])
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad * grad
        p -= RATE * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    w = 1 + p[:dims]
    plain, weighted = x.sum(axis=1), x @ w
    scale = plain.std() / weighted.std()
    return scale * w, float(plain.mean() - scale * weighted.mean())


def cosines(vec: Vectors, adapter: QuestionAdapter | None) -> Cosines:
    def cos(query: str, facts: Sequence[str]) -> npt.NDArray[np.float64]:
        q, f = vec([query])[0], vec(list(facts))
        if adapter is None:
            return np.clip(f @ q, 0.0, 1.0)
        return np.clip(f @ adapter.question(q.astype(np.float32)) + adapter.offset, 0.0, 1.0)

    return cos


def adapter_of(model_id: str, fitted: tuple[Matrix, float]) -> QuestionAdapter:
    return QuestionAdapter(model_id, fitted[0].astype(np.float32), fitted[1])


def loso(data: Data, vec: Vectors, model_id: str, l2: float, sizes: Sequence[int]) -> None:
    """Each set scored by the product's rules with a fit on the other seven, pooled."""
    product = Variant("product", gate_growth=None, match_subject=True, match_instance=True,
                      match_answer_type=True)  # fmt: skip
    fits = {
        name: adapter_of(model_id, fit(*pairs(data, [s for s in FIT_SETS if s != name], vec), l2))
        for name in FIT_SETS
    }
    pct = lambda x: f"{100 * x:3.0f}%"  # noqa: E731
    print("| facts | cosine | acc@1 | kept | negatives empty | kept at 78 / 85 / 90 % empty |")
    print("|---|---|---|---|---|---|")
    for size in sizes:
        sized = {name: learners(size, DEV_SETS[name]) for name in FIT_SETS}
        for label in ("plain", "adapted (left-out fit)"):
            outcomes = [
                run(product, *sized[name],
                    cosines(vec, fits[name] if label != "plain" else None))
                for name in FIT_SETS
            ]  # fmt: skip
            pooled = Outcome(
                [p for o in outcomes for p in o.positives],
                [n for o in outcomes for n in o.negatives],
            )
            acc1, _, kept, empty = at_gate(pooled, PRODUCT_GATE)
            matched = " / ".join(pct(at_gate(pooled, gate_for(pooled, s))[2])
                                 for s in (0.78, 0.85, 0.9))  # fmt: skip
            print(f"| {size} | {label} | {pct(acc1)} | {pct(kept)} | {pct(empty)} | {matched} |",
                  flush=True)  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fit_question_adapter")
    parser.add_argument("--l2", type=float, default=0.01, help="the pull of d towards 0")
    parser.add_argument("--loso", action="store_true", help="measure, leaving one set out")
    parser.add_argument("--facts", default="10,50,200", help="sizes measured with --loso")
    args = parser.parse_args(argv)
    encoder = load_local_encoder()
    if encoder is None:
        raise SystemExit("the sentence encoder did not load")
    vec = Vectors(encoder)
    data: Data = {name: learners(SIZE, DEV_SETS[name]) for name in FIT_SETS}
    if args.loso:
        loso(data, vec, encoder.model_id, args.l2, [int(s) for s in args.facts.split(",")])
        return 0
    weights, offset = fit(*pairs(data, list(FIT_SETS), vec), args.l2)
    np.savez(
        DATA_FILE,
        model_id=np.array(encoder.model_id),
        weights=weights.astype(np.float32),
        offset=np.array(offset),
        l2=np.array(args.l2),
        sets=np.array(list(FIT_SETS)),
    )
    spread = f"mean {weights.mean():.3f}, spread {weights.std():.3f}"
    print(
        f"{DATA_FILE}: {encoder.model_id}, {len(weights)} weights ({spread}), offset {offset:.3f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
