"""Voice: the persona speaks through the TTS services operators already use (docs/voice.md).

`VoiceService` answers "<名字>说 …" with a OneBot `record` segment (or the text, with the
reason, when the voice is out of reach) and speaks the persona's short replies when the group
allows it; `decide.py` holds the pure decisions, `clean.py` what a voice cannot carry, the
providers themselves are `pallas.providers.tts`.
"""

from pallas.features.voice.clean import chinese_reading, clean_for_speech
from pallas.features.voice.config import VoiceCommandConfig, VoiceConfig
from pallas.features.voice.decide import (
    VoiceDecision,
    VoiceUsage,
    decide_command,
    decide_reply,
    parse_speak_command,
    unspeakable,
)
from pallas.features.voice.service import (
    REFUSED,
    OutputGuard,
    VoiceOutcome,
    VoiceService,
    record_segment,
)

__all__ = [
    "REFUSED",
    "OutputGuard",
    "VoiceCommandConfig",
    "VoiceConfig",
    "VoiceDecision",
    "VoiceOutcome",
    "VoiceService",
    "VoiceUsage",
    "chinese_reading",
    "clean_for_speech",
    "decide_command",
    "decide_reply",
    "parse_speak_command",
    "record_segment",
    "unspeakable",
]
