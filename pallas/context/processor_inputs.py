"""`ChatTurnContext`: the frozen inputs of one REPLY turn, read by the chat processors.

The orchestrator fills it once (rows from the stores, retrieval results, the turn decision);
processors never do I/O. Later sources plug in through `blocks` (pre-rendered, by section id).
What the feature slices read before the pipeline (session variables, the knowledge lookup,
attachments) is typed here by the protocols their processors need; the slices' own values
(`SvarView`, `KnowledgeLookup`, `AttachmentText`) satisfy them, the context layer names none.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any, Protocol

from pallas.context.chat_prompt import ReplyShapeSpec, ToolResult, TurnPolicy
from pallas.context.config import ContextConfig
from pallas.context.pipeline import BaseProcessor, ContextPipeline
from pallas.context.prompt_guard import DEFAULT_PERSONA_NAME
from pallas.context.rules_config import TurnRules
from pallas.core.records import SessionTurn, StoredMessage
from pallas.core.tokens import IMAGE_BLOCK_TOKENS


class VariableState(Protocol):
    """The session variables one turn sees (the svars slice's `SvarView`)."""

    def render_placeholders(self, text: str) -> tuple[str, tuple[str, ...]]:
        """`text` with its `$[svars::…]` placeholders rendered, and the names rendered."""
        ...

    def state_section(self) -> str:
        """The 【会话变量】 block for the model ("" when there is none to show)."""
        ...

    def trace_values(self) -> dict[str, Any]:
        """The values as the turn's trace records them."""
        ...


class PlaceholderFill(Protocol):
    """What one knowledge placeholder resolved to, and how."""

    @property
    def text(self) -> str: ...

    @property
    def trace(self) -> dict[str, Any]: ...


class KnowledgeResolver(Protocol):
    """Resolves `【kb::…】` placeholder texts for one turn (the kb slice's `KnowledgeLookup`)."""

    async def resolve(self, raw: str) -> PlaceholderFill: ...


class AttachmentItem(Protocol):
    """One shared file or voice message read before the pipeline (attachments' `AttachmentText`)."""

    @property
    def kind(self) -> str: ...  # "file" | "voice"

    @property
    def name(self) -> str: ...

    @property
    def text(self) -> str: ...

    @property
    def status(self) -> str: ...  # "read" | "truncated" | "transcribed" | …

    def to_trace(self) -> dict[str, Any]: ...


class PlacedEntryText(Protocol):
    """The text of one activated worldbook entry (the worldbook slice's `WorldbookEntry`)."""

    @property
    def content(self) -> str: ...

    @property
    def role(self) -> str: ...

    @property
    def depth(self) -> int: ...

    @property
    def source_token(self) -> str: ...


class PlacedEntry(Protocol):
    """An activated entry the worldbook processor places (the slice's `ActivatedEntry`)."""

    @property
    def entry(self) -> PlacedEntryText: ...

    @property
    def position(self) -> str: ...  # "before_persona" | "after_persona" | "at_depth"

    @property
    def key_id(self) -> str: ...

    @property
    def reason(self) -> str: ...  # "constant" | "key" | "sticky"


@dataclass(frozen=True, slots=True)
class RetrievedBlock:
    """A pre-rendered block from a retrieval source (memory, knowledge, style learning, …)."""

    text: str
    source: str = ""
    memory_ids: tuple[str, ...] = ()
    source_tokens: tuple[str, ...] = ()
    headers: tuple[str, ...] = ()  # headers the renderer emitted; inferred when empty
    items: tuple[PlacedEntry, ...] = ()  # results a processor places (worldbook entries)


def _frozen(data: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(data or {}))


@dataclass(frozen=True, slots=True)
class ChatTurnContext:
    """Everything the chat processors read; built once per REPLY turn by the orchestrator."""

    bot_id: int
    group_id: int  # 0 = private
    user_id: int
    now: datetime
    current_text: str
    config: ContextConfig = field(default_factory=ContextConfig)
    message_id: int | None = None
    persona_name: str = DEFAULT_PERSONA_NAME
    persona_text: str = ""
    self_identity_text: str = ""
    bot_nickname: str = ""
    # timeline / ambient labels, from the persona pack (not group config)
    bot_label: str = "牛牛"
    other_bot_label: str = "别的牛"
    assistant_label: str = "帕拉斯"
    turn_policy: TurnPolicy | None = None
    reply_shape: ReplyShapeSpec = field(default_factory=ReplyShapeSpec.casual)
    allow_sticker: bool = False
    sticker_names: tuple[str, ...] = ()  # the group's pool, offered in the shape contract
    # group timeline: "addressed" (8 lines), "ambient" (4 lines) or "none"
    timeline_mode: str = "addressed"
    timeline_messages: tuple[StoredMessage, ...] = ()
    other_bot_ids: tuple[int, ...] = ()
    quoted_bot_text: str | None = None
    vision_enabled: bool = False
    recognition_question: bool = False
    # messages sequence
    user_turns: tuple[SessionTurn, ...] = ()
    group_turns: tuple[SessionTurn, ...] = ()
    can_read_runtime_state: bool = True
    short_social: bool = False
    include_recent_pair: bool = False
    feedback_blocklist: tuple[str, ...] = ()
    # retrieval results by section id (group_expression … mid_term)
    blocks: Mapping[str, RetrievedBlock] = field(default_factory=dict)
    tool_results: tuple[ToolResult, ...] = ()
    tool_rules: tuple[str, ...] = ()
    token_budget: int | None = None  # model context window minus reserved output
    rules: TurnRules | None = None  # regex rules, placed injections, macro values
    # read by the slices' processors (attachments 310, kb_placeholders 450, svars 500) and the
    # budget (this turn's images)
    svars: VariableState | None = None
    knowledge: KnowledgeResolver | None = None
    attachments: tuple[AttachmentItem, ...] = ()
    turn_image_count: int = 0  # images this turn attaches after the pipeline (vision models)
    image_token_cost: int = IMAGE_BLOCK_TOKENS

    def __post_init__(self) -> None:
        object.__setattr__(self, "blocks", _frozen(self.blocks))

    @property
    def allow_persistent_memory(self) -> bool:
        return not self.short_social


# The chat pipeline and its processors, over this turn context (the engine is generic).
ChatProcessor = BaseProcessor[ChatTurnContext]
ChatPipeline = ContextPipeline[ChatTurnContext]
