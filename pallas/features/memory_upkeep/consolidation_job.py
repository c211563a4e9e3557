"""Consolidation, the background job: a member's live facts → one profile by the cheap model.

Registered on the memory service as a change listener (`factory.build_memory_service`): every
change of a member's person facts (a new fact, an update, a denial) starts a task that waits
`[memory.profile] consolidate_delay_s` (debounced: a newer change of the same member takes over),
then, with at least `consolidate_min_facts` live facts, makes one cheap-model call within the
group's cheap-model budget of the day (`[memory.extraction] daily_token_budget`, shared with
extraction, expansion and the teaching judge). Never on the reply path.

The answer is checked (`consolidation.validate`); a usable one retires the superseded facts
(reason ``model:consolidate``, only the member's live facts of that scope: the refs listed) and
stores the profile with the live fact ids it stands for. Garbage, a failed call, an empty budget:
one log line, and the rule-based profile stays. The raw facts are never rewritten.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from pallas.core.clock import Clock
from pallas.core.db.repositories.usage import UsageRepository
from pallas.core.tokens import count_message_tokens
from pallas.features.memory import (
    PERSON_FACTS,
    MemoryItem,
    MemoryService,
    ProfileRepository,
    RetrievalConfig,
)
from pallas.features.memory_upkeep.consolidation import (
    CONSOLIDATE_SCHEMA,
    consolidation_messages,
    fact_refs,
    validate,
)
from pallas.providers.client import LLMClient

log = logging.getLogger("pallas.memory.consolidate")

CONSOLIDATE_REASON = "model:consolidate"
MAX_FACTS = 120  # listed to the model, newest first


def _group_of(scope: str) -> int | None:
    parts = scope.split(":")
    if parts[0] == "group" and len(parts) == 3 and parts[2].isdigit():
        return int(parts[2])
    return None


class MemberConsolidator:
    JOB_KIND = "consolidation"  # how its jobs are named and counted at shutdown

    def __init__(
        self,
        *,
        clock: Clock,
        usage: UsageRepository,
        llm: LLMClient,
        profiles: ProfileRepository,
        memory_config: Callable[[int], RetrievalConfig],  # a group's `[memory]`
    ) -> None:
        self.clock = clock
        self.usage = usage
        self.llm = llm
        self.profiles = profiles
        self.memory_config = memory_config
        self._latest: dict[tuple[str, int], int] = {}  # member → newest change seen (debounce)
        self._ticket = 0

    async def changed(self, service: MemoryService, item: MemoryItem) -> dict[str, Any]:
        """A member's facts changed: consolidate them once they settle."""
        group, subject = _group_of(item.scope), item.subject_user_id
        if group is None or subject is None:
            return {"outcome": "not_a_group_member"}
        cfg = self.memory_config(group).profile
        if not cfg.enabled or not cfg.consolidate or not self.llm.enabled:
            return {"outcome": "off"}
        if len(await self._live(service, item.scope, subject)) < cfg.consolidate_min_facts:
            return {"outcome": "few_facts"}  # no wait: the rule profile is enough
        key = (item.scope, subject)
        self._ticket += 1
        ticket = self._latest[key] = self._ticket
        await asyncio.sleep(cfg.consolidate_delay_s)
        if self._latest.get(key) != ticket:
            return {"outcome": "superseded_by_a_newer_change"}
        self._latest.pop(key, None)
        report = await self.consolidate(service, item.bot_id, item.scope, subject)
        log.info("group %s member %s: consolidation %s", group, subject, report)
        return report

    async def consolidate(
        self, service: MemoryService, bot_id: int, scope: str, subject: int
    ) -> dict[str, Any]:
        """One consolidation of the member's live facts in `scope`; a small report."""
        group = _group_of(scope)
        assert group is not None
        memory = self.memory_config(group)
        live = await self._live(service, scope, subject)
        if len(live) < memory.profile.consolidate_min_facts:
            return {"outcome": "few_facts", "facts": len(live)}
        if len(live) > MAX_FACTS:
            return {"outcome": "too_many_facts", "facts": len(live)}
        refs = fact_refs(sorted(live, key=lambda i: (i.created_at, i.id)))
        prompt = consolidation_messages(refs, max_chars=memory.profile.max_chars)
        cap = memory.profile.consolidate_max_tokens
        spent = await self.usage.totals(
            now=self.clock.now(), bot_id=bot_id, group_id=group, task="cheap"
        )
        estimate = count_message_tokens(prompt) + cap
        if spent.tokens + estimate > memory.extraction.daily_token_budget:
            return {"outcome": "budget", "spent": spent.tokens, "estimate": estimate}
        result = await self.llm.complete(
            "cheap", prompt, bot_id=bot_id, group_id=group, max_tokens=cap, temperature=0.0,
            json_schema=CONSOLIDATE_SCHEMA,
        )  # fmt: skip
        if not result.ok:
            return {"outcome": f"error:{result.error}"}
        checked, reason = validate(result.text, refs, max_chars=memory.profile.max_chars)
        if checked is None:
            log.warning("group %s: consolidation answer unusable (%s)", group, reason)
            return {"outcome": f"unusable:{reason}"}
        now = self.clock.now()
        gone: list[MemoryItem] = []
        for old_id, by in zip(checked.superseded, checked.superseded_by, strict=True):
            gone += await service.repo.retire(
                [old_id], now=now, reason=CONSOLIDATE_REASON, replaced_by=by
            )
        for old in gone:
            log.info("memory %s %s: %r", old.ref, CONSOLIDATE_REASON, old.text)
        await self.profiles.put(
            bot_id=bot_id, scope=scope, subject_user_id=subject, statements=checked.statements,
            basis=checked.basis, superseded=[i.id for i in gone], model=result.model,
            tokens=result.prompt_tokens + result.completion_tokens, now=now,
        )  # fmt: skip
        await service.invalidate([scope])
        return {"outcome": "ok", "facts": len(live), "statements": len(checked.statements),
                "superseded": [i.ref for i in gone]}  # fmt: skip

    async def _live(self, service: MemoryService, scope: str, subject: int) -> list[MemoryItem]:
        """The member's live person facts in `scope` (one more than are ever listed)."""
        live = await service.repo.candidates(
            [scope], PERSON_FACTS, subject_user_id=subject, limit=MAX_FACTS + 1
        )
        return [i for i in live if i.subject_user_id == subject and i.scope == scope]
