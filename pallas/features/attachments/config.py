"""`[attachments]` group config: which shared files are read into a turn, and their caps."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

KIB = 1024


class AttachmentConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    # read a .txt / .md file that is sent with an @ to the bot or quoted in an addressed message
    read_files: bool = True
    extensions: tuple[str, ...] = (".txt", ".md")  # file types read
    # larger files are not read
    max_file_bytes: int = Field(default=256 * KIB, ge=1 * KIB, le=8 * 1024 * KIB)
    max_file_chars: int = Field(default=3000, ge=100, le=50_000)  # per file, after decoding
    max_files: int = Field(default=2, ge=0, le=8)  # files read per turn
    # voice messages: `[语音]`, or a transcript when PALLAS_TRANSCRIBE_MODEL is set
    transcribe_voice: bool = True
    # larger voice messages are not transcribed
    max_voice_bytes: int = Field(default=4 * 1024 * KIB, ge=1 * KIB, le=25 * 1024 * KIB)
    max_transcript_chars: int = Field(default=500, ge=20, le=5000)  # transcript cut to this length

    @field_validator("extensions")
    @classmethod
    def _lower(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(e.lower() if e.startswith(".") else f".{e.lower()}" for e in value)
