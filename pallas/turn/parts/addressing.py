"""Every name the bot answers to, in one place (`Addressing`).

Routing's triggers (and their third-person rule), tool planning, the member memory commands and
the replay all take their alias list from here, so "is this addressed to the bot, by which
name?" has one answer: the persona's name and aliases, the deployment's NICKNAME list, and —
for the callers that do not go through routing's own trigger detection — the group's
`[routing.triggers] extra_aliases`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pallas.config import GroupConfig
from pallas.features.persona import PersonaPack


def _unique(names: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(name for name in names if name))


@dataclass(frozen=True, slots=True)
class Addressing:
    nicknames: tuple[str, ...] = ()  # NoneBot's NICKNAME (the driver config)

    def routing_aliases(self, persona: PersonaPack) -> tuple[str, ...]:
        """The names routing matches; routing adds the group's `extra_aliases` itself."""
        return _unique((*persona.aliases, persona.name, *self.nicknames))

    def aliases(self, persona: PersonaPack, config: GroupConfig | None = None) -> tuple[str, ...]:
        """Every name, the group's `extra_aliases` included (tools, memory commands, replay)."""
        extra = config.effective_routing().triggers.extra_aliases if config is not None else ()
        return _unique((*self.routing_aliases(persona), *extra))


__all__ = ["Addressing"]
