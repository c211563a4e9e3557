"""Run the chat pipeline for one turn and hand back the exact request plus its trace."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pallas.context.budget_report import BudgetReport
from pallas.context.chat_prompt import ChatPromptAssembler, draft_request
from pallas.context.pipeline import PromptDraft, StepTrace
from pallas.context.processor_inputs import ChatPipeline, ChatTurnContext


def request_messages(draft: PromptDraft, *, block_max_chars: int = 4000) -> list[dict[str, Any]]:
    """The request to send: the formatter's output, or the raw request when it was disabled."""
    if draft.request is not None:
        return [dict(m) for m in draft.request]
    return draft_request(draft, block_max_chars=block_max_chars)


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """The outcome of the pipeline for one REPLY turn: what to send and how it was built."""

    messages: tuple[Mapping[str, Any], ...]
    draft: PromptDraft
    steps: tuple[StepTrace, ...]
    warnings: tuple[str, ...] = ()
    block_max_chars: int = 4000

    @property
    def system_prompt(self) -> str:
        """The draft's system prompt, assembled on demand (the turn sends `messages`, where
        the formatter already put it)."""
        return ChatPromptAssembler(
            self.draft.sections, block_max_chars=self.block_max_chars
        ).build()

    @property
    def section_ids(self) -> tuple[str, ...]:
        return self.draft.section_ids

    @property
    def budget_report(self) -> BudgetReport | None:
        return self.draft.budget_report


async def assemble_chat_request(ctx: ChatTurnContext, pipeline: ChatPipeline) -> ChatRequest:
    """Run the pipeline over an empty draft. Raises `CoreProcessorError` (abort the turn).

    The pipeline is the caller's: the chat pipeline with the feature slices' processors is
    built above this layer (`pallas.turn.parts.chat_pipeline`)."""
    result = await pipeline.run(PromptDraft(), ctx)
    draft = result.draft
    return ChatRequest(
        messages=tuple(request_messages(draft, block_max_chars=ctx.config.block_max_chars)),
        draft=draft,
        steps=result.steps,
        warnings=result.warnings,
        block_max_chars=ctx.config.block_max_chars,
    )
