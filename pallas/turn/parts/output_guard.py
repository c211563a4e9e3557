"""The model's answer, guarded like input before the group sees it or history keeps it (pure).

- Fake structure is neutralised in every bubble with the `prompt_guard` rules: `【系统】` →
  `〔系统〕`, `system: …` → `(system) …`, `</system>` → `(system)`, `<|im_start|>` → `(im_start)`.
  Otherwise the answer would read as a real header in the next turn's assistant history.
- An answer that reproduces a long span of the protected prompt text (the injection guard and
  the persona) is not sent at all: after normalisation (look-alikes folded, only letters, digits
  and CJK kept, lower case) any run of `min_span` characters found in the protected text counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from pallas.context.prompt_guard import PROMPT_INJECTION_GUARD, neutralise_structure, normalize_text
from pallas.features.persona import PersonaPack
from pallas.turn.parts.bubbles import ParsedReply

LEAK_MIN_SPAN = 30


@dataclass(frozen=True, slots=True)
class GuardedAnswer:
    bubbles: tuple[str, ...]
    reason: str = "ok"  # "ok" | "neutralised" | "prompt_leak"
    leaked_chars: int = 0  # normalised characters of the longest protected span reproduced

    @property
    def blocked(self) -> bool:
        return self.reason == "prompt_leak"


def leak_key(text: str) -> str:
    """Only what carries content, folded: spacing and punctuation cannot hide a copy."""
    return "".join(ch for ch in normalize_text(text).lower() if ch.isalnum())


@lru_cache(maxsize=32)
def _grams(protected: str, span: int) -> frozenset[str]:
    key = leak_key(protected)
    return frozenset(key[i : i + span] for i in range(len(key) - span + 1))


def longest_leak(answer: str, protected: str, min_span: int = LEAK_MIN_SPAN) -> int:
    """Length of the longest run (≥ `min_span`) of `answer` found in `protected`; 0 if none."""
    grams = _grams(protected, min_span)
    key = leak_key(answer)
    best, i = 0, 0
    while i + min_span <= len(key):
        if key[i : i + min_span] not in grams:
            i += 1
            continue
        end = i + min_span  # extend the run while it keeps matching
        while end < len(key) and key[end - min_span + 1 : end + 1] in grams:
            end += 1
        best, i = max(best, end - i), end
    return best


def guard_answer(
    bubbles: Sequence[str], protected: str, *, min_span: int = LEAK_MIN_SPAN
) -> GuardedAnswer:
    leaked = longest_leak("".join(bubbles), protected, min_span)
    if leaked:
        return GuardedAnswer((), "prompt_leak", leaked)
    guarded = tuple(neutralise_structure(b) for b in bubbles)
    return GuardedAnswer(guarded, "neutralised" if guarded != tuple(bubbles) else "ok")


def protected_text(persona: PersonaPack) -> str:
    """What an answer must never reproduce: the guard and the persona's own text."""
    parts = (PROMPT_INJECTION_GUARD, persona.sections.base, persona.sections.self_identity)
    return "\n".join(p for p in parts if p)


def guard_parsed_reply(parsed: ParsedReply, persona: PersonaPack) -> tuple[ParsedReply, str]:
    """`parsed` with guarded bubbles (silent for a prompt leak) and the guard's reason."""
    if not parsed.bubbles:
        return parsed, "ok"
    result = guard_answer(parsed.bubbles, protected_text(persona))
    if result.blocked:
        return replace(parsed, bubbles=(), sticker=None, reason="prompt_leak"), result.reason
    return replace(parsed, bubbles=result.bubbles), result.reason
