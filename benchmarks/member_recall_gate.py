"""The person-facts gate and ranking variants (issue #47), on the member-recall DEVELOPMENT half
only (`_member_recall_data`; the frozen half is never read here).

Pure ranking, in-process, no database: each learner of `benchmarks.member_recall.plan` (the
same members, padding and order as the product bench) has its facts stored as the product
stores them ("我" → "TA"); every question is scored by the product's `retrieve` with the
cosines the vector index would pass (the fact in the member's voice, the question without its
remember-frame). Prints, per variant: accuracy@1, recall@5 ungated, "kept" (the fact past the
gate and among the first five: what reaches the request) and the negatives left empty.

The product's rows grow the gate with the member's facts as the product does
(`pallas.ranking.gate`: `gate_growth` × ln(facts / `gate_size`) above `gate_size`); the other
variants keep it fixed, as they were measured (docs/providers.md). Every gate value printed
(`--gate`, gate90, the curves) is the gate of a member with at most `gate_size` facts; a member
with more has each of its values compared less the growth.

    python -m benchmarks.member_recall_gate [--facts 10,50,200]
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import ModuleType

import numpy as np

from benchmarks import (
    _member_recall_context,
    _member_recall_extra,
    _member_recall_extra2,
    _member_recall_extra3,
    _member_recall_names,
    _member_recall_places,
    _member_recall_unfit,
    _member_recall_yesno,
)
from benchmarks import _member_recall_data as half
from benchmarks._gate_ideas import (
    either,
    head_mismatch,
    referent_mismatch,
    sibling_mismatch,
    unclassed,
    veto,
)
from benchmarks.member_recall import plan
from pallas.features.memory.config import RetrievalConfig
from pallas.features.memory.items import to_candidate
from pallas.features.memory.records import MemoryItem
from pallas.providers.sentence_encoder import load_local_encoder
from pallas.ranking import (
    load_question_adapters,
    recall_question,
    retrieve,
    similarity_gate,
    speaker_voice,
)
from pallas.ranking.scoring import CandidateScore

# the development sets only: the frozen halves are measured by `benchmarks.member_recall`
DEV_SETS: dict[str, ModuleType] = {
    "dev": half,
    "extra": _member_recall_extra,
    "extra2": _member_recall_extra2,
    "yesno": _member_recall_yesno,
    "extra3": _member_recall_extra3,
    "context": _member_recall_context,
    "names": _member_recall_names,
    "places": _member_recall_places,
    "unfit": _member_recall_unfit,  # never in the question adapter's fit
}
SCOPE = "group:1:2"
NOW = 1_780_000_000.0


def stored(taught: str) -> str:
    return taught.replace("我", "TA")


@dataclass(frozen=True)
class Asked:
    user: int
    text: str
    expected: str | None  # the fact's stored text; None for a negative control


def learners(size: int, data: ModuleType = half) -> tuple[dict[int, list[MemoryItem]], list[Asked]]:
    rows: dict[int, list[MemoryItem]] = {}
    asked: list[Asked] = []
    first: dict[int, int] = {}
    next_id = 1
    for learner in plan(data, size):
        items = []
        for text in learner.lines:
            items.append(MemoryItem(id=next_id, bot_id=1, scope=SCOPE, kind="person_facts",
                                    key=f"k{next_id}", text=stored(text), origin="teach",
                                    created_at=NOW - 86_400 * 3, updated_at=NOW - 86_400 * 3,
                                    subject_user_id=learner.user))  # fmt: skip
            next_id += 1
        rows[learner.user] = items
        first.setdefault(learner.member, learner.user)
        asked += [Asked(learner.user, f.question, stored(f.taught)) for f in learner.targets]
    asked += [Asked(first[n.member], n.question, None) for n in data.NEGATIVES]
    return rows, asked


Cosines = Callable[[str, Sequence[str]], "np.ndarray"]
# the product's person-facts gate with vectors, before it grows (`pallas.ranking.gate`)
PRODUCT_GATE = similarity_gate(RetrievalConfig().person_facts, 0, vectors=True).min_similarity


def encoder_cosines(*, adapted: bool = True) -> Cosines:
    """The product's cosines of a question with facts: the local encoder's, the question
    reweighted by the shipped adapter for it (`pallas.ranking.adapter`) unless `adapted` is
    false (the plain cosine)."""
    encoder = load_local_encoder()
    if encoder is None:
        raise SystemExit("the sentence encoder did not load")
    adapter = load_question_adapters().get(encoder.model_id) if adapted else None
    cache: dict[str, np.ndarray] = {}

    def vec(texts: Sequence[str]) -> np.ndarray:
        todo = [t for t in dict.fromkeys(texts) if t not in cache]
        if todo:
            for t, v in zip(todo, encoder.encode_sync(todo), strict=True):
                cache[t] = v
        return np.stack([cache[t] for t in texts])

    def cos(query: str, facts: Sequence[str]) -> np.ndarray:
        q = vec([query])[0]
        if adapter is None:
            return np.clip(vec(facts) @ q, 0.0, 1.0)
        return np.clip(vec(facts) @ adapter.question(q) + adapter.offset, 0.0, 1.0)

    return cos


@dataclass(frozen=True)
class Variant:
    name: str
    query: Callable[[str], str] = recall_question
    keys: Callable[[str], Sequence[str]] = lambda text: (speaker_voice(text),)
    config: RetrievalConfig | None = None
    # the similarity a candidate is gated on, from its trace row (default: the fused one)
    gate_on: Callable[[CandidateScore], float] | None = None
    # the gate's growth with the member's facts (`gate_growth`); None: the product's
    gate_growth: float | None = 0.0
    # a fact about one of the member's people gated for a question not about them
    # (`match_subject`, `pallas.ranking.subjects`)
    match_subject: bool = False
    # a fact naming another instance of a class than the question gated (`match_instance`,
    # `pallas.ranking.instances`) unless its cosine reaches `instance_min_cosine`
    match_instance: bool = False
    instance_min_cosine: float = 0.7
    # a fact telling no number for a question asking one gated (`match_answer_type`,
    # `pallas.ranking.answer_type`) unless its cosine reaches `answer_type_min_cosine`
    match_answer_type: bool = False
    answer_type_min_cosine: float = 0.7
    # (question, fact's stored text, its trace row) → the value it is gated on instead, or
    # None to keep it (`_gate_ideas`: the rules tried against the negatives)
    adjust: Callable[[str, str, CandidateScore], float | None] | None = None


@dataclass
class Outcome:
    positives: list[tuple[int | None, float]]  # (rank ungated, gate value of the fact)
    negatives: list[float]  # the best gate value among the member's facts
    # every fused similarity of a never-said question's facts (the concept raise left out:
    # a constant, not a tail), without the growth: the sample `tail_scale` reads
    null: list[float] = field(default_factory=list)


def run(variant: Variant, rows: dict[int, list[MemoryItem]], asked: Sequence[Asked],
        cos: Cosines) -> Outcome:  # fmt: skip
    base = variant.config or RetrievalConfig()
    base = base.model_copy(update={"concept_weight": base.concept_weight_with_vectors})
    block = base.person_facts.model_copy(
        update={"top_k": 100_000, "max_chars": 10**9, "min_similarity": 0.0, "threshold": 0.0,
                "min_similarity_with_vectors": None,
                "match_subject": variant.match_subject,
                "match_instance": variant.match_instance,
                "instance_min_cosine": variant.instance_min_cosine,
                "match_answer_type": variant.match_answer_type,
                "answer_type_min_cosine": variant.answer_type_min_cosine}
    )  # fmt: skip
    config = base.model_copy(update={"person_facts": block})
    grown = base.person_facts
    if variant.gate_growth is not None:
        grown = grown.model_copy(update={"gate_growth": variant.gate_growth})
    gate_on = variant.gate_on or (lambda c: c.similarity)
    ungrown = similarity_gate(grown, 0, vectors=True).min_similarity  # the base with vectors
    out = Outcome([], [])
    for q in asked:
        items = rows[q.user]
        # what the product's gate adds for this member's number of facts (see the module)
        growth = similarity_gate(grown, len(items), vectors=True).min_similarity - ungrown
        cands = [to_candidate(i) for i in items]
        query = variant.query(q.text)
        semantic = {}
        for item in items:
            semantic[item.ref] = float(cos(query, list(variant.keys(item.text))).max())
        result = retrieve(q.text, cands, kind="person_facts", now=NOW, allowed_scopes={SCOPE},
                          config=config, semantic_scores=semantic)  # fmt: skip
        text = {i.ref: i.text for i in items}
        # ties broken by id, as `scoring._ranked` breaks equal scores of equal recency; a
        # fact gated as about someone else counts as nothing
        trace = result.trace
        gated = trace.dropped_by_subject + trace.dropped_by_instance + trace.dropped_by_answer_type
        value_of = _counting_nothing(gate_on, frozenset(gated))
        if variant.adjust is not None:
            value_of = _adjusted(value_of, variant.adjust, q.text, text)
        scored = sorted(result.trace.candidates, key=lambda c: (-value_of(c), c.id))
        if q.expected is None:
            out.negatives.append(value_of(scored[0]) - growth if scored else 0.0)
            raise_to = base.concept_weight  # what a class match alone is raised to, x the share
            out.null += [
                c.similarity for c in scored if c.similarity != raise_to * (c.concept or 0)
            ]
            continue
        rank = next((r for r, c in enumerate(scored) if text[c.id] == q.expected), None)
        value = value_of(scored[rank]) - growth if rank is not None else 0.0
        out.positives.append((rank, value))
    return out


def _counting_nothing(
    gate_on: Callable[[CandidateScore], float], gated: frozenset[str]
) -> Callable[[CandidateScore], float]:
    """`gate_on` with the `gated` candidates valued 0."""
    if not gated:
        return gate_on
    return lambda c: 0.0 if c.id in gated else gate_on(c)


def _adjusted(
    value_of: Callable[[CandidateScore], float],
    adjust: Callable[[str, str, CandidateScore], float | None],
    question: str,
    text: dict[str, str],
) -> Callable[[CandidateScore], float]:
    def value(c: CandidateScore) -> float:
        base = value_of(c)
        if base <= 0.0:
            return base
        new = adjust(question, text[c.id], c)
        return base if new is None else new

    return value


def at_gate(o: Outcome, gate: float) -> tuple[float, float, float, float]:
    """(acc@1, rec@5 ungated, kept: past the gate and in the first five, negatives empty)."""
    n = max(1, len(o.positives))
    acc1 = sum(r == 0 and s >= gate for r, s in o.positives) / n
    rec5 = sum(r is not None and r < 5 for r, _ in o.positives) / n
    kept = sum(r is not None and r < 5 and s >= gate for r, s in o.positives) / n
    empty = sum(s < gate for s in o.negatives) / max(1, len(o.negatives))
    return acc1, rec5, kept, empty


def tail_scale(o: Outcome, above: float) -> tuple[float, int]:
    """The scale of the never-said questions' similarity tail above `above` (the mean excess,
    the maximum-likelihood scale of an exponential tail) and the sample's size: the gate's
    `gate_growth` (`pallas.ranking.gate`)."""
    excess = [v - above for v in o.null if v > above]
    return (float(np.mean(excess)) if excess else 0.0), len(excess)


def gate_for(o: Outcome, share: float = 0.9) -> float:
    """The lowest gate leaving `share` of the negatives empty."""
    ranked = sorted(o.negatives)
    keep = int(np.ceil(share * len(ranked)))
    return ranked[keep - 1] + 1e-6 if keep else 0.0


def _c(c: CandidateScore) -> float:
    return c.embedding or 0.0


def _k(c: CandidateScore) -> float:
    return c.concept or 0.0


def _b(c: CandidateScore) -> float:
    return c.bm25 or 0.0


def additive(w_cos: float, w_bm: float, w_con: float) -> Callable[[CandidateScore], float]:
    return lambda c: w_cos * _c(c) + w_bm * _b(c) + w_con * _k(c)


_QWORDS = re.compile(r"什么|啥|哪[一个些里儿款种类部所门年天位]*|谁|几|多少|怎么样?|[?？吗呢]")


def declarative(text: str) -> str:
    return _QWORDS.sub("", recall_question(text)) or text


_VALUE_AFTER = re.compile(r"^(.{2,}?)(?:是|叫|在)")


def attribute_key(text: str) -> str:
    """What a fact is about without its value: "TA的网名叫星河旅人" → "我的网名" ('' when
    the part before 是 / 叫 / 在 is only the speaker)."""
    voiced = speaker_voice(text)
    found = _VALUE_AFTER.match(voiced)
    if not found or len(found.group(1).replace("我", "").replace("的", "")) < 2:
        return ""
    return found.group(1)


def with_attribute(text: str) -> Sequence[str]:
    key = attribute_key(text)
    return (speaker_voice(text), key) if key else (speaker_voice(text),)


def before(c: CandidateScore) -> float:
    """The fusion before the concept bonus: the concept share raised the similarity to
    0.5 × the share when that was larger."""
    return max(0.7 * _c(c) + 0.3 * _b(c), 0.5 * _k(c))


def vetoed(floor: float) -> Callable[[CandidateScore], float]:
    """The product's rule with another cosine floor for the raise (`concept_min_cosine`)."""
    return lambda c: max(
        0.7 * _c(c) + 0.3 * _b(c) + 0.1 * _k(c), 0.5 * _k(c) if _c(c) >= floor else 0
    )


def class_mismatch(floor: float) -> Callable[[CandidateScore], float]:
    """The product's similarity, but nothing for a fact that covers none of the classes the
    question asks (concept share 0) unless its cosine is at least `floor`."""
    return lambda c: 0.0 if c.concept == 0 and _c(c) < floor else c.similarity


def _idea_variants() -> list[Variant]:
    """The rules tried against the negatives (`_gate_ideas`), each on the product before the
    instance veto; then the instance veto's cosine floor."""
    product = {"gate_growth": None, "match_subject": True}
    sibling = veto(sibling_mismatch, 0.5)

    def referent(floor: float) -> Callable[[str, str, CandidateScore], float | None]:
        return lambda q, fact, c: (
            0.0 if _c(c) < floor and referent_mismatch(q, fact, c.concept) else None
        )

    out = [
        Variant("table sibling: concept share dropped", adjust=unclassed(sibling_mismatch),
                **product),
        *[Variant(f"table sibling veto (cos < {f})", adjust=veto(sibling_mismatch, f),
                  **product) for f in (0.5, 0.7, 1.01)],
        *[Variant(f"head-noun veto (cos < {f})", adjust=veto(head_mismatch, f), **product)
          for f in (0.45, 0.5, 0.55)],
        Variant("table sibling + head-noun veto (cos < 0.5)",
                adjust=either(sibling, veto(head_mismatch, 0.5)), **product),
        *[Variant(f"referent veto (cos < {f})", adjust=referent(f), **product)
          for f in (0.5, 0.6)],
        Variant("table sibling + referent veto (cos < 0.5)",
                adjust=either(sibling, referent(0.5)), **product),
        Variant("table sibling + class mismatch veto (share 0, cos < 0.5)",
                adjust=either(sibling, lambda q, f, c: class_mismatch(0.5)(c)), **product),
    ]  # fmt: skip
    now = {"gate_growth": None, "match_subject": True, "match_instance": True,
           "match_answer_type": True}  # fmt: skip
    for floor in (0.5, 1.01):
        out.append(Variant(f"product, answer-type veto below cos {floor}",
                           **{**now, "answer_type_min_cosine": floor}))  # fmt: skip
    for floor in (0.4, 0.5, 0.6, 1.01):
        out.append(Variant(f"product, instance veto below cos {floor}",
                           **{**now, "instance_min_cosine": floor}))  # fmt: skip
    out.append(Variant("product + class mismatch veto (share 0, cos < 0.5)",
                       gate_on=class_mismatch(0.5), **now))  # fmt: skip
    return out


def variants() -> list[Variant]:
    """What was tried (docs/providers.md has the table); the product's own first."""
    return [
        Variant(
            "product",
            gate_growth=None,
            match_subject=True,
            match_instance=True,
            match_answer_type=True,
        ),
        Variant(
            "product before the answer-type veto",
            gate_growth=None,
            match_subject=True,
            match_instance=True,
        ),
        Variant("product before the instance veto", gate_growth=None, match_subject=True),
        Variant("product before: gate fixed, no subject veto"),
        Variant("product, gate growth only", gate_growth=None),
        Variant("product, subject veto only", match_subject=True),
        Variant(
            "product, gate growth 0.03",
            gate_growth=0.03,
            match_subject=True,
            match_instance=True,
            match_answer_type=True,
        ),
        Variant(
            "product, gate growth 0.05",
            gate_growth=0.05,
            match_subject=True,
            match_instance=True,
            match_answer_type=True,
        ),
        Variant(
            "product before the instance veto + class mismatch veto (share 0, cos < 0.5)",
            gate_on=class_mismatch(0.5),
            gate_growth=None,
            match_subject=True,
        ),
        Variant(
            "product before the instance veto + class mismatch veto (share 0, cos < 0.6)",
            gate_on=class_mismatch(0.6),
            gate_growth=None,
            match_subject=True,
        ),
        Variant("before: max(0.7c+0.3b, 0.5k)", gate_on=before),
        Variant("0.7c+0.3b+0.1k, no raise", gate_on=additive(0.7, 0.3, 0.1)),
        Variant("max(0.7c+0.3b+0.1k, 0.5k if c >= 0.2)", gate_on=vetoed(0.2)),
        Variant("max(0.7c+0.3b+0.1k, 0.5k if c >= 0.3)", gate_on=vetoed(0.3)),
        Variant("cosine only", gate_on=_c),
        Variant("0.7c+0.3b, no concept", gate_on=additive(0.7, 0.3, 0.0)),
        Variant("0.7c+0.3b+0.15k", gate_on=additive(0.7, 0.3, 0.15)),
        Variant("0.7c+0.3b+0.2k", gate_on=additive(0.7, 0.3, 0.2)),
        Variant("1c+0.3b+0.1k", gate_on=additive(1.0, 0.3, 0.1)),
        Variant("before + attribute keys", gate_on=before, keys=with_attribute),
        Variant("product (fixed gate) + attribute keys", keys=with_attribute),
        Variant("before + declarative question", gate_on=before, query=declarative),
        Variant("product (fixed gate) + declarative question", query=declarative),
        *_idea_variants(),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.member_recall_gate")
    parser.add_argument("--facts", default="10,50,200")
    parser.add_argument("--gate", type=float, default=PRODUCT_GATE,
                        help="the gate of the first table")  # fmt: skip
    parser.add_argument("--curves", action="store_true", help="kept / negatives per gate")
    parser.add_argument("--tail", action="store_true", help="the null tail's scale per size")
    parser.add_argument(
        "--set",
        choices=sorted(DEV_SETS),
        default="dev",
        help="which development set: the half, or the extra members written after it",
    )
    parser.add_argument("--only", default="", help="the variants whose name matches this regex")
    parser.add_argument("--plain", action="store_true", help="the cosine without the adapter")
    args = parser.parse_args(argv)
    cos = encoder_cosines(adapted=not args.plain)
    sizes = [int(s) for s in args.facts.split(",")]
    source = DEV_SETS[args.set]
    data = {size: learners(size, source) for size in sizes}
    if args.tail:
        for size in sizes:
            o = run(Variant("product"), *data[size], cos)
            cells = [f"above {u}: {t:.3f} (n {n})" for u in (0.2, 0.25, 0.3)
                     for t, n in [tail_scale(o, u)]]  # fmt: skip
            print(f"{size} facts, never-said questions' similarity tail scale: " + ", ".join(cells))
        print()
    pct = lambda x: f"{100 * x:3.0f}%"  # noqa: E731
    print("| variant | gate | " + " | ".join(f"{s}: acc@1 rec@5o kept neg" for s in sizes)
          + " | gate90@50 | kept@gate90 per size | neg@gate90 per size |")  # fmt: skip
    curves = []
    for variant in [v for v in variants() if re.search(args.only, v.name)]:
        outcomes = {size: run(variant, *data[size], cos) for size in sizes}
        curves.append((variant.name, outcomes))
        cells = []
        for size in sizes:
            a, r, k, e = at_gate(outcomes[size], args.gate)
            cells.append(f"{pct(a)} {pct(r)} {pct(k)} {pct(e)}")
        g90 = gate_for(outcomes[50 if 50 in outcomes else sizes[0]])
        kept = " ".join(pct(at_gate(outcomes[s], g90)[2]) for s in sizes)
        neg = " ".join(pct(at_gate(outcomes[s], g90)[3]) for s in sizes)
        print(f"| {variant.name} | {args.gate} | " + " | ".join(cells)
              + f" | {g90:.3f} | {kept} | {neg} |", flush=True)  # fmt: skip
    if args.curves:
        gates = [round(0.2 + 0.025 * i, 3) for i in range(21)]
        for name, outcomes in curves:
            print(f"\n{name}: gate → kept/neg empty per size")
            for g in gates:
                row = "  ".join(
                    f"{s}: {pct(at_gate(o, g)[2])}/{pct(at_gate(o, g)[3])}"
                    for s, o in outcomes.items()
                )
                print(f"  {g:.3f}  {row}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
