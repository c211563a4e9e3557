"""Step 5, call: the turn's one model call.

A vision model gets this turn's images (and those of merged follow-ups, and a quoted message's)
as data-URL blocks; the snapshot keeps only their hashes; for a text-only model nothing is
downloaded. The turn's hold on the event loop ends as the request goes out
(`TurnContext.request_out`): the model's answer takes seconds, the loop is everyone's again.
The call is counted by the cost guard.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pallas.core.clock import Clock
from pallas.core.db.repositories.messages import MessageRepository
from pallas.features.cost import CostGuard
from pallas.providers.client import LLMClient
from pallas.turn.contracts import ModelCall, PreparedTurn, ReplyTurn
from pallas.turn.parts.vision import QuotedMessageFetcher, prepare_vision_request


@dataclass
class CallStep:
    llm: LLMClient
    clock: Clock
    cost: CostGuard  # today's counters for the budgets
    messages: MessageRepository  # images of quoted lines
    # OneBot get_msg for quoted images the message store lacks (given by the NoneBot edge)
    fetch_quoted_message: QuotedMessageFetcher | None = None

    @property
    def enabled(self) -> bool:
        """Whether a model is configured at all (no API key: replies are disabled)."""
        return self.llm.enabled

    async def run(
        self,
        reply: ReplyTurn,
        prepared: PreparedTurn,
        tools: Sequence[Mapping[str, Any]] = (),
    ) -> ModelCall:
        """`tools`: the MCP tools offered to the model (`parts.tool_loop`); none by default."""
        turn, config, cost = reply.turn, reply.config, reply.cost
        if prepared.merged_image_urls:
            turn = replace(turn, image_urls=(*turn.image_urls, *prepared.merged_image_urls))
        vision = await prepare_vision_request(
            prepared.messages,
            turn=turn,
            vision_enabled=prepared.profile.supports_images and not cost.text_only,
            images=config.images,
            message_store=self.messages,
            fetch_quoted=self.fetch_quoted_message,
        )
        reply.turn_ctx.request_out()
        result = await self.llm.complete(
            "chat",
            vision.messages,
            bot_id=turn.bot_id,
            group_id=turn.group_id,
            max_tokens=prepared.profile.max_output_tokens,
            temperature=prepared.profile.temperature,
            model=prepared.model,
            profiles=config.models,
            tools=tools,
        )
        images = bool(vision.trace.get("attached"))
        tokens = result.prompt_tokens + result.completion_tokens
        await self.cost.record(
            turn,
            self.clock.now(),
            images=images,
            tokens=tokens,
            member=config.cost.member,
            reservation=cost.reservation,
        )
        return ModelCall(result, request=vision.snapshot, vision=vision.trace)
