"""Key matching for worldbook entries: plain keys and SillyTavern ``/regex/flags`` keys.

Plain keys are substring matches, case-insensitive unless the entry or config says otherwise.
Whole-word matching (when enabled) uses Latin word boundaries and is never applied to a key
that contains CJK characters: Chinese has no spaces, so "罗德岛" must match inside "我在罗德岛上".
A Latin key next to CJK text ("我是doctor啊") counts as a whole word as well.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from pallas.core.text import contains_cjk
from pallas.features.worldbook.model import SelectiveLogic, WorldbookConfig, WorldbookEntry
from pallas.features.worldbook.result import SkippedEntry

_REGEX_KEY = re.compile(r"^/([\s\S]+?)/([gimsuy]*)$")
_UNESCAPED_SLASH = re.compile(r"(^|[^\\])/")
_JS_NAMED_GROUP = re.compile(r"\(\?<(?=[A-Za-z_])")
_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL}


def is_regex_key(key: str) -> bool:
    """True when `key` is written as ``/pattern/flags`` (SillyTavern's rule)."""
    match = _REGEX_KEY.match(key.strip())
    return match is not None and not _UNESCAPED_SLASH.search(match.group(1))


@lru_cache(maxsize=4096)
def compile_regex_key(key: str) -> re.Pattern[str] | None:
    """Compile a ``/pattern/flags`` key (JS syntax, mapped to Python). None if not a regex key.

    Raises `re.error` when it looks like a regex key but does not compile.
    """
    key = key.strip()
    if not is_regex_key(key):
        return None
    match = _REGEX_KEY.match(key)
    assert match is not None
    pattern, flag_text = match.group(1), match.group(2)
    pattern = _JS_NAMED_GROUP.sub("(?P<", pattern.replace("\\/", "/"))
    flags = 0
    for flag in flag_text:
        flags |= _FLAGS.get(flag, 0)
    return re.compile(pattern, flags)


def _is_latin_word_char(ch: str) -> bool:
    return (ch.isalnum() or ch == "_") and not contains_cjk(ch)


def _whole_word_in(needle: str, haystack: str) -> bool:
    start = haystack.find(needle)
    while start != -1:
        end = start + len(needle)
        before_ok = start == 0 or not _is_latin_word_char(haystack[start - 1])
        after_ok = end == len(haystack) or not _is_latin_word_char(haystack[end])
        if before_ok and after_ok:
            return True
        start = haystack.find(needle, start + 1)
    return False


def key_matches(
    key: str,
    haystack: str,
    *,
    case_sensitive: bool = False,
    whole_words: bool = False,
    folded_haystack: str | None = None,
) -> bool:
    """Does `key` occur in `haystack`? `folded_haystack` is haystack.lower(), if precomputed."""
    key = key.strip()
    if not key:
        return False
    regex = compile_regex_key(key)
    if regex is not None:
        return regex.search(haystack) is not None
    if case_sensitive:
        needle, text = key, haystack
    else:
        needle = key.lower()
        text = folded_haystack if folded_haystack is not None else haystack.lower()
    if not whole_words or contains_cjk(needle) or len(needle.split()) > 1:
        return needle in text
    return _whole_word_in(needle, text)


# ---------------------------------------------------------------- entry matching


@dataclass(slots=True)
class Candidate:
    entry: WorldbookEntry
    reason: str
    matched_key: str | None = None
    matched_in: str | None = None
    matched_secondary: tuple[str, ...] = ()
    score: int = 0


class ScanText:
    """The text one pass scans: message windows by depth, plus the recursion buffer."""

    def __init__(self, messages: Sequence[str]) -> None:
        self._messages = [m.strip() for m in messages]
        self._windows: dict[int, tuple[str, str]] = {}
        self._recursion: list[str] = []
        self._recursion_text: tuple[str, str] = ("", "")

    def window(self, depth: int) -> tuple[str, str]:
        if depth not in self._windows:
            text = "\n\x01".join(self._messages[-depth:]) if depth > 0 else ""
            self._windows[depth] = (text, text.lower())
        return self._windows[depth]

    def add_recursion(self, contents: Iterable[str]) -> None:
        self._recursion.extend(contents)
        text = "\n\x01".join(self._recursion)
        self._recursion_text = (text, text.lower())

    def parts(self, depth: int, step: int) -> list[tuple[str, tuple[str, str]]]:
        parts = [("messages", self.window(depth))]
        if step > 0 and self._recursion:
            parts.append(("recursion", self._recursion_text))
        return parts


def _secondary_ok(logic: SelectiveLogic, hits: int, total: int) -> bool:
    if logic == SelectiveLogic.AND_ANY:
        return hits > 0
    if logic == SelectiveLogic.NOT_ALL:
        return hits < total
    if logic == SelectiveLogic.NOT_ANY:
        return hits == 0
    return hits == total  # AND_ALL


def match_entry(
    entry: WorldbookEntry, scan: ScanText, step: int, config: WorldbookConfig
) -> Candidate | SkippedEntry:
    """Key matching for one entry in one pass (no timers, groups, probability or budget)."""
    depth = entry.scan_depth if entry.scan_depth is not None else config.scan_depth
    parts = scan.parts(depth, step)
    case = entry.case_sensitive if entry.case_sensitive is not None else config.case_sensitive
    whole = (
        entry.match_whole_words if entry.match_whole_words is not None else config.match_whole_words
    )

    def where(key: str) -> str | None:
        for label, (raw, folded) in parts:
            if key_matches(
                key, raw, case_sensitive=case, whole_words=whole, folded_haystack=folded
            ):
                return label
        return None

    primary = [(k, w) for k in entry.keys if (w := where(k)) is not None]
    if not primary:
        return SkippedEntry(entry.key_id, "no_primary_match", step=step)
    cand = Candidate(entry, "key", primary[0][0], primary[0][1], score=len(primary))
    if not (entry.selective and entry.secondary_keys):
        return cand
    hits = tuple(k for k in entry.secondary_keys if where(k) is not None)
    total = len(entry.secondary_keys)
    if not _secondary_ok(entry.selective_logic, len(hits), total):
        detail = f"{entry.selective_logic.name}: {len(hits)}/{total} secondary keys present"
        return SkippedEntry(entry.key_id, "secondary_logic", detail, step)
    cand.matched_secondary = hits
    if entry.selective_logic == SelectiveLogic.AND_ANY or (
        entry.selective_logic == SelectiveLogic.AND_ALL and len(hits) == total
    ):
        cand.score += len(hits)
    return cand
