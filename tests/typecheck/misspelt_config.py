"""mypy proves that a misspelt config field is caught in the context, routing and turn layers.

Not a test pytest runs: `make lint` type-checks this file (`files` in mypy.ini). Each marked
line reads or passes a value through a type that crosses a layer boundary, misspelt or of the
wrong type, and carries `# type: ignore[<code>]`. mypy strict sets `warn_unused_ignores`, so if
one of those types ever becomes `Any` again the error goes away, the ignore becomes unused and
`make lint` fails. The context and routing layers cannot import `GroupConfig` (the config layer
is above them): they read typed views (Protocols, or their own config models), and the
`ContextSource[GroupConfig]` lines show that mypy also checks `GroupConfig` against a view.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Protocol

from pallas.config import GroupConfig
from pallas.context.context import ContextSource, GatherRequest, SourceContribution
from pallas.context.pipeline import PromptDraft
from pallas.context.processor_inputs import ChatPipeline, ChatTurnContext
from pallas.context.turn_rules import RulesConfigView, scan_cleaner
from pallas.core.group_preload import GroupLoad
from pallas.core.turn import TurnInput
from pallas.routing.config import RoutingConfig
from pallas.routing.evaluate import evaluate_route
from pallas.routing.route_state import RouteState
from pallas.routing.router import Router
from pallas.turn.contracts import PhraseSource, ReplyTurn

# ------------------------------------------------------------------------------ context/


async def context_layer(
    request: GatherRequest[GroupConfig],
    ctx: ChatTurnContext,
    rules: RulesConfigView,
    pipeline: ChatPipeline,
) -> None:
    _ = request.config.memory.shared_poolz  # type: ignore[attr-defined]
    _ = ctx.config.disabled_processorz  # type: ignore[attr-defined]
    _ = rules.context_rulez  # type: ignore[attr-defined]
    _ = scan_cleaner(request.config.memory, Path("regex"), ())  # type: ignore[arg-type]
    await pipeline.run(PromptDraft(), request.config.context)  # type: ignore[arg-type]


class _MisspeltView(Protocol):
    """A source's view naming a field `GroupConfig` does not have."""

    @property
    def memroy(self) -> object: ...


class _MisspeltSource:
    name = "misspelt"

    async def gather(self, request: GatherRequest[_MisspeltView]) -> SourceContribution:
        return SourceContribution()


def listed_with_the_group_config(right: ContextSource[GroupConfig]) -> None:
    """A source whose view `GroupConfig` does not satisfy cannot be listed with the others."""
    _: list[ContextSource[GroupConfig]] = [right, _MisspeltSource()]  # type: ignore[list-item]


# ------------------------------------------------------------------------------ routing/


async def routing_layer(
    config: RoutingConfig, router: Router, turn: TurnInput, group: GroupConfig
) -> None:
    _ = config.cooldown.dedupe_ttl_z  # type: ignore[attr-defined]
    rng = random.Random(0)
    await router.route(turn, group, aliases=(), now=0.0, rng=rng)  # type: ignore[arg-type]
    evaluate_route(turn, group, RouteState(), aliases=(), now=0.0, rng=rng)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------ turn/


async def turn_layer(reply: ReplyTurn, phrases: PhraseSource, load: GroupLoad[GroupConfig]) -> None:
    _ = reply.config.tools.mcp.alow  # type: ignore[attr-defined]
    _ = reply.config.learnign  # type: ignore[attr-defined]
    learning = reply.config.learning  # a section where the whole group config is read
    await phrases.low_engagement_phrases(1, 2, now=0.0, config=learning)  # type: ignore[arg-type]
    await load(1, 2, learning, 0.0)  # type: ignore[arg-type]
