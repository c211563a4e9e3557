"""`KnowledgeLookup`: the retrieval behind one turn's knowledge placeholders.

Built once per REPLY turn (bound to the bot, group, time and the group's retrieval config);
the processor calls `resolve` for each distinct placeholder text. Each retrieval runs on its
own (no mixing with earlier results); the score threshold (最低分) is the main cut-off.
A named pool reads `pool:<name>` only; a bare placeholder reads this group's own knowledge
and the group's configured shared pools. Placeholders live in admin-authored text only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pallas.context.processor_inputs import ChatTurnContext
from pallas.context.prompt_guard import cap_text, neutralise_member_tags, sanitize_inline
from pallas.features.kb.config import KnowledgePlaceholderConfig
from pallas.features.kb.placeholders import KbPlaceholder, decide_activation, parse_placeholder
from pallas.features.memory import (
    KNOWLEDGE,
    BlockRetrievalConfig,
    InvalidPoolName,
    MemoryItem,
    MemoryService,
    RetrievalConfig,
    normalise_key,
    pool_scope,
)

log = logging.getLogger("pallas.kb")

MacroExpander = Callable[[str, ChatTurnContext], str]  # (value, the turn) -> expanded


@dataclass(frozen=True, slots=True)
class Resolved:
    text: str
    trace: dict[str, Any]


def render_items(
    items: Sequence[MemoryItem], config: KnowledgePlaceholderConfig, max_chars: int
) -> str:
    lines: list[str] = []
    used = 0
    for item in items:
        snippet = neutralise_member_tags(sanitize_inline(item.text, max_chars))
        line = config.item_template.replace("{text}", snippet).replace("{key}", item.key)
        if used + len(line) > max_chars and lines:
            break
        lines.append(cap_text(line, max_chars - used))
        used += len(line) + 1
    return "\n".join(lines) if lines else config.empty_text


@dataclass
class KnowledgeLookup:
    service: MemoryService
    config: KnowledgePlaceholderConfig
    memory_config: RetrievalConfig  # the group's [memory] slice
    bot_id: int
    group_id: int
    default_scopes: frozenset[str]
    query: str
    now: float
    turn_index: int = 0
    cache: dict[str, Resolved] = field(default_factory=dict)  # exact placeholder text → result

    def scopes(self, pool: str) -> frozenset[str]:
        return frozenset({pool_scope(pool)}) if pool else self.default_scopes

    async def resolve(self, raw: str) -> Resolved:
        """The text replacing placeholder `raw` (exact-text cache within this turn)."""
        if raw in self.cache:
            hit = self.cache[raw]
            return Resolved(hit.text, {**hit.trace, "cache": "hit"})
        ph = parse_placeholder(raw, self.config)
        trace: dict[str, Any] = {"placeholder": raw, "pool": ph.pool or "(group)", "mode": ph.mode}
        if ph.error:
            trace["error"] = ph.error
        activation = decide_activation(ph, query=self.query, turn_index=self.turn_index)
        trace["activation"] = activation.reason
        text = self.config.empty_text
        if activation.active:
            try:
                items = await self._items(ph)
            except InvalidPoolName:
                items, trace["error"] = [], "invalid_pool_name"
            trace["chosen"] = [i.ref for i in items]
            text = render_items(items, self.config, self.config.max_chars)
        result = Resolved(text, {**trace, "cache": "miss"})
        self.cache[raw] = result
        return result

    async def _items(self, ph: KbPlaceholder) -> list[MemoryItem]:
        scopes = self.scopes(ph.pool)
        if ph.mode == "static":
            return await self._named(scopes, ph)
        block = BlockRetrievalConfig(
            top_k=ph.count,
            max_chars=self.config.max_chars,
            threshold=ph.min_score,
            min_similarity=min(self.memory_config.knowledge.min_similarity, ph.min_score or 1.0),
        )
        narrowed = self.memory_config.model_copy(update={"knowledge": block})
        result = await self.service.retrieve(
            KNOWLEDGE,
            self.query,
            scopes=scopes,
            config=narrowed,
            now=self.now,
            bot_id=self.bot_id,
            group_id=self.group_id,
        )
        self.service.touch(result.ids)
        return list(result.items)

    async def _named(self, scopes: frozenset[str], ph: KbPlaceholder) -> list[MemoryItem]:
        rows = await self.service.repo.candidates(
            scopes, KNOWLEDGE, limit=self.memory_config.candidate_cap
        )
        names = [normalise_key(t) for t in ph.terms]
        if names:
            rows = [r for r in rows if any(_key_matches(r.key, n) for n in names)]
        rows.sort(key=lambda r: (r.key.rsplit("_", 1)[0], _chunk_no(r.key), r.id))
        return rows[: ph.count]


def _key_matches(key: str, name: str) -> bool:
    return bool(name) and (key == name or key.startswith(f"{name}_"))


def _chunk_no(key: str) -> int:
    tail = key.rsplit("_", 1)[-1]
    return int(tail) if tail.isdigit() else 0
