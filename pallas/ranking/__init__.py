"""The ranking engine, a shared library: which stored texts answer a query, and in what order.

Text normalisation and jieba tokens (`text`), semantic concept classes (`concepts`, data in
`data/concepts.toml`), candidates and their BM25 index (`candidate`, `candidate_index`), scope
filtering with reusable indexes (`prepared`), the 0.6·similarity + 0.3·recency + 0.1·frequency
fusion with its gate, threshold, top-k and char cap (`scoring`, knobs in `weights`; why each
candidate was chosen or not in `trace`), and the in-memory cosine index (`vector_index`). Pure:
it imports only `pallas.core`; the memory store and the session topics both rank through it.
"""

from pallas.ranking.adapter import QuestionAdapter, load_question_adapters
from pallas.ranking.candidate import MemoryCandidate
from pallas.ranking.candidate_index import Bm25Index, CandidateIndex
from pallas.ranking.concepts import (
    CATEGORY_TAG,
    class_names,
    concept_similarity,
    fact_concepts,
    query_concepts,
)
from pallas.ranking.gate import SimilarityGate, similarity_gate
from pallas.ranking.instances import name_one_instance, share_a_class
from pallas.ranking.prepared import PreparedCandidates, ScopedCache, prepare_candidates
from pallas.ranking.scoring import cosine_similarity, retrieve, retrieve_prepared
from pallas.ranking.text import (
    STOPWORDS,
    dictionary_frequency,
    encoded_parts,
    normalize_query,
    normalize_text,
    question_parts,
    recall_question,
    speaker_voice,
    tokenize,
    warm_up,
    warm_up_word_tags,
)
from pallas.ranking.trace import RetrievalResult
from pallas.ranking.vector_index import (
    IndexRows,
    Vector,
    VectorHit,
    VectorIndex,
    nearest_with_cosines,
    unit,
)
from pallas.ranking.weights import (
    BLOCK_DEFAULTS,
    BLOCK_KINDS,
    BlockRetrievalConfig,
    RelevanceWeights,
    ScoringConfig,
)

__all__ = [
    "BLOCK_DEFAULTS",
    "BLOCK_KINDS",
    "CATEGORY_TAG",
    "STOPWORDS",
    "BlockRetrievalConfig",
    "Bm25Index",
    "CandidateIndex",
    "IndexRows",
    "MemoryCandidate",
    "PreparedCandidates",
    "QuestionAdapter",
    "RelevanceWeights",
    "RetrievalResult",
    "ScopedCache",
    "ScoringConfig",
    "SimilarityGate",
    "Vector",
    "VectorHit",
    "VectorIndex",
    "class_names",
    "concept_similarity",
    "cosine_similarity",
    "dictionary_frequency",
    "encoded_parts",
    "fact_concepts",
    "load_question_adapters",
    "name_one_instance",
    "nearest_with_cosines",
    "normalize_query",
    "normalize_text",
    "prepare_candidates",
    "query_concepts",
    "question_parts",
    "recall_question",
    "retrieve",
    "retrieve_prepared",
    "share_a_class",
    "similarity_gate",
    "speaker_voice",
    "tokenize",
    "unit",
    "warm_up",
    "warm_up_word_tags",
]
