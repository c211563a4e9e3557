"""The per-group configuration model: everything an admin can tune for one group.

Built from `config/groups/default.toml` and `config/groups/<group_id>.toml` over these
embedded defaults (see `pallas.core.config_files.GroupConfigStore`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from pallas.context.config import ContextConfig
from pallas.context.rules_config import ContextRulesConfig
from pallas.features.attachments import AttachmentConfig
from pallas.features.cost import CostConfig
from pallas.features.kb import KnowledgePlaceholderConfig
from pallas.features.learning import LearningConfig
from pallas.features.memory import RetrievalConfig
from pallas.features.retention import RetentionConfig
from pallas.features.session import SessionSummaryConfig
from pallas.features.stickers import StickerConfig
from pallas.features.svars import SvarConfig
from pallas.features.tools import ToolsConfig
from pallas.features.worldbook import WorldbookConfig
from pallas.providers.image_fetch import ImageFetchConfig
from pallas.providers.models import ModelProfile, default_profiles
from pallas.routing.config import RoutingConfig
from pallas.routing.freshness import FreshnessConfig
from pallas.routing.merge_wait import MergeWaitConfig


class ChatConfig(BaseModel):
    """How a REPLY turn is run (the context itself is `ContextConfig`)."""

    model_config = ConfigDict(extra="forbid")

    # Wait this long after an addressed message before building the prompt, so a member's
    # quick follow-up lines ("等下" / "还有…") are folded into the same turn.
    merge_window_s: float = Field(default=1.2, ge=0, le=10)
    merge_wait: MergeWaitConfig = Field(default_factory=MergeWaitConfig)  # only when unfinished
    # times a turn re-waits for more lines
    max_accumulate_retries: int = Field(default=3, ge=0, le=10)
    at_sender_on_first_bubble: bool = False  # @ the member in the first bubble
    allow_sticker: bool = False  # send real stickers from the group's pool ([stickers])


class GroupConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = True  # False: record only, never speak
    record: bool = True  # False: do not store this group's messages either
    persona: str = "pallas"  # file name under config/personas/ (without .toml)
    admins: list[int] = Field(default_factory=list)  # extra admins besides owner/admin roles
    other_bot_ids: list[int] = Field(default_factory=list)  # same-deployment bots ("别的牛")

    routing: RoutingConfig = Field(default_factory=RoutingConfig)
    context: ContextConfig = Field(default_factory=ContextConfig)
    context_rules: ContextRulesConfig = Field(default_factory=ContextRulesConfig)
    chat: ChatConfig = Field(default_factory=ChatConfig)
    models: dict[str, ModelProfile] = Field(default_factory=default_profiles)
    memory: RetrievalConfig = Field(default_factory=RetrievalConfig)
    worldbook: WorldbookConfig = Field(default_factory=WorldbookConfig)
    learning: LearningConfig = Field(default_factory=LearningConfig)
    session: SessionSummaryConfig = Field(default_factory=SessionSummaryConfig)
    images: ImageFetchConfig = Field(default_factory=ImageFetchConfig)
    tools: ToolsConfig = Field(default_factory=ToolsConfig)
    svars: SvarConfig = Field(default_factory=SvarConfig)  # session variables (<svar> tags)
    kb: KnowledgePlaceholderConfig = Field(default_factory=KnowledgePlaceholderConfig)
    attachments: AttachmentConfig = Field(default_factory=AttachmentConfig)
    freshness: FreshnessConfig = Field(default_factory=FreshnessConfig)  # stale messages
    stickers: StickerConfig = Field(default_factory=StickerConfig)  # the group's sticker pool
    cost: CostConfig = Field(default_factory=CostConfig)  # reply rate limits and budgets
    retention: RetentionConfig = Field(default_factory=RetentionConfig)  # 0 days = keep

    def effective_routing(self) -> RoutingConfig:
        """`enabled = false` at the top level silences routing too."""
        if self.enabled:
            return self.routing
        return self.routing.model_copy(update={"enabled": False})
