"""Inverted index over one candidate list: score only the candidates that can pass the gate.

A candidate's similarity is max(hybrid(BM25, cosine), concept_weight × concept share) (see
`scoring`). It is above zero only when the candidate shares a retrieval token with the query
(BM25 > 0), shares a semantic class with the question (concept share > 0) or has a vector
score; every other candidate has similarity 0 and is gated out whatever its recency or use
count. So the index keeps, per candidate list, the BM25 statistics, a posting list per token
and per concept class, and each candidate's concept classes; `matching` returns the positions
of the candidates sharing a token or a class with the query, the caller adds those with a
vector score, and only those are scored — with exactly the arithmetic of scoring them all
(BM25 summed over the query's distinct known terms in query order), so the chosen items, their
order and their scores are the same. The others are reported as dropped by similarity.

Indexes are cached by the candidates' (id, index text) sequence, so a group's loaded rows are
indexed once per memory write, not once per turn; recency and use counts are never cached
(they are read from the candidates of each call). Each query term's BM25 share per document
is computed the first time a query uses the term and kept with the index (one float per
posting, for at most `MAX_KEPT_TERMS` terms), so a turn only sums the shares of its terms.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence

from cachetools import LRUCache

from pallas.ranking.concepts import fact_concepts
from pallas.ranking.subjects import fact_about
from pallas.ranking.text import tokenize

INDEX_CACHE_SIZE = 32
MAX_KEPT_TERMS = 1024  # query terms whose BM25 shares an index keeps


class Bm25Index:
    """Okapi BM25 over pre-tokenised documents. Immutable after construction."""

    __slots__ = ("_avgdl", "_b", "_df", "_docs", "_k1", "_n")

    def __init__(
        self, docs: Mapping[str, Sequence[str]], *, k1: float = 1.5, b: float = 0.75
    ) -> None:
        self._k1 = k1
        self._b = b
        self._docs: dict[str, tuple[Counter[str], int]] = {
            doc_id: (Counter(tokens), len(tokens)) for doc_id, tokens in docs.items()
        }
        self._n = len(self._docs)
        total = sum(length for _, length in self._docs.values())
        self._avgdl = total / self._n if self._n else 0.0
        df: Counter[str] = Counter()
        for counts, _ in self._docs.values():
            df.update(counts.keys())
        self._df = df

    @classmethod
    def from_texts(
        cls, items: Iterable[tuple[str, str]], *, k1: float = 1.5, b: float = 0.75
    ) -> Bm25Index:
        return cls({doc_id: tokenize(text) for doc_id, text in items}, k1=k1, b=b)

    def idf(self, term: str) -> float:
        df = self._df.get(term, 0)
        return math.log(1.0 + (self._n - df + 0.5) / (df + 0.5))

    def _term_score(self, term: str, counts: Counter[str], length: int) -> float:
        tf = counts.get(term, 0)
        if tf == 0:
            return 0.0
        norm = 1.0 - self._b + self._b * (length / self._avgdl if self._avgdl else 1.0)
        return self.idf(term) * tf * (self._k1 + 1.0) / (tf + self._k1 * norm)

    def scores(self, query_tokens: Sequence[str]) -> dict[str, float]:
        """Raw BM25 score of every document (distinct query terms)."""
        terms = [t for t in dict.fromkeys(query_tokens) if t in self._df]
        return {
            doc_id: sum(self._term_score(t, counts, length) for t in terms)
            for doc_id, (counts, length) in self._docs.items()
        }

    def query_terms(self, query_tokens: Sequence[str]) -> list[str]:
        """The query's distinct terms the corpus holds, in query order (what `scores` sums)."""
        return [t for t in dict.fromkeys(query_tokens) if t in self._df]

    def doc_score(self, doc_id: str, terms: Sequence[str]) -> float:
        """Raw BM25 of one document for `query_terms(...)`: the same sum `scores` computes."""
        counts, length = self._docs[doc_id]
        return sum(self._term_score(t, counts, length) for t in terms)

    def term_share(self, term: str, doc_id: str) -> float:
        """What `doc_score` adds for `term` to `doc_id`'s score (the same expression)."""
        counts, length = self._docs[doc_id]
        tf = counts.get(term, 0)
        if not tf:
            return 0.0
        norm = 1.0 - self._b + self._b * (length / self._avgdl if self._avgdl else 1.0)
        return self.idf(term) * tf * (self._k1 + 1.0) / (tf + self._k1 * norm)

    def ideal_score(self, query_tokens: Sequence[str]) -> float:
        """Score of an average-length document holding each query term once (= Σ idf).

        A term the corpus lacks has no idf of its own; it is weighted like the query's most
        informative known term, so it still counts as "not covered" without dominating.
        """
        terms = list(dict.fromkeys(query_tokens))
        known = [self.idf(t) for t in terms if t in self._df]
        if not known:
            return 0.0
        return sum(known) + (len(terms) - len(known)) * max(known)

    def normalised_scores(self, query_tokens: Sequence[str]) -> dict[str, float]:
        """Scores in 0..1: raw / ideal_score(query), clamped (see module docstring)."""
        ideal = self.ideal_score(query_tokens)
        raw = self.scores(query_tokens)
        if ideal <= 0:
            return dict.fromkeys(raw, 0.0)
        return {doc_id: min(1.0, score / ideal) for doc_id, score in raw.items()}


class CandidateIndex:
    """BM25 + posting lists of one candidate list (positions refer to that list)."""

    __slots__ = (
        "_concept_postings",
        "_concepts",
        "_contributions",
        "_postings",
        "_subject_postings",
        "_texts",
        "bm25",
        "by_id",
        "ids",
        "rank",
        "sorted_ids",
    )

    def __init__(self, ids: Sequence[str], index_texts: Sequence[str], k1: float, b: float) -> None:
        self.ids = tuple(ids)
        self._texts = tuple(index_texts)
        tokens = [tokenize(t) for t in index_texts]
        self.bm25 = Bm25Index(dict(zip(self.ids, tokens, strict=True)), k1=k1, b=b)
        self.by_id = {doc_id: pos for pos, doc_id in enumerate(self.ids)}
        id_order = sorted(range(len(self.ids)), key=self.ids.__getitem__)
        self.sorted_ids = tuple(self.ids[p] for p in id_order)  # the ids sorted
        self.rank = [0] * len(id_order)  # by position: where its id is in `sorted_ids`
        for at, pos in enumerate(id_order):
            self.rank[pos] = at
        self._postings = _postings((set(t), pos) for pos, t in enumerate(tokens))
        self._concepts: tuple[frozenset[str], ...] | None = None  # on the first concept query
        self._concept_postings: dict[str, list[int]] = {}
        self._contributions: dict[str, dict[int, float]] = {}  # per term, on first query
        self._subject_postings: dict[str, list[int]] | None = None  # on the first person asked

    @property
    def texts(self) -> tuple[str, ...]:
        """The candidates' index texts, in order (what the index was built from)."""
        return self._texts

    @property
    def concepts(self) -> tuple[frozenset[str], ...]:
        """Each candidate's concept classes (computed when a question first names a class)."""
        if self._concepts is None:
            self._concepts = tuple(fact_concepts(t) for t in self._texts)
            self._concept_postings = _postings((c, pos) for pos, c in enumerate(self._concepts))
        return self._concepts

    def about(self, people: Collection[str]) -> set[int]:
        """Positions of the candidates about one of `people` (`subjects.fact_about`: led by
        a relation word; computed when a question first asks about someone)."""
        if self._subject_postings is None:
            about = ((fact_about(t) or (), pos) for pos, t in enumerate(self._texts))
            self._subject_postings = _postings(about)
        found: set[int] = set()
        for person in people:
            found.update(self._subject_postings.get(person, ()))
        return found

    def ids_except(self, positions: Collection[int]) -> list[str]:
        """The ids of the other candidates, sorted: slices of `sorted_ids` between the
        excluded ones (a few hundred of them are left out per retrieval, every turn)."""
        out: list[str] = []
        start = 0
        for at in sorted(self.rank[p] for p in positions):
            out += self.sorted_ids[start:at]
            start = at + 1
        out += self.sorted_ids[start:]
        return out

    def raw_scores(self, terms: Sequence[str]) -> dict[int, float]:
        """Raw BM25 of the candidates holding one of `terms` (`query_terms`), by position:
        each term's share of each of its documents is computed once per index and summed in
        query order; a term a document lacks adds exactly 0.0 in `doc_score`, so the sums
        are the same."""
        raw: dict[int, float] = {}
        for term in terms:
            shares = self._contributions.get(term)
            if shares is None:
                if len(self._contributions) >= MAX_KEPT_TERMS:
                    self._contributions.clear()  # bounded: recomputed when asked again
                shares = self._contributions[term] = self._term_shares(term)
            for pos, share in shares.items():
                raw[pos] = raw.get(pos, 0) + share
        return raw

    def _term_shares(self, term: str) -> dict[int, float]:
        """`doc_score`'s addend for `term` in each document holding it, by position."""
        bm25, ids = self.bm25, self.ids
        return {pos: bm25.term_share(term, ids[pos]) for pos in self._postings.get(term, ())}

    def matching(self, terms: Iterable[str], classes: Collection[str]) -> set[int]:
        """Positions of the candidates holding one of `terms` or about one of `classes`."""
        found: set[int] = set()
        for term in terms:
            found.update(self._postings.get(term, ()))
        if classes and self.concepts:
            for cls in classes:
                found.update(self._concept_postings.get(cls, ()))
        return found


def _postings(docs: Iterable[tuple[Iterable[str], int]]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for keys, pos in docs:
        for key in keys:
            out.setdefault(key, []).append(pos)
    return out


_INDEXES: LRUCache[tuple[object, ...], CandidateIndex] = LRUCache(INDEX_CACHE_SIZE)


def candidate_index(
    ids: Sequence[str], index_texts: Sequence[str], k1: float, b: float
) -> CandidateIndex:
    """The index of exactly these candidates (cached, bounded LRU)."""
    key = (k1, b, tuple(ids), tuple(index_texts))
    index = _INDEXES.get(key)  # a hit is now the most recently used
    if index is None:
        index = CandidateIndex(ids, index_texts, k1, b)
        _INDEXES[key] = index
    return index
