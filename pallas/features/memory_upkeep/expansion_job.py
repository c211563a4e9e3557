"""Index-time expansion, the background job: one cheap-model call per stored row, budgeted.

Registered on the memory service as a write listener (`factory.build_memory_service`); the
service runs it as a background task after a row is stored, so it is never on the reply path.
The group's ``[memory.expansion]`` decides whether it runs (on by default; nothing without an API
key) and for which kinds; the group's cheap-model tokens of the day (usage ledger, shared with
extraction) plus this call's estimate must stay within its `daily_token_budget`. Any failure —
budget, HTTP error, garbage — leaves the row exactly as it was: searchable by its text.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from pallas.features.memory import MemoryItem, MemoryService, RetrievalConfig
from pallas.features.memory_upkeep.expansion import expansion_messages, parse_expansion
from pallas.providers.cheap_calls import CheapCalls

log = logging.getLogger("pallas.memory.expand")


def _group_of(scope: str) -> int | None:
    """The group id of a ``group:<bot>:<group>`` scope; None for pools and private chats."""
    parts = scope.split(":")
    if parts[0] == "group" and len(parts) == 3 and parts[2].isdigit():
        return int(parts[2])
    return None


class MemoryExpander:
    JOB_KIND = "expansion"  # how its jobs are named and counted at shutdown

    def __init__(
        self, *, cheap: CheapCalls, memory_config: Callable[[int], RetrievalConfig]
    ) -> None:
        self.cheap = cheap
        self.memory_config = memory_config  # a group's `[memory]`

    async def expand(self, service: MemoryService, item: MemoryItem) -> dict[str, Any]:
        """Expand one stored row; returns a small report (also logged at debug level)."""
        report = await self._expand(service, item)
        log.debug("memory %s expansion: %s", item.ref, report)
        return report

    async def _expand(self, service: MemoryService, item: MemoryItem) -> dict[str, Any]:
        group = _group_of(item.scope)
        if group is None:
            return {"outcome": "not_a_group_row"}
        cfg = self.memory_config(group).expansion
        if not cfg.enabled or item.kind not in cfg.kinds:
            return {"outcome": "off"}
        if not self.cheap.enabled:  # no API key: on by default, but there is no model to ask
            return {"outcome": "no_model"}
        prompt = expansion_messages(item.text, item.kind)
        budget = await self.cheap.budget(
            prompt, bot_id=item.bot_id, group_id=group, max_tokens=cfg.max_output_tokens,
            daily=cfg.daily_token_budget,
        )  # fmt: skip
        if budget.exceeded:
            log.info("group %s: memory expansion skipped, daily budget", group)
            return {"outcome": "budget", "spent": budget.spent, "estimate": budget.estimate}
        result = await self.cheap.ask(
            prompt, bot_id=item.bot_id, group_id=group, max_tokens=cfg.max_output_tokens
        )
        if not result.ok:
            log.warning("group %s: memory expansion call failed (%s)", group, result.error)
            return {"outcome": f"error:{result.error}"}
        expansion = parse_expansion(result.text)
        if expansion is None:
            return {"outcome": "unusable_answer"}
        if not await service.repo.set_expansion(item.id, expansion.to_source()):
            return {"outcome": "row_gone"}
        await service.invalidate([item.scope])
        return {"outcome": "ok", **expansion.to_source()}
