"""Who wrote each part of a draft: admin text (persona, self identity, prompt overrides) or
text that carries member input.

Placeholders (`【kb::…】`, `$[svars::…]`) render in admin text only, and member text gets its
op tags neutralised; the processors that do this (knowledge, session variables) ask here.
"""

from __future__ import annotations

from pallas.context import sections as S

ADMIN_SECTION_IDS = frozenset({S.PERSONA, S.SELF_IDENTITY})


def is_admin_text(section_id: str, source: str) -> bool:
    """Persona / self identity / sections a prompt override replaced, created or appended to."""
    return section_id in ADMIN_SECTION_IDS or "override" in source


def is_admin_message(source: str) -> bool:
    """A message an admin's prompt override placed in the sequence (depth / anchor injection)."""
    return source.startswith(("override", "prompt_override"))


def is_only_admin_text(section_id: str, source: str) -> bool:
    """No member-derived text at all (an appended-to section still holds its own content)."""
    return section_id in ADMIN_SECTION_IDS or source.startswith("override:")
