"""Assemble the chat service: which context sources and after-turn hooks a deployment runs.

The one place that lists the pluggable stages, in the order the spec gives them
(memory → knowledge → relationship → person facts + old topics; style learning; …).
"""

from __future__ import annotations

import random

from pallas.product.llm.chat_turn import AfterTurnHook, ChatTurnService
from pallas.product.llm.context.context import ContextSource
from pallas.runtime import PallasRuntime


def context_sources(runtime: PallasRuntime) -> list[ContextSource]:
    return []


def after_turn_hooks(runtime: PallasRuntime) -> list[AfterTurnHook]:
    return []


def build_chat_service(
    runtime: PallasRuntime, *, rng: random.Random | None = None
) -> ChatTurnService:
    return ChatTurnService(
        runtime=runtime,
        routing=runtime.routing,
        rng=rng or random.Random(),
        sources=context_sources(runtime),
        hooks=after_turn_hooks(runtime),
    )
