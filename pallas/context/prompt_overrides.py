"""Per-group overrides of whole system-prompt sections, by section id.

An admin can, in the group's config, `replace` a section's text, `append` to it, or `disable`
it. Rules:

- the injection guard can only be appended to (never replaced or disabled);
- protected sections (persona, self identity, reply-shape contract) cannot be disabled;
- `replace` / `append` on a section that rendered nothing this turn creates it;
- override text is admin input (trusted): headers at the start of its lines are kept, and it
  still goes through the assembler's sanitiser like every other block.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, model_validator

from pallas.context.pipeline import PromptSection
from pallas.context.prompt_guard import find_headers, leading_header
from pallas.context.sections import GUARD, PROTECTED_SECTION_IDS, SECTION_IDS

OverrideMode = Literal["replace", "append", "disable"]


class PromptOverrideConfig(BaseModel):
    """One `[[context.prompt_overrides]]` table of a group config file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    section_id: str
    mode: OverrideMode = "replace"
    text: str = ""
    bot_ids: list[int] = Field(default_factory=list)  # empty = every bot
    group_ids: list[int] = Field(default_factory=list)  # empty = every group

    @model_validator(mode="after")
    def _check(self) -> PromptOverrideConfig:
        if self.section_id not in SECTION_IDS:
            raise ValueError(f"unknown section_id {self.section_id!r}; known: {SECTION_IDS}")
        if self.section_id == GUARD and self.mode != "append":
            raise ValueError("the injection guard can only be appended to")
        if self.mode == "disable" and self.section_id in PROTECTED_SECTION_IDS:
            raise ValueError(f"section {self.section_id!r} is protected and cannot be disabled")
        if self.mode != "disable" and not self.text.strip():
            raise ValueError(f"mode {self.mode!r} needs a non-empty text")
        return self


@dataclass(frozen=True, slots=True)
class PromptOverride:
    section_id: str
    mode: OverrideMode
    text: str = ""
    origin: str = "config"


@dataclass(frozen=True, slots=True)
class AppliedOverride:
    section_id: str
    mode: OverrideMode
    outcome: str  # "replaced" | "appended" | "created" | "disabled" | "absent" | "refused"


class OverridesView(Protocol):
    """Where the overrides are configured (`ContextConfig`, which imports this module)."""

    @property
    def prompt_overrides(self) -> Sequence[PromptOverrideConfig]: ...


def load_chat_prompt_overrides(
    bot_id: int, group_id: int, config: OverridesView | Sequence[PromptOverrideConfig]
) -> tuple[PromptOverride, ...]:
    """Overrides that apply to `bot_id` in `group_id`.

    `config` is a `ContextConfig` (its `prompt_overrides`) or a sequence of
    `PromptOverrideConfig`.
    """
    items: Iterable[PromptOverrideConfig] = (
        config if isinstance(config, Sequence) else config.prompt_overrides
    )
    out: list[PromptOverride] = []
    for item in items:
        if item.bot_ids and bot_id not in item.bot_ids:
            continue
        if item.group_ids and group_id not in item.group_ids:
            continue
        out.append(PromptOverride(item.section_id, item.mode, item.text, "config"))
    return tuple(out)


def _apply_one(
    sections: list[PromptSection], ov: PromptOverride
) -> tuple[list[PromptSection], str]:
    idx = next((i for i, s in enumerate(sections) if s.section_id == ov.section_id), None)
    current = sections[idx] if idx is not None else None
    source = f"override:{ov.origin}"
    if ov.mode == "disable":
        if current is None:
            return sections, "absent"
        if current.protected or ov.section_id in PROTECTED_SECTION_IDS:
            return sections, "refused"
        return [s for s in sections if s.section_id != ov.section_id], "disabled"
    if ov.section_id == GUARD and ov.mode != "append":
        return sections, "refused"
    headers = find_headers(ov.text)
    if current is None:
        new = PromptSection(ov.section_id, ov.text.strip(), source=source, headers=headers)
        return [*sections, new], "created"
    if ov.mode == "replace":
        new = replace(current, text=ov.text.strip(), source=source, headers=headers, memory_ids=())
        outcome = "replaced"
    else:
        merged_headers = tuple(dict.fromkeys((*current.headers, *headers)))
        if not current.headers and (own := leading_header(current.text)):
            merged_headers = tuple(dict.fromkeys((own, *merged_headers)))
        new = replace(
            current,
            text=f"{current.text.rstrip()}\n{ov.text.strip()}",
            source=f"{current.source}+{source}",
            headers=merged_headers,
        )
        outcome = "appended"
    sections = list(sections)
    sections[idx] = new  # type: ignore[index]
    return sections, outcome


def apply_prompt_overrides(
    sections: Sequence[PromptSection], overrides: Iterable[PromptOverride]
) -> tuple[tuple[PromptSection, ...], tuple[AppliedOverride, ...]]:
    """Sections with the overrides applied in order, plus what each override did.

    Created sections are appended; callers that need canonical order re-insert them (the
    assembler sorts by section order anyway).
    """
    result = list(sections)
    applied: list[AppliedOverride] = []
    for ov in overrides:
        result, outcome = _apply_one(result, ov)
        applied.append(AppliedOverride(ov.section_id, ov.mode, outcome))
    return tuple(result), tuple(applied)
