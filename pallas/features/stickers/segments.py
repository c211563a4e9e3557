"""Which OneBot v11 segments are stickers, and their identity before any download.

- an `image` segment the implementation flags as a sticker: NapCat / Lagrange set
  `sub_type` (or `subType`) 1 and/or `summary` `[动画表情]`; a plain photo is never collected;
- an `mface` market face (`emoji_package_id`, `emoji_id`, `key`, `summary` like `[狗头]`).

`file_key` identifies the sticker in the group before its bytes are known: the implementation's
file name (usually the image's md5) for images, `mface:<package>:<emoji>` for market faces.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from pallas.core.image_placeholders import clean_description
from pallas.features.stickers.repository import Sighting

STICKER_SUMMARIES = frozenset({"[动画表情]", "[表情]"})
_MFACE_FIELDS = ("emoji_package_id", "emoji_id", "key", "summary")


def is_sticker_image(data: Mapping[str, Any]) -> bool:
    sub_type = data.get("sub_type", data.get("subType"))
    if str(sub_type).strip() == "1":
        return True
    return str(data.get("summary") or "").strip() in STICKER_SUMMARIES


def _image_key(data: Mapping[str, Any]) -> str:
    file = str(data.get("file") or data.get("file_unique") or "").strip()
    if file and not file.startswith(("base64://", "http://", "https://", "file://")):
        return f"image:{file[:160]}"
    url = str(data.get("url") or (file if file.startswith("http") else "")).strip()
    if not url:
        return ""
    parts = urlsplit(url)
    return f"image:{parts.netloc}{parts.path}"[:191]


def sticker_sightings(segments: Iterable[Mapping[str, Any]]) -> list[Sighting]:
    """The stickers in one message (usually none or one)."""
    found: list[Sighting] = []
    for seg in segments:
        kind = str(seg.get("type") or "")
        data = seg.get("data") or {}
        if kind == "image" and is_sticker_image(data):
            key = _image_key(data)
            url = str(data.get("url") or "")
            if not url and str(data.get("file") or "").startswith(("http://", "https://")):
                url = str(data["file"])
            if key and url:
                found.append(Sighting("image", key, url=url))
        elif kind == "mface":
            package, emoji = data.get("emoji_package_id"), data.get("emoji_id")
            if package in (None, "") or emoji in (None, ""):
                continue
            face = {k: str(data[k]) for k in _MFACE_FIELDS if data.get(k) not in (None, "")}
            summary = clean_description(str(data.get("summary") or ""), max_chars=16)
            found.append(
                Sighting(
                    "mface",
                    f"mface:{package}:{emoji}",
                    url=str(data.get("url") or ""),
                    face=face,
                    summary=summary,
                )
            )
    return found
