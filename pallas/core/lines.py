"""One group line as every QQ account of the deployment sees it: its fingerprint.

Two accounts in one group each receive every line, with two different `message_id`s (OneBot
ids are per account). What the two copies share is the group, the speaker, the time (whole
seconds, stamped by QQ) and the content; `line_fingerprint` hashes exactly that, leaving out
what is per account: a quoted message's id (`reply`), the download `url` of a picture or file
(its signed token differs per fetch).

A member may post the same line twice in one second ("+1", a sticker spam): `Occurrences`
numbers the copies of one fingerprint that one account received (1, 2, …), so the line key
`<fingerprint>:<n>` of the n-th copy is the same for every account and two identical lines
stay two lines. The message table is unique on (group, line key): the first account's copy is
stored, the other accounts' copies are refused as duplicates (`pallas.core.db`), and the line
key is also what the accounts claim before answering (`state_keys.answer_claim`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from cachetools import LRUCache

# per-account data of a segment: never part of the fingerprint
_VOLATILE_KEYS = frozenset({"url", "file_size", "path", "summary_url"})
FINGERPRINT_CHARS = 32
OCCURRENCE_WINDOW_S = 120.0  # copies of one fingerprint are numbered within this window
OCCURRENCES_KEPT = 4096  # fingerprints remembered per account (oldest dropped first)


def _stable_segment(segment: Mapping[str, Any]) -> list[Any]:
    kind = str(segment.get("type", ""))
    data = segment.get("data") or {}
    if kind == "reply":  # the quoted message's id is per account
        return [kind]
    kept = {str(k): str(v) for k, v in data.items() if k not in _VOLATILE_KEYS}
    return [kind, sorted(kept.items())]


def line_fingerprint(
    group_id: int, user_id: int, time: float, segments: Iterable[Mapping[str, Any]]
) -> str:
    """The same for every account's copy of one line (see the module doc)."""
    content = [_stable_segment(s) for s in segments]
    blob = json.dumps([group_id, user_id, int(time), content], ensure_ascii=False)
    # surrogatepass: a lone surrogate (the edge makes text storable first, `pallas.core.storable`,
    # but a line key must never be what fails) hashes as its own code unit
    data = blob.encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=FINGERPRINT_CHARS // 2).hexdigest()


def line_key(fingerprint: str, occurrence: int) -> str:
    return f"{fingerprint}:{occurrence}"


class Occurrences:
    """How many copies of each fingerprint one account has received lately (per account:
    each account counts its own copies, so the n-th copy gets the same key everywhere)."""

    def __init__(
        self, *, window_s: float = OCCURRENCE_WINDOW_S, kept: int = OCCURRENCES_KEPT
    ) -> None:
        self._window_s = window_s
        # the fingerprints received least recently go first
        self._seen: LRUCache[tuple[int, str], tuple[float, int]] = LRUCache(kept)

    def next(self, account: int, fingerprint: str, now: float) -> int:
        """The number of this copy (1 for the first) of `fingerprint` for `account`."""
        key = (account, fingerprint)
        last = self._seen.get(key)
        count = 1 if last is None or now - last[0] > self._window_s else last[1] + 1
        self._seen[key] = (now, count)  # now the most recently received
        return count

    def key_for(
        self,
        account: int,
        group_id: int,
        user_id: int,
        time: float,
        segments: Iterable[Mapping[str, Any]],
        now: float,
    ) -> str:
        """The line key of a group line `account` just received."""
        fingerprint = line_fingerprint(group_id, user_id, time, segments)
        return line_key(fingerprint, self.next(account, fingerprint, now))


__all__ = ["Occurrences", "line_fingerprint", "line_key"]
