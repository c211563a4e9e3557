"""A scripted embedding model for the memory benchmarks' ``--embedding`` run.

The fake OpenAI-compatible server of the tests, answering ``POST /embeddings`` with a character
n-gram hashing embedding: every CJK character, letter run and digit run of the normalised text
and every pair of neighbouring characters is hashed (blake2b) to one of `DIMS` axes with a sign;
the vector is L2-normalised. It knows nothing about any benchmark's facts or answers — it is a
generic, weak stand-in for a real model (it sees shared characters, "过敏" ~ "敏感", not meaning
without shared characters), so the figure measures the vector path end to end (probe-free
explicit model, backfill, the vector index, cosine mixed with BM25), not a real model's quality.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import re

from pallas.ranking.text import normalize_text
from tests.harness.fake_openai import FakeOpenAI

DIMS = 512
MODEL = "char-ngram-hash"
_UNITS = re.compile(r"[\u4e00-\u9fff]|[a-z]+|\d+")
UNIGRAM, BIGRAM = 0.5, 1.0


def _axis(gram: str) -> tuple[int, float]:
    digest = hashlib.blake2b(gram.encode(), digest_size=8).digest()
    value = int.from_bytes(digest, "big")
    return value % DIMS, (1.0 if value >> 63 else -1.0)


def ngram_embedding(text: str) -> list[float]:
    """Hashed character unigrams and bigrams of `text`, L2-normalised (zeros for no units)."""
    units = _UNITS.findall(normalize_text(text))
    vector = [0.0] * DIMS
    grams = [(u, UNIGRAM) for u in units]
    grams += [(a + b, BIGRAM) for a, b in itertools.pairwise(units)]
    for gram, weight in grams:
        axis, sign = _axis(gram)
        vector[axis] += sign * weight
    norm = math.sqrt(sum(v * v for v in vector))
    return [v / norm for v in vector] if norm else vector


def with_embeddings(model: FakeOpenAI) -> FakeOpenAI:
    """`model` answering embeddings with `ngram_embedding` (and listing the model)."""
    model.embed = ngram_embedding
    model.models = [MODEL]
    return model
