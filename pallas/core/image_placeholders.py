"""Image placeholders in session history (deferred image understanding).

A user message with images enters the session as text with one ``[图片]:url=<url>`` placeholder
per image; no vision call happens at that time. When the long-session summary needs the images,
the URLs are extracted, described once by the vision model, and the placeholders are replaced by
``[图片：描述]``. Wherever the URL must not reach the model (or vision describing is disabled), the
placeholders collapse to a plain ``[图片]``.

Grammar: ``[图片]:url=`` followed by the URL, which runs up to (not including) the first
whitespace, non-printable-ASCII character (CJK text, full-width punctuation, ...), the start of
the next ``[图片]`` or the end of the text. URLs written by `placeholder_with_image_urls` are
sanitised so that they always fit that grammar: http(s) only, no whitespace or control
characters, non-ASCII percent-encoded, at most 2048 characters.

Text typed by a user can not forge a placeholder: `placeholder_with_image_urls` first collapses
any ``[图片]:url=...`` already present in the text to a plain ``[图片]``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from urllib.parse import quote, urlsplit

from pallas.core.cq import SEGMENT_PLACEHOLDERS

IMAGE_PLACEHOLDER = SEGMENT_PLACEHOLDERS["image"]
URL_MARKER = ":url="
STICKER_FALLBACK = SEGMENT_PLACEHOLDERS["face"]
MAX_URL_CHARS = 2048
MAX_DESCRIPTION_CHARS = 80
MAX_STICKER_CHARS = 16

# A placeholder and its (possibly malformed or empty) URL token.
_PLACEHOLDER_RE = re.compile(r"\[图片\]:url=(?P<url>[!-~]*?)(?=\s|[^!-~]|\[图片\]|$)")
_WHITESPACE_RE = re.compile(r"\s+")
_BRACKETS = str.maketrans("", "", "[]【】")


def _is_unsafe_char(ch: str) -> bool:
    # Whitespace, control, format (zero-width, bidi), surrogate, private-use, unassigned.
    return ch.isspace() or unicodedata.category(ch).startswith("C")


def sanitize_image_url(url: object) -> str | None:
    """The URL in placeholder-safe form, or None when it is not a usable http(s) image URL."""
    if not isinstance(url, str):
        return None
    url = url.strip()
    if not url or any(_is_unsafe_char(ch) for ch in url):
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    encoded = "".join(ch if "!" <= ch <= "~" else quote(ch, safe="") for ch in url)
    if len(encoded) > MAX_URL_CHARS:
        return None
    return encoded


def strip_placeholders(text: str) -> str:
    """Every ``[图片]:url=...`` (well-formed or not) becomes a plain ``[图片]``."""
    return _PLACEHOLDER_RE.sub(IMAGE_PLACEHOLDER, text)


def placeholder_with_image_urls(text: str, image_urls: Iterable[str]) -> str:
    """``text`` followed by one ``[图片]:url=X`` per image; a bad URL still yields ``[图片]``.

    Placeholders already present in ``text`` (user-typed, so untrusted) are collapsed first.
    """
    body = strip_placeholders(text).strip()
    markers: list[str] = []
    for raw in image_urls:
        url = sanitize_image_url(raw)
        markers.append(f"{IMAGE_PLACEHOLDER}{URL_MARKER}{url}" if url else IMAGE_PLACEHOLDER)
    return " ".join(part for part in (body, *markers) if part)


def has_placeholders(text: str) -> bool:
    return bool(extract_placeholder_urls(text))


def extract_placeholder_urls(text: str) -> list[str]:
    """Valid http(s) URLs of the placeholders in ``text``, first occurrence order, no repeats."""
    seen: dict[str, None] = {}
    for match in _PLACEHOLDER_RE.finditer(text):
        url = sanitize_image_url(match.group("url"))
        if url is not None:
            seen.setdefault(url, None)
    return list(seen)


def clean_description(description: object, max_chars: int = MAX_DESCRIPTION_CHARS) -> str:
    """One-line description without brackets (so it can not close or forge a marker)."""
    if not isinstance(description, str):
        return ""
    text = "".join(" " if _is_unsafe_char(ch) else ch for ch in description)
    text = _WHITESPACE_RE.sub(" ", text.translate(_BRACKETS)).strip(" ：:，,。")
    if len(text) > max_chars:
        text = text[: max_chars - 1].rstrip() + "…"
    return text


def replace_placeholders_with_descriptions(text: str, descriptions: Mapping[str, str]) -> str:
    """``[图片]:url=X`` → ``[图片：描述]`` when X has a description, else ``[图片]``."""

    def render(match: re.Match[str]) -> str:
        url = sanitize_image_url(match.group("url"))
        described = clean_description(descriptions.get(url, "")) if url else ""
        return f"[图片：{described}]" if described else IMAGE_PLACEHOLDER

    return _PLACEHOLDER_RE.sub(render, text)


def mface_text(summary: object) -> str:
    """A market-face sticker as the model sees it: its summary text, e.g. ``[吃瓜]``."""
    if not isinstance(summary, str):
        return STICKER_FALLBACK
    inner = clean_description(summary.replace(URL_MARKER, " "), max_chars=MAX_STICKER_CHARS)
    return f"[{inner}]" if inner else STICKER_FALLBACK
