"""The context pipeline engine: ordered processors over one prompt draft.

A `PromptDraft` holds the system-prompt sections (in canonical section order) and the messages
sequence, every item with its provenance. Processors are run by ascending `priority`; each
returns a *new* draft, so a failing processor can never leave a half-applied change behind:

- an optional processor that raises is logged, recorded as `failed` in the trace and skipped
  (the draft from before it continues down the pipeline);
- a core processor that raises aborts the run with `CoreProcessorError` (the caller ends the
  turn quietly: nothing is sent to the group).

Per-group config may reorder processors (`order`) and disable optional ones (`disabled`).
Reordering permutes the listed processors among the slots they occupy by default; unlisted
processors keep their place, and `fixed` processors (budget, formatter: they must see the
final text) never move. Core processors cannot be disabled. `reset()` restores the defaults.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any, Generic, NamedTuple, Protocol, TypeVar, runtime_checkable

from pallas.context.budget_report import BudgetReport
from pallas.context.sections import section_rank
from pallas.core.errors import PallasError

log = logging.getLogger("pallas.context.pipeline")

# DraftMessage.kind values
AMBIENT = "ambient"
HISTORY = "history"
SUMMARY = "summary"
CURRENT = "current"
TIMELINE_IMAGES = "timeline_images"
HINT = "hint"

ContentBlocks = tuple[Mapping[str, Any], ...]


@dataclass(frozen=True, slots=True)
class PromptSection:
    """One system-prompt block with its provenance.

    `headers` lists the `【…】` headers (names without brackets) the renderer emitted on purpose;
    when empty, a header at the very start of `text` is taken as the block's own title. Any
    other bracketed header inside the text is neutralised by the assembler. `trusted` skips
    sanitising altogether (only the fixed injection guard).
    """

    section_id: str
    text: str
    source: str = ""
    source_tokens: tuple[str, ...] = ()
    memory_ids: tuple[str, ...] = ()
    protected: bool = False
    headers: tuple[str, ...] = ()
    trusted: bool = False


@dataclass(frozen=True, slots=True)
class DraftMessage:
    """One message of the request sequence; `content` is text or OpenAI content blocks."""

    role: str
    content: str | ContentBlocks
    source: str = ""
    source_token: str = ""
    kind: str = HISTORY
    protected: bool = False
    ref_ids: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """The textual part of the content (image blocks contribute nothing)."""
        if isinstance(self.content, str):
            return self.content
        return "".join(
            str(b.get("text", "")) for b in self.content if b.get("type", "text") == "text"
        )

    @property
    def has_blocks(self) -> bool:
        return not isinstance(self.content, str)

    def to_openai(self) -> dict[str, Any]:
        content: Any = self.content
        if not isinstance(content, str):
            content = [dict(b) for b in content]
        return {"role": self.role, "content": content}


def _freeze(data: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(data or {}))


@dataclass(frozen=True, slots=True)
class PromptDraft:
    """System sections (canonical order) + messages + the values processors hand on.

    Values a later stage reads are typed fields; `meta` only carries what is recorded for the
    operator (`trace.<processor id>`, `skipped.<id>`, `rules`, skip reasons).
    """

    sections: tuple[PromptSection, ...] = ()
    messages: tuple[DraftMessage, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)
    request: tuple[Mapping[str, Any], ...] | None = None  # set by the formatter
    timeline_present: bool = False  # set by the group_timeline processor
    timeline_images: tuple[str, ...] = ()  # its http(s) image URLs (timeline_images reads them)
    budget_report: BudgetReport | None = None  # set by the budget stage
    macros_used: frozenset[str] = frozenset()  # {{macros}} expanded so far (rule processors)

    def __post_init__(self) -> None:
        object.__setattr__(self, "meta", _freeze(self.meta))

    @property
    def section_ids(self) -> tuple[str, ...]:
        return tuple(s.section_id for s in self.sections)

    def get_section(self, section_id: str) -> PromptSection | None:
        return next((s for s in self.sections if s.section_id == section_id), None)

    def put_section(self, section: PromptSection) -> PromptDraft:
        """Insert `section` at its canonical position, replacing one with the same id."""
        rest = [s for s in self.sections if s.section_id != section.section_id]
        rank = section_rank(section.section_id)
        pos = next((i for i, s in enumerate(rest) if section_rank(s.section_id) > rank), len(rest))
        rest.insert(pos, section)
        return self.evolve(sections=tuple(rest))

    def without_section(self, section_id: str) -> PromptDraft:
        return self.evolve(sections=tuple(s for s in self.sections if s.section_id != section_id))

    def with_sections(self, sections: Iterable[PromptSection]) -> PromptDraft:
        return self.evolve(sections=tuple(sections))

    def with_messages(self, messages: Iterable[DraftMessage]) -> PromptDraft:
        return self.evolve(messages=tuple(messages))

    def insert_before_current(self, message: DraftMessage) -> PromptDraft:
        """Insert before the current user message (or append when there is none)."""
        msgs = list(self.messages)
        pos = next((i for i, m in enumerate(msgs) if m.kind == CURRENT), len(msgs))
        msgs.insert(pos, message)
        return self.evolve(messages=tuple(msgs))

    def with_meta(self, **values: Any) -> PromptDraft:
        return self.evolve(meta={**self.meta, **values})

    def with_request(self, request: Sequence[Mapping[str, Any]]) -> PromptDraft:
        return self.evolve(request=tuple(request))

    def evolve(self, **changes: Any) -> PromptDraft:
        """`dataclasses.replace(self, **changes)` at ~40 % of its cost (the processors derive
        ~18 drafts a turn): the fields are copied, a new `meta` is frozen as `__init__` does."""
        if unknown := changes.keys() - _DRAFT_FIELD_SET:
            raise TypeError(f"PromptDraft has no field(s) {sorted(unknown)}")
        new = object.__new__(PromptDraft)
        for name in _DRAFT_FIELDS:
            _set(new, name, changes[name] if name in changes else getattr(self, name))
        if "meta" in changes:
            _set(new, "meta", _freeze(changes["meta"]))
        return new


_DRAFT_FIELDS = tuple(f.name for f in fields(PromptDraft))
_DRAFT_FIELD_SET = frozenset(_DRAFT_FIELDS)
_set = object.__setattr__


# What a run's processors read. The engine does not name it (the chat processors read the
# context layer's `ChatTurnContext`, built above this module): `ContextPipeline[Ctx]` runs only
# `Processor[Ctx]`s, so mypy checks each processor's `ctx` reads against the pipeline's type.
CtxT = TypeVar("CtxT")
CtxT_contra = TypeVar("CtxT_contra", contravariant=True)


@runtime_checkable
class Processor(Protocol[CtxT_contra]):
    id: str
    priority: int
    core: bool
    enabled: bool  # default enabled state (config may disable optional processors)
    fixed: bool  # keeps its default slot when the order is overridden

    async def process(self, draft: PromptDraft, ctx: CtxT_contra) -> PromptDraft: ...


class BaseProcessor(Generic[CtxT_contra]):
    """Convenience base: subclasses set the class attributes and implement `process`."""

    id: str = ""
    priority: int = 500
    core: bool = False
    enabled: bool = True
    fixed: bool = False

    async def process(
        self, draft: PromptDraft, ctx: CtxT_contra
    ) -> PromptDraft:  # pragma: no cover
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} id={self.id} priority={self.priority}>"


class StepTrace(NamedTuple):
    """One processor's step of a run (a named tuple: ~27 are built per turn)."""

    processor_id: str
    status: str  # "ok" | "disabled" | "failed"
    duration_ms: float = 0.0
    core: bool = False
    error: str = ""


@dataclass(frozen=True, slots=True)
class PipelineResult:
    draft: PromptDraft
    steps: tuple[StepTrace, ...]
    warnings: tuple[str, ...] = ()

    @property
    def durations_ms(self) -> dict[str, float]:
        return {s.processor_id: s.duration_ms for s in self.steps}

    @property
    def failed(self) -> tuple[str, ...]:
        return tuple(s.processor_id for s in self.steps if s.status == "failed")


class CoreProcessorError(PallasError):
    """A core processor failed: the turn must be aborted (quietly for the group)."""

    def __init__(self, processor_id: str, cause: BaseException, steps: Sequence[StepTrace]):
        super().__init__(f"core processor {processor_id!r} failed: {cause!r}")
        self.processor_id = processor_id
        self.cause = cause
        self.steps = tuple(steps)


@dataclass(frozen=True, slots=True)
class PlannedStep(Generic[CtxT]):
    processor: Processor[CtxT]
    enabled: bool


class ContextPipeline(Generic[CtxT]):
    """An ordered, configurable set of processors. Instances are immutable."""

    def __init__(
        self,
        processors: Iterable[Processor[CtxT]],
        *,
        order: Sequence[str] = (),
        disabled: Iterable[str] = (),
    ) -> None:
        procs = list(processors)
        ids = [p.id for p in procs]
        if len(set(ids)) != len(ids):
            raise ValueError(f"duplicate processor ids: {ids}")
        self._processors = tuple(procs)
        self._order = tuple(order)
        self._disabled = frozenset(disabled)
        self._plan, self._warnings = self._make_plan()

    @property
    def processors(self) -> tuple[Processor[CtxT], ...]:
        return self._processors

    @property
    def plan(self) -> tuple[PlannedStep[CtxT], ...]:
        return self._plan

    @property
    def order(self) -> tuple[str, ...]:
        return tuple(step.processor.id for step in self._plan)

    @property
    def warnings(self) -> tuple[str, ...]:
        return self._warnings

    def configure(
        self, *, order: Sequence[str] = (), disabled: Iterable[str] = ()
    ) -> ContextPipeline[CtxT]:
        """A copy with a per-group order override and disabled set."""
        return ContextPipeline(self._processors, order=order, disabled=disabled)

    def reset(self) -> ContextPipeline[CtxT]:
        """A copy with the default order and default enabled states."""
        return ContextPipeline(self._processors)

    def _make_plan(self) -> tuple[tuple[PlannedStep[CtxT], ...], tuple[str, ...]]:
        warnings: list[str] = []
        default = sorted(self._processors, key=lambda p: p.priority)  # stable for ties
        by_id = {p.id: p for p in default}
        for pid in [*self._order, *sorted(self._disabled)]:
            if pid not in by_id:
                warnings.append(f"unknown processor id {pid!r} ignored")
        movable = [pid for pid in dict.fromkeys(self._order) if pid in by_id]
        for pid in movable:
            if by_id[pid].fixed:
                warnings.append(f"processor {pid!r} is fixed; order override ignored")
        movable = [pid for pid in movable if not by_id[pid].fixed]
        slots = sorted(i for i, p in enumerate(default) if p.id in movable)
        ordered = list(default)
        for slot, pid in zip(slots, movable, strict=True):
            ordered[slot] = by_id[pid]
        plan: list[PlannedStep[CtxT]] = []
        for proc in ordered:
            enabled = bool(proc.enabled) and proc.id not in self._disabled
            if proc.core and not enabled:
                warnings.append(f"core processor {proc.id!r} cannot be disabled")
                enabled = True
            plan.append(PlannedStep(proc, enabled))
        return tuple(plan), tuple(warnings)

    async def run(self, draft: PromptDraft, ctx: CtxT) -> PipelineResult:
        steps: list[StepTrace] = []
        for step in self._plan:
            proc = step.processor
            if not step.enabled:
                steps.append(StepTrace(proc.id, "disabled", core=proc.core))
                continue
            started = time.perf_counter()
            try:
                result = await proc.process(draft, ctx)
                if not isinstance(result, PromptDraft):
                    raise TypeError(f"process() returned {type(result).__name__}, not PromptDraft")
            except Exception as exc:
                elapsed = (time.perf_counter() - started) * 1000
                steps.append(StepTrace(proc.id, "failed", elapsed, proc.core, repr(exc)))
                if proc.core:
                    log.error("core context processor %s failed", proc.id, exc_info=exc)
                    raise CoreProcessorError(proc.id, exc, steps) from exc
                log.warning("context processor %s failed; skipped", proc.id, exc_info=exc)
                continue
            draft = result
            elapsed = (time.perf_counter() - started) * 1000
            steps.append(StepTrace(proc.id, "ok", elapsed, proc.core))
        return PipelineResult(draft, tuple(steps), self._warnings)
