"""The per-group configuration model: everything an admin can tune for one group.

Built from `config/groups/default.toml` and `config/groups/<group_id>.toml` over these
embedded defaults (see `pallas.core.config_files.GroupConfigStore`).
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field

from pallas.context.config import ContextConfig
from pallas.context.rules_config import ContextRulesConfig
from pallas.core.config_files import DEFAULT_ONLY
from pallas.features.attachments import AttachmentConfig
from pallas.features.cost import BudgetConfig, CostConfig
from pallas.features.kb import KnowledgePlaceholderConfig
from pallas.features.learning import LearningConfig
from pallas.features.memory import RetrievalConfig
from pallas.features.reminders import ReminderConfig
from pallas.features.retention import RetentionConfig
from pallas.features.session import SessionSummaryConfig
from pallas.features.stickers import StickerConfig
from pallas.features.svars import SvarConfig
from pallas.features.tools import ToolsConfig
from pallas.features.voice import VoiceConfig
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


GROUP_ONLY_TOOLS = frozenset({"activity"})  # reads the group's messages: none in private


def _private_budget() -> BudgetConfig:
    return BudgetConfig(chat_calls=300, chat_tokens=1_500_000, vision_calls=50)


class PrivateConfig(BaseModel):
    """`[private]`: who may DM the bot, and what a private chat may cost. Read from
    `config/groups/default.toml` only (a private chat has no group file: group id 0 is the
    defaults); the private turn itself runs on the rest of the defaults (persona, `[chat]`,
    `[cost.member]`, ...)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    friends: bool = True  # answer the bot's QQ friends
    group_temp: bool = False  # answer temp sessions started from a group
    strangers: bool = False  # answer anyone else who can reach the bot
    blocklist: list[int] = Field(default_factory=list)  # never answered (superusers always are)
    # in private, the user's own person facts taught in groups are recalled too (never other
    # members' facts, never group memory)
    use_group_facts: bool = True
    # every private chat of one bot account together, per China day (0 = no limit)
    budget: BudgetConfig = Field(default_factory=_private_budget)


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
    reminders: ReminderConfig = Field(default_factory=ReminderConfig)  # members' reminders
    voice: VoiceConfig = Field(default_factory=VoiceConfig)  # the persona speaks (docs/voice.md)
    # who is answered in private and what private chats cost: default.toml only (a private
    # chat has no group file), rejected by name in a group file
    private: PrivateConfig = Field(default_factory=PrivateConfig, json_schema_extra=DEFAULT_ONLY)

    def for_private_chat(self) -> GroupConfig:
        """The config a private turn runs on: these defaults with `[private.budget]` as the
        daily budget of the bot's private chats, and nothing that group id 0 would share
        between users (every private chat is group 0): no group-scope session variables, no
        group activity tool."""
        cost = self.cost.model_copy(update={"budget": self.private.budget})
        own = [v for v in self.svars.variables if v.scope == "member"]
        svars = self.svars.model_copy(update={"variables": own})
        allowed = tuple(t for t in self.tools.allowed if t not in GROUP_ONLY_TOOLS)
        tools = self.tools.model_copy(update={"allowed": allowed})
        return self.model_copy(update={"cost": cost, "svars": svars, "tools": tools})

    def effective_routing(self) -> RoutingConfig:
        """`enabled = false` at the top level silences routing too."""
        if self.enabled:
            return self.routing
        return self.routing.model_copy(update={"enabled": False})


class TurnConfigs:
    """A chat turn's config by group id: the group's own, or for a private chat (group 0) the
    defaults with `[private.budget]` as the daily budget (`GroupConfig.for_private_chat`),
    rebuilt only when the defaults were reloaded."""

    def __init__(self, group_config: Callable[[int], GroupConfig]) -> None:
        self._group_config = group_config
        self._private: tuple[GroupConfig, GroupConfig] | None = None

    def __call__(self, group_id: int) -> GroupConfig:
        config = self._group_config(group_id)
        if group_id:
            return config
        cached = self._private
        if cached is None or cached[0] is not config:
            cached = self._private = (config, config.for_private_chat())
        return cached[1]
