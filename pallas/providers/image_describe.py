"""Download-and-describe, the part the sticker job and the session summary share.

Both download an image with the SSRF-safe `ImageFetcher` (a `FetcherFactory`, injected in
tests), check the group's daily vision budget against the usage ledger, and ask the vision model
one instruction about one image; what they ask and where they keep the answer is their own
(`stickers.describe`: a name + description per sticker; `session.image_descriptions`: a
description per image hash).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pallas.core.clock import Clock
from pallas.core.db.repositories.usage import UsageRepository
from pallas.providers.client import LLMClient
from pallas.providers.image_fetch import FetchedImage, ImageFetchConfig, ImageFetcher, to_data_url
from pallas.providers.wire import answer_text

FetcherFactory = Callable[[ImageFetchConfig], ImageFetcher]


def strip_reasoning(answer: str) -> str:
    """The answer without <think>…</think> blocks (an unclosed one runs to the end): the
    client's own rule (`wire.answer_text`), for answers that did not come through it."""
    return answer_text(answer or "")


def image_question(prompt: str, data_url: str) -> list[dict[str, Any]]:
    """The vision request for one image: the instruction + one image_url block."""
    return [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": prompt},
                {"type": "image_url", "image_url": {"url": data_url}},
            ],
        }
    ]


async def vision_calls_left(
    usage: UsageRepository, clock: Clock, *, bot_id: int, group_id: int, daily_calls: int
) -> int:
    """Vision calls the group may still make today (`daily_calls` minus today's ledger)."""
    used = await usage.totals(now=clock.now(), bot_id=bot_id, group_id=group_id, task="vision")
    return max(0, daily_calls - used.calls)


async def ask_about_image(
    llm: LLMClient,
    prompt: str,
    image: FetchedImage,
    *,
    bot_id: int,
    group_id: int,
    max_tokens: int,
) -> tuple[str, str | None]:
    """One vision call about `image`: (answer without reasoning, error); "" when it failed."""
    result = await llm.complete(
        "vision",
        image_question(prompt, to_data_url(image)),
        bot_id=bot_id,
        group_id=group_id,
        max_tokens=max_tokens,
        temperature=0.2,
    )
    return (strip_reasoning(result.text) if result.ok else ""), result.error


__all__ = [
    "FetcherFactory",
    "ask_about_image",
    "image_question",
    "strip_reasoning",
    "vision_calls_left",
]
