"""Worldbook values: normalised entries, per-group timed-effect state, config.

Entries come from SillyTavern world-info JSON or V2 character-card ``character_book`` files
(see `worldbook.loader`) and are normalised into the frozen `WorldbookEntry`. Activation lives
in `worldbook.activation`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum, StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_DEPTH = 4
DEFAULT_ORDER = 100
DEFAULT_GROUP_WEIGHT = 100.0


class SelectiveLogic(IntEnum):
    """How secondary keys combine with a primary match (SillyTavern numbering)."""

    AND_ANY = 0  # at least one secondary key present
    NOT_ALL = 1  # at least one secondary key absent
    NOT_ANY = 2  # no secondary key present
    AND_ALL = 3  # every secondary key present


class WorldbookPosition(StrEnum):
    """Where an activated entry is rendered."""

    BEFORE_PERSONA = "before_persona"  # knowledge section, before the persona text
    AFTER_PERSONA = "after_persona"  # knowledge section, after the persona text
    AT_DEPTH = "at_depth"  # a message inserted `depth` messages from the end


# SillyTavern numeric positions: 0 before char, 1 after char, 2/3 author's note top/bottom,
# 4 @depth, 5/6 example messages top/bottom, 7 outlet. We have no author's note or example
# messages, so everything but 0 and 4 renders after the persona in the knowledge section.
ST_POSITIONS: Mapping[int, WorldbookPosition] = {
    0: WorldbookPosition.BEFORE_PERSONA,
    1: WorldbookPosition.AFTER_PERSONA,
    2: WorldbookPosition.AFTER_PERSONA,
    3: WorldbookPosition.AFTER_PERSONA,
    4: WorldbookPosition.AT_DEPTH,
    5: WorldbookPosition.AFTER_PERSONA,
    6: WorldbookPosition.AFTER_PERSONA,
    7: WorldbookPosition.AFTER_PERSONA,
}
ROLES: Mapping[int, str] = {0: "system", 1: "user", 2: "assistant"}


@dataclass(frozen=True, slots=True)
class WorldbookEntry:
    """One normalised worldbook entry. `key_id` ("<book>.<uid>") is its identity everywhere."""

    book: str
    uid: int
    content: str
    keys: tuple[str, ...] = ()
    secondary_keys: tuple[str, ...] = ()
    comment: str = ""
    enabled: bool = True
    constant: bool = False
    selective: bool = True
    selective_logic: SelectiveLogic = SelectiveLogic.AND_ANY
    order: int = DEFAULT_ORDER  # higher = higher priority for the budget, rendered later
    position: WorldbookPosition = WorldbookPosition.AFTER_PERSONA
    st_position: int = 1  # the original SillyTavern position number
    depth: int = DEFAULT_DEPTH
    role: str = "system"
    probability: float = 100.0
    use_probability: bool = True
    groups: tuple[str, ...] = ()  # inclusion groups ("a, b" in the file)
    group_override: bool = False
    group_weight: float = DEFAULT_GROUP_WEIGHT
    use_group_scoring: bool | None = None  # None = book/config default
    scan_depth: int | None = None  # None = config default
    case_sensitive: bool | None = None
    match_whole_words: bool | None = None
    exclude_recursion: bool = False  # cannot be activated by recursion
    prevent_recursion: bool = False  # its content does not trigger other entries
    delay_until_recursion: int = 0  # 0 = off; N = only from recursion level N on
    sticky: int = 0  # stays active this many turns after activating
    cooldown: int = 0  # cannot activate for this many turns after its effect ends
    delay: int = 0  # not active until the chat has at least this many messages

    @property
    def key_id(self) -> str:
        return f"{self.book}.{self.uid}"

    @property
    def source_token(self) -> str:
        return f"worldbook:{self.book}#{self.uid}"


# ---------------------------------------------------------------- timed-effect state


@dataclass(frozen=True, slots=True)
class EntryTimer:
    """Timed effects of one entry, in turn indices (inclusive)."""

    activated_at: int  # turn index of the (non-sticky) activation that started the effects
    sticky_until: int | None = None  # active without a key match through this turn
    cooldown_until: int | None = None  # cannot activate through this turn (unless sticky)
    # SillyTavern: a cooldown after a sticky starts when the end of the sticky is seen
    pending_cooldown: int = 0

    def is_sticky(self, turn_index: int) -> bool:
        return self.sticky_until is not None and self.activated_at < turn_index <= self.sticky_until

    def is_cooling(self, turn_index: int) -> bool:
        return self.cooldown_until is not None and turn_index <= self.cooldown_until

    def relevant_after(self, turn_index: int) -> bool:
        ends = [t for t in (self.sticky_until, self.cooldown_until) if t is not None]
        return bool(self.pending_cooldown) or (bool(ends) and max(ends) > turn_index)


@dataclass(frozen=True, slots=True)
class WorldbookState:
    """Per-group snapshot: entry key_id → timer. Persist `to_dict()` in the StateStore."""

    timers: Mapping[str, EntryTimer] = field(default_factory=dict)

    def timer(self, key_id: str) -> EntryTimer | None:
        return self.timers.get(key_id)

    def to_dict(self) -> dict[str, Any]:
        return {
            key: {
                "activated_at": t.activated_at,
                "sticky_until": t.sticky_until,
                "cooldown_until": t.cooldown_until,
                **({"pending_cooldown": t.pending_cooldown} if t.pending_cooldown else {}),
            }
            for key, t in sorted(self.timers.items())
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> WorldbookState:
        """Inverse of `to_dict`; malformed items are dropped (state is advisory)."""
        timers: dict[str, EntryTimer] = {}
        for key, raw in (data or {}).items():
            try:
                timers[str(key)] = EntryTimer(
                    activated_at=int(raw["activated_at"]),
                    sticky_until=_opt_int(raw.get("sticky_until")),
                    cooldown_until=_opt_int(raw.get("cooldown_until")),
                    pending_cooldown=int(raw.get("pending_cooldown") or 0),
                )
            except (KeyError, TypeError, ValueError, AttributeError):
                continue
        return cls(timers=timers)


def _opt_int(value: Any) -> int | None:
    return None if value is None else int(value)


# ---------------------------------------------------------------- config


class BookOptions(BaseModel):
    """Per-book overrides (``[worldbook.book_options.<book>]``); unset = the group's value."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_recursion_steps: int | None = Field(default=None, ge=0, le=50)
    budget_cap_tokens: int | None = Field(default=None, ge=0)  # this book's own cap; 0 = none
    timed_unit: Literal["messages", "replies"] | None = None


class WorldbookConfig(BaseModel):
    """Per-group worldbook settings (``[worldbook]`` in a group's TOML)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True  # false: no worldbook entries in prompts
    books: tuple[str, ...] = ()  # file names under config/worldbooks/ bound to the group
    scan_depth: int = Field(default=4, ge=0, le=1000)  # recent messages scanned for keys
    recursion: bool = True  # scan activated content for more keys
    max_recursion_steps: int = Field(default=3, ge=0, le=50)  # passes after the initial scan
    budget_share: float = Field(default=0.25, ge=0, le=1)  # of the context token budget
    budget_cap_tokens: int = Field(default=1000, ge=0)  # 0 = no cap
    case_sensitive: bool = False  # keys match case-sensitively
    # SillyTavern's default; never applied to keys containing CJK characters
    match_whole_words: bool = True
    use_group_scoring: bool = False  # inclusion groups pick by score (SillyTavern)
    # sticky / cooldown unit: "messages" = chat messages in the group (SillyTavern),
    # "replies" = this bot's reply turns (Pallas before 0012)
    timed_unit: Literal["messages", "replies"] = "messages"
    # per-book overrides, by book name
    book_options: dict[str, BookOptions] = Field(default_factory=dict)

    def budget_tokens(self, context_tokens: int) -> int:
        budget = round(self.budget_share * max(0, context_tokens))
        if self.budget_cap_tokens > 0:
            budget = min(budget, self.budget_cap_tokens)
        return budget

    def option(self, book: str, name: str) -> Any:
        """A per-book option, else the group value (the per-book cap: 0 when unset)."""
        value = getattr(self.book_options.get(book) or _NO_OPTIONS, name)
        if value is not None:
            return value
        return 0 if name == "budget_cap_tokens" else getattr(self, name)

    def max_steps_any(self) -> int:
        steps = [o.max_recursion_steps for o in self.book_options.values()]
        return max([self.max_recursion_steps, *(s for s in steps if s is not None)])


_NO_OPTIONS = BookOptions()
