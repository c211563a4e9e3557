"""The chat pipeline the bot runs: the context's processors plus the feature slices'.

The context layer knows no feature; the slices that write into the prompt hand their
processors in here — attachments (310: shared files / voice into the current message),
knowledge placeholders (450: `【kb::…】` in persona / overrides), session variables (500:
`<svar>` state, `$[svars::…]`). Priorities decide the order, so the default order is the one
spec 003 gives whatever the list order.
"""

from __future__ import annotations

from collections.abc import Sequence

from pallas.context.config import ContextConfig
from pallas.context.pipeline_cache import ChatPipelines
from pallas.context.processor_inputs import ChatPipeline, ChatProcessor, ChatTurnContext
from pallas.context.processors import build_context_pipeline
from pallas.context.request import ChatRequest
from pallas.context.request import assemble_chat_request as assemble_with
from pallas.core.token_pieces import PieceTokenCounter
from pallas.features.attachments import AttachmentProcessor
from pallas.features.kb import KnowledgePlaceholderProcessor
from pallas.features.svars import VariableProcessor


def feature_processors() -> list[ChatProcessor]:
    """The slices' processors, fresh instances (stateless, like the context's own)."""
    return [AttachmentProcessor(), KnowledgePlaceholderProcessor(), VariableProcessor()]


def build_chat_pipeline(
    config: ContextConfig | None = None,
    extra: Sequence[ChatProcessor] = (),
    *,
    token_counter: PieceTokenCounter | None = None,
) -> ChatPipeline:
    """The chat pipeline (plus plugin processors `extra`) with the group's order / disabled
    set; `token_counter` is the budget's (the reply path keeps one across turns)."""
    processors = [*feature_processors(), *extra]
    return build_context_pipeline(config, processors, token_counter=token_counter)


def chat_pipelines(tokens: PieceTokenCounter | None = None) -> ChatPipelines:
    """The reply path's pipelines by group setting, over the chat pipeline's processors."""
    return ChatPipelines(feature_processors(), tokens)


async def assemble_chat_request(
    ctx: ChatTurnContext, pipeline: ChatPipeline | None = None
) -> ChatRequest:
    """The request of one REPLY turn through `pipeline`, by default a chat pipeline built for
    the turn's config. Raises `CoreProcessorError` (abort the turn)."""
    return await assemble_with(ctx, pipeline or build_chat_pipeline(ctx.config))
