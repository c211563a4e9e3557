"""`assemble_direct_chat_context`: retrieval for one REPLY turn, from pluggable sources.

Each `ContextSource` (memory, knowledge, relationships, person facts, old topics, group style,
…) looks at the turn and contributes pre-rendered blocks by section id plus a trace. This
function only runs them in order, times each stage and collects the results into a
`ChatContextBundle`; it does not decide where blocks go in the prompt (the pipeline does).
A failing source is logged and skipped: a reply without memory beats no reply.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pallas.core.turn import TurnInput
from pallas.product.llm.context.processor_inputs import RetrievedBlock

log = logging.getLogger("pallas.context")


@dataclass(frozen=True, slots=True)
class GatherRequest:
    """What a source may look at. `config` is the group's `GroupConfig`."""

    turn: TurnInput
    current_text: str
    now: float
    config: Any
    persona_name: str
    allow_persistent_memory: bool
    short_social: bool
    addressed: bool


@dataclass(frozen=True, slots=True)
class SourceContribution:
    blocks: Mapping[str, RetrievedBlock] = field(default_factory=dict)
    trace: Mapping[str, Any] = field(default_factory=dict)
    reply_shape: Any | None = None  # a ReplyShapePolicy-like object
    feedback_blocklist: tuple[str, ...] = ()


class ContextSource(Protocol):
    name: str

    async def gather(self, request: GatherRequest) -> SourceContribution: ...


@dataclass(frozen=True, slots=True)
class ChatContextBundle:
    blocks: Mapping[str, RetrievedBlock] = field(default_factory=dict)
    traces: Mapping[str, Any] = field(default_factory=dict)
    stage_durations_ms: Mapping[str, float] = field(default_factory=dict)
    reply_shape: Any | None = None
    feedback_blocklist: tuple[str, ...] = ()
    failed_sources: tuple[str, ...] = ()


async def assemble_direct_chat_context(
    sources: Sequence[ContextSource], request: GatherRequest
) -> ChatContextBundle:
    blocks: dict[str, RetrievedBlock] = {}
    traces: dict[str, Any] = {}
    durations: dict[str, float] = {}
    failed: list[str] = []
    reply_shape = None
    blocklist: list[str] = []
    for source in sources:
        started = time.perf_counter()
        try:
            contribution = await source.gather(request)
        except Exception:
            log.exception(
                "context source %s failed (group %s, message %s); continuing without it",
                source.name,
                request.turn.group_id,
                request.turn.message_id,
            )
            failed.append(source.name)
            continue
        finally:
            durations[source.name] = round((time.perf_counter() - started) * 1000, 3)
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
        stage_durations_ms=durations,
        reply_shape=reply_shape,
        feedback_blocklist=tuple(dict.fromkeys(blocklist)),
        failed_sources=tuple(failed),
    )
