"""`assemble_direct_chat_context`: retrieval for one REPLY turn, from pluggable sources.

Each `ContextSource` (memory, knowledge, relationships, person facts, old topics, group style,
…) looks at the turn and contributes pre-rendered blocks by section id plus a trace. This
function runs them side by side, times each one and merges their results in source order into
a `ChatContextBundle`; it does not decide where blocks go in the prompt (the pipeline does).
A failing source is logged and skipped: a reply without memory beats no reply.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from pallas.context.chat_prompt import ReplyShapeView
from pallas.context.processor_inputs import RetrievedBlock
from pallas.core.eager import eager_gather
from pallas.core.turn import TurnInput

log = logging.getLogger("pallas.context")


# The group config as one source reads it. The context layer cannot name `GroupConfig` (the
# config layer is above it), so each source declares the Protocol of the fields it reads
# (`ContextSource[ItsView]`); the turn passes `GatherRequest[GroupConfig]`, and mypy checks
# that `GroupConfig` satisfies every source's view where the sources are listed.
ConfigT = TypeVar("ConfigT", covariant=True)
ConfigT_contra = TypeVar("ConfigT_contra", contravariant=True)
C = TypeVar("C")


@dataclass(frozen=True, slots=True)
class GatherRequest(Generic[ConfigT]):
    """What a source may look at. `config` is the group's config, as the source's view."""

    turn: TurnInput
    current_text: str
    now: float
    config: ConfigT
    persona_name: str
    allow_persistent_memory: bool
    short_social: bool
    addressed: bool
    # what retrieval searches with: `current_text` without the calls of the bot's name
    # (`routing.triggers.without_call`); `current_text` itself when not given
    question: str | None = None

    @property
    def query(self) -> str:
        """The text a retrieval searches with (see `question`)."""
        return self.current_text if self.question is None else self.question


@dataclass(frozen=True, slots=True)
class SourceContribution:
    blocks: Mapping[str, RetrievedBlock] = field(default_factory=dict)
    trace: Mapping[str, Any] = field(default_factory=dict)
    reply_shape: ReplyShapeView | None = None
    feedback_blocklist: tuple[str, ...] = ()


class ContextSource(Protocol[ConfigT_contra]):
    """A retrieval source over the config view `ConfigT_contra` (a Protocol `GroupConfig` meets)."""

    @property
    def name(self) -> str: ...

    async def gather(self, request: GatherRequest[ConfigT_contra]) -> SourceContribution: ...


class TurnAnticipator(Protocol[ConfigT_contra]):
    """What a source starts when an addressed line is read at the edge, before its turn runs
    (memory: the question's encode in the encoder's process). Never awaited, never raises
    into the edge: it starts background work and returns. `question` is what the turn's
    retrievals will search with (`GatherRequest.query` of a turn without merged lines)."""

    def anticipate(self, turn: TurnInput, question: str, config: ConfigT_contra) -> None: ...


@dataclass(frozen=True, slots=True)
class ChatContextBundle:
    blocks: Mapping[str, RetrievedBlock] = field(default_factory=dict)
    traces: Mapping[str, Any] = field(default_factory=dict)
    stage_durations_ms: Mapping[str, float] = field(default_factory=dict)
    reply_shape: ReplyShapeView | None = None
    feedback_blocklist: tuple[str, ...] = ()
    failed_sources: tuple[str, ...] = ()


async def assemble_direct_chat_context(
    sources: Sequence[ContextSource[C]], request: GatherRequest[C]
) -> ChatContextBundle:
    # The sources run side by side (their DB reads overlap; a source served from memory costs
    # no loop round, see `eager_gather`); the results merge in source order, so the bundle is
    # the same as running them one after another.
    durations: dict[str, float] = {}
    results = await eager_gather(*(_run(source, request, durations) for source in sources))
    blocks: dict[str, RetrievedBlock] = {}
    traces: dict[str, Any] = {}
    failed: list[str] = []
    reply_shape: ReplyShapeView | None = None
    blocklist: list[str] = []
    for source, contribution in zip(sources, results, strict=True):
        if contribution is None:
            failed.append(source.name)
            continue
        for section_id, block in contribution.blocks.items():
            if block.text.strip() and section_id not in blocks:
                blocks[section_id] = block
        if contribution.trace:
            traces[source.name] = dict(contribution.trace)
        reply_shape = contribution.reply_shape or reply_shape
        blocklist.extend(contribution.feedback_blocklist)
    return ChatContextBundle(
        blocks=blocks,
        traces=traces,
        stage_durations_ms={s.name: durations[s.name] for s in sources if s.name in durations},
        reply_shape=reply_shape,
        feedback_blocklist=tuple(dict.fromkeys(blocklist)),
        failed_sources=tuple(failed),
    )


async def _run(
    source: ContextSource[C], request: GatherRequest[C], durations: dict[str, float]
) -> SourceContribution | None:
    """One source's contribution, None when it failed (logged)."""
    started = time.perf_counter()
    try:
        return await source.gather(request)
    except Exception:
        log.exception(
            "context source %s failed (group %s, message %s); continuing without it",
            source.name,
            request.turn.group_id,
            request.turn.message_id,
        )
        return None
    finally:
        durations[source.name] = round((time.perf_counter() - started) * 1000, 3)
