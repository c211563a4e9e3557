"""Attachments (spec processors 4 and 11): shared text files read into the message, voice
messages as `[语音]` or a transcript. The turn finds a message's files and voice segments
(`file_refs`, `voice_urls`, `wanted`), fetches them with the SSRF-safe fetchers and decodes
them (`fetch_text`, `decode_text`); files a member uploaded just before are remembered per
member (`remember_upload` / `take_upload`); `AttachmentProcessor` puts the texts right before
the current message of the prompt.
"""

from pallas.features.attachments.config import AttachmentConfig
from pallas.features.attachments.files import (
    AttachmentText,
    FileRef,
    audio_fetcher,
    decode_text,
    fetch_text,
    file_refs,
    text_fetcher,
    voice_urls,
    wanted,
)
from pallas.features.attachments.processor import AttachmentProcessor
from pallas.features.attachments.uploads import remember_upload, take_upload, upload_info

__all__ = [
    "AttachmentConfig",
    "AttachmentProcessor",
    "AttachmentText",
    "FileRef",
    "audio_fetcher",
    "decode_text",
    "fetch_text",
    "file_refs",
    "remember_upload",
    "take_upload",
    "text_fetcher",
    "upload_info",
    "voice_urls",
    "wanted",
]
