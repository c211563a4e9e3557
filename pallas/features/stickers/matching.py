"""`[表情:名字]` → the best sticker of this group's pool, or none. Pure.

Score of one sticker for the wanted name (both cleaned, lower-cased):
    1.0   the names are equal
    0.8   one name contains the other
    0.5   the wanted name (2+ chars) appears in the sticker's description
    else  character-bigram overlap (Dice) of the wanted name with the sticker's name, and half
          of it with its description
Stickers below `min_match` are never sent (nothing is better than a wrong sticker); ties go to
the sticker members send most.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pallas.features.stickers.repository import Sticker

_STRIP = " \t[]【】「」()（）:：,，.。!！?？~～"


@dataclass(frozen=True, slots=True)
class StickerMatch:
    sticker: Sticker | None
    score: float
    reason: str  # exact | contains | in_description | similar | no_match | empty_pool | no_name


def _norm(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch not in _STRIP)


def _bigrams(text: str) -> set[str]:
    if len(text) < 2:
        return {text} if text else set()
    return {text[i : i + 2] for i in range(len(text) - 1)}


def _dice(a: str, b: str) -> float:
    x, y = _bigrams(a), _bigrams(b)
    if not x or not y:
        return 0.0
    return 2 * len(x & y) / (len(x) + len(y))


def score_sticker(wanted: str, sticker: Sticker) -> tuple[float, str]:
    want, name = _norm(wanted), _norm(sticker.name)
    if not want:
        return 0.0, "no_name"
    if name and want == name:
        return 1.0, "exact"
    if name and (want in name or name in want):
        return 0.8, "contains"
    described = _norm(sticker.description)
    similar = max(_dice(want, name), 0.5 * _dice(want, described))
    if len(want) >= 2 and want in described and similar < 0.5:
        return 0.5, "in_description"
    return similar, "similar"


def best_sticker(wanted: str, pool: Sequence[Sticker], *, min_match: float) -> StickerMatch:
    if not _norm(wanted):
        return StickerMatch(None, 0.0, "no_name")
    if not pool:
        return StickerMatch(None, 0.0, "empty_pool")
    best: tuple[float, int, Sticker, str] | None = None
    for sticker in pool:
        if sticker.banned:
            continue
        score, reason = score_sticker(wanted, sticker)
        key = (score, sticker.seen_count, sticker, reason)
        if best is None or key[:2] > best[:2]:
            best = key
    if best is None or best[0] < min_match or best[0] <= 0:
        return StickerMatch(None, best[0] if best else 0.0, "no_match")
    return StickerMatch(best[2], best[0], best[3])


def prompt_names(pool: Sequence[Sticker], limit: int) -> tuple[str, ...]:
    """The short list of distinct sticker names the model may use, most used first."""
    names: dict[str, None] = {}
    for sticker in pool:
        name = sticker.name.strip()
        if name and not sticker.banned:
            names.setdefault(name, None)
        if len(names) >= limit:
            break
    return tuple(names)
