"""Warm the OpenAI SDK's request path at start-up, offline.

The first chat completion of a process costs ~45 ms more than the next ones (the SDK's
request building and response models fill their caches on first use): that landed on
the first @ after a restart, inside its hold on the event loop, and every @ behind it waited
too. `warm_request_path` runs one chat completion through the SDK against an in-memory httpx
transport (no network, no API key used, nothing recorded) in the start-up warm-up thread, on
its own event loop; the caches it fills are the process's.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pallas.providers.client import post_chat

WARM_REPLY: dict[str, Any] = {
    "id": "warm-up",
    "object": "chat.completion",
    "created": 0,
    "model": "warm-up",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "ok"},
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}


async def _one_completion() -> str:
    import httpx2
    from openai import AsyncOpenAI

    transport = httpx2.MockTransport(lambda request: httpx2.Response(200, json=WARM_REPLY))
    async with httpx2.AsyncClient(transport=transport) as http:
        client = AsyncOpenAI(
            api_key="warm-up", base_url="http://warm-up.invalid/v1", http_client=http, max_retries=0
        )
        body = {
            "model": "warm-up",
            "messages": [
                {"role": "system", "content": "warm-up"},
                {"role": "user", "content": "hi"},
            ],
            "max_tokens": 1,
            "temperature": 0.0,
        }
        response = await post_chat(client, body)  # the bot's own request path
    return response.choices[0].message.content or ""


def warm_request_path() -> None:
    """One offline chat completion through the SDK (a start-up warm-up; blocking, in a
    thread with no event loop of its own)."""
    asyncio.run(_one_completion())


__all__ = ["warm_request_path"]
