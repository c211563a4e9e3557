"""Memory rows as retrieval sees them: the stored key and fingerprint forms, the candidate a
row becomes, and the recency fallback for rows about the current speaker."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from pallas.features.memory.config import BlockRetrievalConfig
from pallas.features.memory.records import MemoryItem
from pallas.ranking import CATEGORY_TAG, MemoryCandidate, RetrievalResult, normalize_query

_KEY_JUNK = re.compile(r"[^0-9a-z\u3400-\u9fff]+")


def normalise_key(key: str) -> str:
    """Attribute key as stored: NFKC, lower-case, runs of other characters → ``_``."""
    norm = unicodedata.normalize("NFKC", key).lower()
    return _KEY_JUNK.sub("_", norm).strip("_")[:64]


def fingerprint(text: str) -> str:
    return normalize_query(text)[:255]


def to_candidate(item: MemoryItem) -> MemoryCandidate:
    return MemoryCandidate(
        id=item.ref,
        text=item.text,
        scope=item.scope,
        kind=item.kind,
        created_at=item.created_at,
        last_access_at=item.last_access_at,
        access_count=item.access_count,
        subject_user_id=item.subject_user_id,
        source=item.origin,
        expansion=expansion_text(item.source),
    )


def with_fallback(
    result: RetrievalResult,
    items: Sequence[MemoryItem],
    block: BlockRetrievalConfig,
    fallback_k: int,
) -> list[MemoryItem]:
    """Items to add after relevance: most recently used first, until `fallback_k` are chosen.

    Used for rows about the current speaker (relationship notes, person facts), where a
    stable preference is worth showing even when this message does not mention it. Never
    exceeds the block's top-k or char cap.
    """
    want = min(fallback_k, block.top_k) - len(result.chosen)
    if want <= 0:
        return []
    chosen = set(result.ids)
    chars = sum(len(c.text) for c in result.chosen)
    extra: list[MemoryItem] = []
    for item in items:  # repository order: most recently used / written first
        if len(extra) >= want:
            break
        if item.ref in chosen or chars + len(item.text) > block.max_chars:
            continue
        extra.append(item)
        chars += len(item.text)
    return extra


__all__ = ["fingerprint", "normalise_key", "to_candidate", "with_fallback"]


def expansion_text(source: Mapping[str, Any] | None) -> str:
    """The stored expansion of a row as one string for the index ('' when there is none)."""
    stored = (source or {}).get("expansion")
    if not isinstance(stored, Mapping):
        return ""
    parts: list[str] = []
    for key in ("keywords", "questions"):
        value = stored.get(key)
        if isinstance(value, list):
            parts.extend(str(v) for v in value if isinstance(v, str))
    category = stored.get("category")
    if isinstance(category, str) and category and category != "other":
        parts.append(f"{CATEGORY_TAG}{category}")  # read by `concepts.fact_concepts`
    return " ".join(parts)
