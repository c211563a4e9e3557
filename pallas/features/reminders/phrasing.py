"""An optional short persona phrasing of a fired reminder (`[reminders] persona_phrasing`, off
by default): one cheap-model call within the group's `model_daily_tokens`, waited at most
`model_timeout_s`; an answer that does not carry the member's text word for word, runs long or
looks like markup is not used, and the plain "到时间啦：…" goes out instead. Firing never
depends on it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from pallas.core.clock import Clock
from pallas.core.db.repositories.usage import UsageRepository
from pallas.core.tokens import count_message_tokens
from pallas.features.reminders.config import ReminderConfig
from pallas.features.reminders.repository import Reminder
from pallas.providers.client import LLMClient

log = logging.getLogger("pallas.reminders")

MAX_TOKENS = 60
SYSTEM = (
    "你是{name}。群友之前请你到点提醒他，现在时间到了。用你的口吻说一句很短的提醒"
    "（30字以内），必须原样包含要提醒的内容，不要加别的事，不要@任何人。只输出这句话。"
)
_MARKUP = ("[CQ:", "@", "【", "<", "{", "\n")


def usable_phrase(answer: str, text: str) -> str | None:
    """The model's sentence when it carries `text` word for word and nothing risky."""
    phrase = answer.strip().strip('"“”')
    if not phrase or text not in phrase or len(phrase) > len(text) + 30:
        return None
    if any(mark in phrase for mark in _MARKUP):
        return None
    return phrase


class ReminderPhraser:
    def __init__(
        self,
        *,
        clock: Clock,
        usage: UsageRepository,
        llm: LLMClient,
        config: Callable[[int], ReminderConfig],
        persona_name: Callable[[int], str],  # a group's persona name
    ) -> None:
        self.clock = clock
        self.usage = usage
        self.llm = llm
        self.config = config
        self.persona_name = persona_name
        self._late: set[asyncio.Task[Any]] = set()

    async def phrase(self, reminder: Reminder) -> str | None:
        cfg = self.config(reminder.group_id)
        if not cfg.persona_phrasing or not reminder.text or reminder.everyone:
            return None
        prompt = [
            {"role": "system", "content": SYSTEM.format(name=self.persona_name(reminder.group_id))},
            {"role": "user", "content": f"要提醒的内容：{reminder.text}"},
        ]
        spent = await self.usage.totals(
            now=self.clock.now(), bot_id=reminder.bot_id, group_id=reminder.group_id, task="cheap"
        )
        if spent.tokens + count_message_tokens(prompt) + MAX_TOKENS > cfg.model_daily_tokens:
            return None
        call = asyncio.ensure_future(
            self.llm.complete(
                "cheap", prompt, bot_id=reminder.bot_id, group_id=reminder.group_id,
                max_tokens=MAX_TOKENS, temperature=0.7,
            )
        )  # fmt: skip
        try:
            result = await asyncio.wait_for(asyncio.shield(call), timeout=cfg.model_timeout_s)
        except TimeoutError:
            self._late.add(call)
            call.add_done_callback(self._late.discard)
            return None
        phrase = usable_phrase(result.text, reminder.text) if result.ok else None
        if phrase is None:
            log.info("reminder %s: persona phrasing not used; the plain text goes", reminder.id)
        return phrase
