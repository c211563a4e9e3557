"""`[voice]`: when the persona speaks, and through which TTS services (docs/voice.md)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from pallas.core.config_files import DEFAULT_ONLY
from pallas.providers.tts import SpeechEndpointConfig

# words the command never speaks in the bot's voice (besides the output guard's checks)
DEFAULT_BLOCKED_WORDS: tuple[str, ...] = (
    "傻逼", "煞笔", "傻b", "傻x", "操你", "草你", "艹你", "草泥马", "你妈", "尼玛", "去死",
    "死全家", "杀了你", "滚蛋", "脑残", "智障", "贱人", "婊子",
)  # fmt: skip


class VoiceCommandConfig(BaseModel):
    """「牛牛说 …」：成员让牛牛用语音说一句话。"""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(
        default=True, description="开启「<名字>说 …」命令（[voice] enabled 也要开）"
    )
    who: Literal["everyone", "admins"] = Field(
        default="everyone", description="谁能用：everyone 所有人；admins 仅群主、管理员和 admins"
    )
    max_chars: int = Field(
        default=60, ge=1, le=500, description="一句最多多少字（清理后），超过就不说"
    )
    member_daily: int = Field(
        default=5, ge=0, le=1000, description="每人每天最多用几次（0 = 不限；管理员不限）"
    )
    blocked_words: tuple[str, ...] = Field(
        default=DEFAULT_BLOCKED_WORDS, description="含这些词的话不用语音说"
    )


class VoiceConfig(BaseModel):
    """语音：牛牛用 TTS 说话（命令、回复语音消息、按概率把短回复说出来）。"""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(default=False, description="总开关：关 = 从不发语音")
    command: VoiceCommandConfig = Field(default_factory=VoiceCommandConfig)
    reply_to_voice: bool = Field(
        default=False, description="成员发语音时，牛牛的回复也用语音（短回复才说）"
    )
    reply_probability: float = Field(
        default=0.0, ge=0, le=1, description="牛牛的普通短回复有多大概率用语音说（0 = 从不）"
    )
    reply_max_chars: int = Field(
        default=40, ge=1, le=300, description="回复超过这么多字就不说，只发文字"
    )
    daily_chars: int = Field(default=3000, ge=0, description="每群每天最多合成多少字（0 = 不限）")
    daily_calls: int = Field(default=100, ge=0, description="每群每天最多合成几次（0 = 不限）")
    # the TTS services, tried in order (a failure moves on to the next); deployment-wide, so
    # set in config/groups/default.toml only: a group file cannot point the bot at a URL
    providers: tuple[SpeechEndpointConfig, ...] = Field(
        default=(), json_schema_extra=DEFAULT_ONLY,
        description="TTS 服务，按顺序尝试（只能在 default.toml 里写）",
    )  # fmt: skip


__all__ = ["DEFAULT_BLOCKED_WORDS", "VoiceCommandConfig", "VoiceConfig"]
