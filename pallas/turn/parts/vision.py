"""Images of a REPLY turn (current, quoted and timeline images), for models that declare images.

- **Text of the turn.** The member's message reaches the model with one `[图片]` per image and
  market-face stickers as their summary text; the session stores the same turn with
  `[图片]:url=X` placeholders so a later summary can still describe the pictures (both in
  `core/message_text.py`). No vision call happens for that.
- **Current images** (vision models only, `ModelProfile.supports_images`): the message's own
  images plus the images of the message it quotes — looked up in the message store first, then
  through an injected `QuotedMessageFetcher` (OneBot `get_msg`; negative ids are ordinary) —
  are attached as `image_url` blocks to the current user message.
- **Timeline images**: the `timeline_images` processor already placed up to 3 recent http(s)
  timeline images in one user message before the current one (not for a recognition question
  about the member's own image); an image that is also a current image is not sent twice.
- **Downloads.** QQ image URLs expire and providers may not reach them, so every image is
  fetched with the SSRF-safe `ImageFetcher` and sent as a data URL. A failed download drops
  that image (and the timeline caption when none is left); the turn goes on.
- Text-only models: nothing here runs — no download, no `get_msg`, they see `[图片]`.
- The injection snapshot never stores image bytes: data URLs become `data:<type>;sha256=<hex>`.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pallas.context.processors import TIMELINE_IMAGES_CAPTION
from pallas.core.cq import parse_cq
from pallas.core.message_text import image_segment_urls
from pallas.core.records import StoredMessage
from pallas.core.turn import TurnInput
from pallas.providers.image_fetch import FetchedImage, ImageFetchConfig, ImageFetcher, to_data_url

log = logging.getLogger("pallas.vision")

Message = dict[str, Any]
Segments = Sequence[Mapping[str, Any]]
FetcherFactory = Callable[[ImageFetchConfig], ImageFetcher]
#: (bot_id, group_id, message_id) → the quoted message's segments, or None when unknown.
QuotedMessageFetcher = Callable[[int, int, int], Awaitable[Segments | None]]

QUOTED_CAPTION = "（以下是被引用消息里的图片）"
SNAPSHOT_HASH_CHARS = 16


class MessageLookup(Protocol):
    async def find_by_message_ids(
        self, bot_id: int, group_id: int, message_ids: Sequence[int]
    ) -> Mapping[int, StoredMessage]: ...


# --------------------------------------------------------------------------- the turn's text


def image_urls_from_segments(segments: Segments) -> list[str]:
    """Distinct usable http(s) image URLs of a message (stickers excluded), in order."""
    return list(dict.fromkeys(u for u in image_segment_urls(segments) if u))


# --------------------------------------------------------------------------- pure rewrites


def _is_remote(url: str) -> bool:
    return url.lower().startswith(("http://", "https://"))


def _block_url(block: Mapping[str, Any]) -> str | None:
    if block.get("type") != "image_url":
        return None
    image = block.get("image_url")
    url = image.get("url") if isinstance(image, Mapping) else image
    return str(url) if url else None


def _image_block(url: str) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": url}}


def remote_image_urls(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """http(s) URLs of the image blocks already in the request (the timeline images)."""
    urls: list[str] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str) or not content:
            continue
        urls.extend(u for b in content if (u := _block_url(b)) and _is_remote(u))
    return list(dict.fromkeys(urls))


def rewrite_image_blocks(
    messages: Sequence[Mapping[str, Any]],
    data_urls: Mapping[str, str | None],
    *,
    drop: frozenset[str] = frozenset(),
) -> list[Message]:
    """Replace http(s) image blocks by their data URL; remove failed ones and those in `drop`.

    A message that loses all its images also loses the timeline caption; an emptied message
    is removed.
    """
    out: list[Message] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str) or not content:
            out.append(dict(message))
            continue
        blocks: list[Any] = []
        had_images = kept_images = 0
        for block in content:
            url = _block_url(block)
            if url is None or not _is_remote(url):
                blocks.append(dict(block) if isinstance(block, Mapping) else block)
                kept_images += url is not None
                had_images += url is not None
                continue
            had_images += 1
            data_url = None if url in drop else data_urls.get(url)
            if data_url:
                blocks.append(_image_block(data_url))
                kept_images += 1
        if had_images and not kept_images:
            blocks = [b for b in blocks if b.get("text") != TIMELINE_IMAGES_CAPTION]
        if blocks:
            out.append({**message, "content": blocks})
    return out


def attach_current_images(
    messages: Sequence[Mapping[str, Any]], own: Sequence[str], quoted: Sequence[str] = ()
) -> list[Message]:
    """Append image blocks (already data URLs) to the last message, the current user turn."""
    out = [dict(m) for m in messages]
    if not (own or quoted) or not out or out[-1].get("role") != "user":
        return out
    content = out[-1].get("content")
    blocks: list[Any] = (
        [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
    )
    blocks.extend(_image_block(u) for u in own)
    if quoted:
        blocks.append({"type": "text", "text": QUOTED_CAPTION})
        blocks.extend(_image_block(u) for u in quoted)
    out[-1]["content"] = blocks
    return out


def snapshot_marker(data_url: str) -> str:
    """`data:image/png;sha256=<16 hex>` for a data URL (the bytes are never stored)."""
    head, _, payload = data_url.partition(",")
    media = head.removeprefix("data:").split(";", 1)[0] or "application/octet-stream"
    try:
        raw = base64.b64decode(payload, validate=False)
    except (binascii.Error, ValueError):
        raw = payload.encode()
    return f"data:{media};sha256={hashlib.sha256(raw).hexdigest()[:SNAPSHOT_HASH_CHARS]}"


def snapshot_safe(messages: Sequence[Mapping[str, Any]]) -> list[Message]:
    """A copy of the request in which every data URL is replaced by its short marker."""
    out: list[Message] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str) or not content:
            out.append(dict(message))
            continue
        blocks = []
        for block in content:
            url = _block_url(block)
            if url is not None and url.startswith("data:"):
                blocks.append(_image_block(snapshot_marker(url)))
            else:
                blocks.append(dict(block) if isinstance(block, Mapping) else block)
        out.append({**message, "content": blocks})
    return out


# --------------------------------------------------------------------------- the turn


async def resolve_quoted_images(
    turn: TurnInput,
    message_store: MessageLookup,
    fetch_quoted: QuotedMessageFetcher | None,
    *,
    lookup_seconds: float,
) -> tuple[list[str], str]:
    """Image URLs of the quoted message and where they came from (store / get_msg / none)."""
    if turn.reply_to is None:
        return [], "none"
    rows = await message_store.find_by_message_ids(turn.bot_id, turn.group_id, [turn.reply_to])
    row = rows.get(turn.reply_to)
    if row is not None:
        stored = row.segments or tuple(parse_cq(row.raw_message or ""))
        return image_urls_from_segments(stored), "store"
    if fetch_quoted is None:
        return [], "unavailable"
    try:
        async with asyncio.timeout(lookup_seconds):
            fetched = await fetch_quoted(turn.bot_id, turn.group_id, turn.reply_to)
    except Exception as exc:
        log.info("group %s: quoted message %s unavailable: %r", turn.group_id, turn.reply_to, exc)
        return [], "get_msg_failed"
    return (image_urls_from_segments(fetched) if fetched else []), "get_msg"


@dataclass(frozen=True, slots=True)
class VisionRequest:
    messages: list[Message]  # what goes to the provider
    snapshot: list[Message]  # the same without image bytes
    trace: dict[str, Any] = field(default_factory=dict)


async def prepare_vision_request(
    messages: Sequence[Mapping[str, Any]],
    *,
    turn: TurnInput,
    vision_enabled: bool,
    images: ImageFetchConfig,
    message_store: MessageLookup,
    fetch_quoted: QuotedMessageFetcher | None = None,
    fetcher_factory: FetcherFactory = ImageFetcher,
) -> VisionRequest:
    """Download and attach this turn's images for a vision model; a no-op for text models.

    Never raises: an unexpected error sends the turn without any image (logged).
    """
    plain = [dict(m) for m in messages]
    if not vision_enabled:
        return VisionRequest(plain, plain, {"enabled": False})
    started = time.perf_counter()
    try:
        vision = await _with_images(
            plain,
            turn=turn,
            images=images,
            message_store=message_store,
            fetch_quoted=fetch_quoted,
            fetcher_factory=fetcher_factory,
        )
    except Exception:
        log.exception("group %s: preparing images failed; sending text only", turn.group_id)
        text_only = rewrite_image_blocks(plain, {})
        vision = VisionRequest(text_only, text_only, {"enabled": True, "error": "exception"})
    vision.trace["ms"] = round((time.perf_counter() - started) * 1000, 3)
    return vision


async def _with_images(
    plain: list[Message],
    *,
    turn: TurnInput,
    images: ImageFetchConfig,
    message_store: MessageLookup,
    fetch_quoted: QuotedMessageFetcher | None,
    fetcher_factory: FetcherFactory,
) -> VisionRequest:
    quoted, quoted_source = await resolve_quoted_images(
        turn, message_store, fetch_quoted, lookup_seconds=images.timeout_seconds
    )
    cap = images.max_images_per_turn
    own = list(dict.fromkeys(turn.image_urls))[:cap]
    quoted = [u for u in dict.fromkeys(quoted) if u not in own][: max(0, cap - len(own))]
    current = frozenset(own) | frozenset(quoted)
    timeline = [u for u in remote_image_urls(plain) if u not in current]
    wanted = [*own, *quoted, *timeline]
    trace: dict[str, Any] = {
        "enabled": True,
        "own": len(own),
        "quoted": len(quoted),
        "quoted_source": quoted_source,
        "timeline": len(timeline),
    }
    if not wanted:
        return VisionRequest(plain, plain, trace)
    async with fetcher_factory(images) as fetcher:
        results = await fetcher.fetch_many(wanted)
    data_urls: dict[str, str | None] = {}
    failed: list[dict[str, str]] = []
    for url, result in zip(wanted, results, strict=True):
        if isinstance(result, FetchedImage):
            data_urls[url] = to_data_url(result)
        else:
            data_urls[url] = None
            failed.append({"url": url[:200], "reason": str(result)})
            log.info("group %s: image dropped from the turn (%s): %s", turn.group_id, result, url)
    sent = rewrite_image_blocks(plain, data_urls, drop=current)
    sent = attach_current_images(
        sent,
        [d for u in own if (d := data_urls.get(u))],
        [d for u in quoted if (d := data_urls.get(u))],
    )
    trace.update(attached=sum(1 for d in data_urls.values() if d), failed=failed)
    return VisionRequest(sent, snapshot_safe(sent), trace)
