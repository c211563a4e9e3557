"""The cheap model asked for one small background job: within the group's daily token budget,
and — where a member waits for the answer — within a time limit.

The memory expansion, the teaching judge and the reminders' time reader each ask the cheap
model one short question. Each counts the group's cheap-model tokens of the day (the usage
ledger's `cheap` task) plus this prompt and its longest answer against its own daily budget, and
skips the call over it. A call with a time limit is shielded: one that outlasts its wait still
finishes in the background, so its tokens reach the usage ledger (the budget) and its
endpoint's breaker; its answer is not used.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pallas.core.clock import Clock
from pallas.core.db.repositories.usage import UsageRepository
from pallas.core.tokens import count_message_tokens
from pallas.providers.client import CompletionResult, LLMClient


@dataclass(frozen=True, slots=True)
class CheapBudget:
    """Today's cheap-model tokens of a group, and what one more call would add."""

    spent: int
    estimate: int  # the prompt's tokens plus the answer's maximum
    daily: int

    @property
    def exceeded(self) -> bool:
        return self.spent + self.estimate > self.daily


class CheapCalls:
    def __init__(self, *, clock: Clock, usage: UsageRepository, llm: LLMClient) -> None:
        self.clock = clock
        self.usage = usage
        self.llm = llm
        self._late: set[asyncio.Task[CompletionResult]] = set()  # outlasting their wait

    @property
    def enabled(self) -> bool:
        """A model to ask (an API key is configured)."""
        return self.llm.enabled

    async def budget(
        self,
        prompt: list[dict[str, Any]],
        *,
        bot_id: int,
        group_id: int,
        max_tokens: int,
        daily: int,
    ) -> CheapBudget:
        """Whether one more call of `prompt` fits the group's `daily` cheap-model tokens."""
        spent = await self.usage.totals(
            now=self.clock.now(), bot_id=bot_id, group_id=group_id, task="cheap"
        )
        return CheapBudget(spent.tokens, count_message_tokens(prompt) + max_tokens, daily)

    async def ask(
        self,
        prompt: list[dict[str, Any]],
        *,
        bot_id: int,
        group_id: int,
        max_tokens: int,
        json_schema: Mapping[str, Any] | None = None,
    ) -> CompletionResult:
        """The cheap model's answer, at temperature 0."""
        return await self.llm.complete(
            "cheap", prompt, bot_id=bot_id, group_id=group_id, max_tokens=max_tokens,
            temperature=0.0, json_schema=json_schema,
        )  # fmt: skip

    async def ask_within(
        self,
        timeout_s: float,
        prompt: list[dict[str, Any]],
        *,
        bot_id: int,
        group_id: int,
        max_tokens: int,
        json_schema: Mapping[str, Any] | None = None,
    ) -> CompletionResult | None:
        """As `ask`; None when `timeout_s` passed first (the call finishes unwatched)."""
        call = asyncio.ensure_future(
            self.ask(
                prompt, bot_id=bot_id, group_id=group_id, max_tokens=max_tokens,
                json_schema=json_schema,
            )
        )  # fmt: skip
        try:
            return await asyncio.wait_for(asyncio.shield(call), timeout=timeout_s)
        except TimeoutError:
            self._late.add(call)
            call.add_done_callback(self._late.discard)
            return None


__all__ = ["CheapBudget", "CheapCalls"]
