"""Shared files and voice messages of a turn: find them in OneBot segments, fetch, decode.

URLs come from group members and are fetched with the SSRF-hardened fetcher (public hosts only,
pinned connections, size-capped stream, one deadline). Text is decoded with a fallback chain:
BOM → UTF-8 → GB18030 (what Windows users in QQ groups save) → UTF-8 with replacement.
"""

from __future__ import annotations

import codecs
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from pallas.providers.image_fetch import FetchError, ImageFetchConfig, ImageFetcher

log = logging.getLogger("pallas.attachments")

_TEXT_TYPES = ("text/", "application/octet-stream", "application/x-markdown", "application/json")
_AUDIO_TYPES = ("audio/", "application/octet-stream", "video/")  # QQ voice: silk/amr/mp3


@dataclass(frozen=True, slots=True)
class FileRef:
    name: str
    url: str
    size: int | None
    origin: str  # "message" | "quoted"


@dataclass(frozen=True, slots=True)
class AttachmentText:
    """One attachment as the model will read it; `status` says what happened."""

    kind: str  # "file" | "voice"
    name: str
    text: str
    status: str  # "read" | "truncated" | "transcribed" | "placeholder" | "<fetch error>"
    encoding: str = ""
    origin: str = "message"

    def to_trace(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "status": self.status,
            "chars": len(self.text),
            "encoding": self.encoding,
            "origin": self.origin,
        }


class MediaFetcher(ImageFetcher):
    """The SSRF-safe image fetcher, accepting other media types (text files, audio)."""

    def __init__(self, config: ImageFetchConfig, accepted: Sequence[str], **kw: Any) -> None:
        super().__init__(config, **kw)
        self._accepted = tuple(accepted)
        self._client.headers["Accept"] = "*/*"

    def accepts(self, media_type: str) -> bool:
        return not media_type or media_type.startswith(self._accepted)


def text_fetcher(base: ImageFetchConfig, max_bytes: int) -> MediaFetcher:
    return MediaFetcher(base.model_copy(update={"max_bytes": max_bytes}), _TEXT_TYPES)


def audio_fetcher(base: ImageFetchConfig, max_bytes: int) -> MediaFetcher:
    return MediaFetcher(base.model_copy(update={"max_bytes": max_bytes}), _AUDIO_TYPES)


def _size(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def file_refs(segments: Iterable[Mapping[str, Any]], origin: str) -> list[FileRef]:
    """`file` segments with a fetchable URL (NapCat / Lagrange put one in `url`)."""
    refs = []
    for seg in segments:
        if seg.get("type") != "file":
            continue
        data = seg.get("data") or {}
        name = str(data.get("name") or data.get("file") or "")
        url = str(data.get("url") or "")
        if name:
            refs.append(
                FileRef(PurePosixPath(name).name, url, _size(data.get("file_size")), origin)
            )
    return refs


def voice_urls(segments: Iterable[Mapping[str, Any]]) -> list[str]:
    """URLs of `record` segments ('' when the implementation gave none)."""
    out = []
    for seg in segments:
        if seg.get("type") == "record":
            data = seg.get("data") or {}
            url = str(data.get("url") or data.get("file") or "")
            out.append(url if url.startswith(("http://", "https://")) else "")
    return out


def decode_text(data: bytes) -> tuple[str, str]:
    """(text, encoding) with the fallback chain of the module docstring."""
    for bom, name in (
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            return data.decode(name, errors="replace"), name
    for name in ("utf-8", "gb18030"):
        try:
            return data.decode(name), name
        except UnicodeDecodeError:
            continue
    return data.decode("utf-8", errors="replace"), "utf-8-replace"


def wanted(ref: FileRef, extensions: Sequence[str], max_bytes: int) -> str:
    """'' when the file should be read, else why not."""
    if PurePosixPath(ref.name.lower()).suffix not in extensions:
        return "not_text_file"
    if not ref.url:
        return "no_url"
    if ref.size is not None and ref.size > max_bytes:
        return "too_large"
    return ""


async def fetch_text(fetcher: MediaFetcher, ref: FileRef, max_chars: int) -> AttachmentText:
    fetched = await fetcher.fetch(ref.url)
    if isinstance(fetched, FetchError):
        log.info("attachment %s not read: %s", ref.name, fetched)
        return AttachmentText("file", ref.name, "", fetched.reason.value, origin=ref.origin)
    text, encoding = decode_text(fetched.data)
    text = text.replace("\x00", "").replace("\r\n", "\n").strip()
    status = "read"
    if len(text) > max_chars:
        text, status = text[:max_chars].rstrip() + "…", "truncated"
    return AttachmentText("file", ref.name, text, status, encoding, ref.origin)
