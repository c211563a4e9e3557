"""Exact BPE counts of long prompt text from cached counts of its pieces.

The system prompt changes on every turn (the group timeline gains a line, the current time
moves), but almost all of its lines were in the previous turn's prompt. `PieceTokenCounter`
splits a text at *hard boundaries* and adds up cached counts of the pieces, so a turn encodes
only the lines it has not seen before.

Why the sum is exact. cl100k_base first cuts the text into chunks with its pre-tokenizer
regex, then runs BPE inside each chunk: the count is the sum of the chunks' BPE lengths. A
hard boundary is the position right after a ``"\\n"`` whose next character is not whitespace.
No alternative of the cl100k pattern (`CL100K_PATTERN`) matches a newline followed by a
non-whitespace character — letters / digits runs exclude ``\\r\\n`` from their optional prefix,
the punctuation run may only *end* with newlines, and the remaining alternatives are
whitespace only — so every chunking of the whole text has a chunk boundary there, and the
chunk that starts there depends only on the text after it. A piece that ends at a hard
boundary ends with a whitespace run ending in ``"\\n"``; whether that run is followed by a
non-space character (inside the whole text) or by the end of the string (the piece alone),
``\\s++$`` / ``\\s*[\\r\\n]`` match it the same way. Hence the chunks of the whole text are the
chunks of its pieces, and so is the count. `PieceTokenCounter` only splits when the loaded
encoding's pattern is exactly `CL100K_PATTERN`; with any other pattern it counts the whole
text (still exact, just not cached). `tests/unit/core/test_token_pieces.py` compares it with
a whole-text encode over real prompts and random text.

Whole texts up to `max_piece_chars` are remembered too (an unchanged section costs one
lookup). The cache is bounded by entries and by the total characters it holds; pieces longer
than `max_piece_chars` are counted every time (they are rare: one very long line).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

import tiktoken

from pallas.core.tokens import get_encoding

# tiktoken's cl100k_base pre-tokenizer (tiktoken 0.7+), the only one the split is proven for
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)

MAX_ENTRIES = 8192
MAX_CACHED_CHARS = 400_000  # ≈1–2 MB of piece text at most
MAX_PIECE_CHARS = 2048


def split_pieces(text: str) -> list[str]:
    """`text` cut right after every newline that is followed by a non-whitespace character.

    ``"".join(split_pieces(text)) == text``. `str.isspace` is true for every Unicode
    White_Space character (the regex's ``\\s``) and a few more, so a doubtful character is
    never split before.
    """
    lines = text.split("\n")
    pieces: list[str] = []
    current: list[str] = [lines[0]]
    for line in lines[1:]:
        if line and not line[0].isspace():
            current.append("")  # the "\n" closing the current piece
            pieces.append("\n".join(current))
            current = [line]
        else:
            current.append(line)
    pieces.append("\n".join(current))
    return pieces


class PieceTokenCounter:
    """Exact cl100k token counts with an LRU of piece counts (one per long-lived owner)."""

    def __init__(
        self,
        *,
        max_entries: int = MAX_ENTRIES,
        max_chars: int = MAX_CACHED_CHARS,
        max_piece_chars: int = MAX_PIECE_CHARS,
        encoding: Callable[[], tiktoken.Encoding] = get_encoding,
    ) -> None:
        # An OrderedDict, not cachetools (the project's LRU elsewhere): two bounds at once
        # (entries and characters), and this is the hottest cache — every piece of every
        # prompt — where cachetools' Python-level get / set cost 2-6x an OrderedDict's.
        self._cache: OrderedDict[str, int] = OrderedDict()
        self._chars = 0
        self._max_entries = max_entries
        self._max_chars = max_chars
        self._max_piece_chars = max_piece_chars
        self._encoding = encoding
        self._splits: bool | None = None  # decided on first use: the pattern is cl100k's
        self.hits = 0
        self.misses = 0

    def _encode_count(self, text: str) -> int:
        return len(self._encoding().encode_ordinary(text))

    def _can_split(self) -> bool:
        if self._splits is None:
            self._splits = getattr(self._encoding(), "_pat_str", None) == CL100K_PATTERN
        return self._splits

    def count(self, text: str) -> int:
        """Tokens of `text` (0 for empty): exactly `len(encode_ordinary(text))`."""
        if not text:
            return 0
        if not self._can_split():
            return self._encode_count(text)
        if "\n" not in text or text in self._cache:  # an unchanged section: one lookup
            return self._piece(text)
        tokens = sum(self._piece(piece) for piece in split_pieces(text))
        if len(text) <= self._max_piece_chars:
            self._remember(text, tokens)  # exact: the sum of its pieces is its count
        return tokens

    def _piece(self, piece: str) -> int:
        cached = self._cache.get(piece)
        if cached is not None:
            self.hits += 1
            self._cache.move_to_end(piece)
            return cached
        self.misses += 1
        tokens = self._encode_count(piece)
        if len(piece) <= self._max_piece_chars:
            self._remember(piece, tokens)
        return tokens

    def _remember(self, piece: str, tokens: int) -> None:
        self._cache[piece] = tokens
        self._chars += len(piece)
        while len(self._cache) > self._max_entries or self._chars > self._max_chars:
            old, _ = self._cache.popitem(last=False)
            self._chars -= len(old)

    def __len__(self) -> int:
        return len(self._cache)

    @property
    def cached_chars(self) -> int:
        return self._chars

    def clear(self) -> None:
        self._cache.clear()
        self._chars = 0
