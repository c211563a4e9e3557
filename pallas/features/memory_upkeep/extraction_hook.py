"""Background memory extraction: an `AfterTurnHook`, batched and budgeted per group.

After every delivered reply a per-group counter goes up; once it reaches
`extraction.every_n_turns` (and `min_interval_s` has passed since the last job) one job runs:
the group's messages since the last job (at most `max_messages`, newest kept) go to the cheap
model once, with the live facts already stored about each speaker (refs ``f1`` …), asking for a
JSON-schema answer where the model allows it. The answer is parsed and attributed
(`extraction.attribute`), and the surviving facts are stored with `origin = "extract"`; each
one adds, updates or denies stored facts as the model judged (`judgement.model_judgement`:
refs checked, else the rules decide).

When no model answer is usable (the call failed, the budget is spent, the answer is not JSON),
the offline fallback still honours denials said in chat: `denials.chat_denials` finds "我已经不
养猫了" in each member's messages and `denials.rule_update` retires the fact it denies.

Budget: before calling, today's cheap-model tokens of the group (usage ledger) plus this job's
estimate (prompt tokens + max output) must stay within `daily_token_budget`; otherwise the job
is skipped and logged. A job never runs twice at once for a group (StateStore claim), and it
never touches the reply path: the chat service runs hooks as background tasks.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from pallas.core import state_keys
from pallas.core.clock import DAY_S, Clock
from pallas.core.db.repositories.chat_sessions import ChatSessionRepository
from pallas.core.db.repositories.messages import MessageRepository
from pallas.core.db.repositories.usage import UsageRepository
from pallas.core.records import StoredMessage
from pallas.core.state import StateStore, claim
from pallas.core.tokens import count_message_tokens
from pallas.core.turn import CompletedTurn
from pallas.features.memory import (
    PERSON_FACTS,
    ExtractionConfig,
    KnownFact,
    MemoryService,
    RetrievalConfig,
    model_judgement,
    own_scope,
)
from pallas.features.memory_upkeep.extraction import (
    EXTRACTION_SCHEMA,
    KNOWN_PER_MEMBER,
    Batch,
    ExtractedFact,
    attribute,
    build_batch,
    extraction_messages,
    is_json_answer,
    known_facts,
    parse_extraction,
)
from pallas.features.persona import PersonaPack
from pallas.providers.client import LLMClient

log = logging.getLogger("pallas.memory.extract")

STATE_TTL_S = 7 * DAY_S
LOCK_TTL_S = 300.0


class ExtractionConfigView(Protocol):
    """What extraction reads of a group's config (`GroupConfig` is one)."""

    @property
    def memory(self) -> RetrievalConfig: ...  # `[memory.extraction]`

    @property
    def persona(self) -> str: ...  # the persona's names are not members' facts


def _key(name: str, bot_id: int, group_id: int, user_id: int = 0) -> str:
    return state_keys.memory_extraction(name, bot_id, group_id, user_id)


class MemoryExtractionHook:
    name = "memory_extraction"

    def __init__(
        self,
        service: MemoryService,
        *,
        state: StateStore,
        clock: Clock,
        messages: MessageRepository,
        chat_sessions: ChatSessionRepository,
        usage: UsageRepository,
        llm: LLMClient,
        flush: Callable[[], Awaitable[None]],  # the message writer's: the batch is on disk
        group_config: Callable[[int], ExtractionConfigView],  # read when the hook runs
        persona: Callable[[str], PersonaPack],
    ) -> None:
        self.service = service
        self.state = state
        self.clock = clock
        self.messages = messages
        self.chat_sessions = chat_sessions
        self.usage = usage
        self.llm = llm
        self.flush = flush
        self.group_config = group_config
        self.persona = persona

    async def after_turn(self, completed: CompletedTurn) -> None:
        turn = completed.turn
        cfg = self.group_config(turn.group_id).memory.extraction
        if not cfg.enabled:
            return
        state = self.state
        # a group is one job; each private chat (group 0) is its own, over that chat only
        bot, group, user = turn.bot_id, turn.group_id, (0 if turn.group_id else turn.user_id)
        pending = await state.incr(_key("pending", bot, group, user), ttl=STATE_TTL_S)
        if pending < cfg.every_n_turns:
            return
        now = self.clock.now()
        last = await state.get(_key("last", bot, group, user))
        if last is not None and now - float(last) < cfg.min_interval_s:
            return
        lock = _key("lock", bot, group, user)
        if not await claim(state, lock, now, ttl=LOCK_TTL_S, when_unavailable=False):
            return
        try:
            await state.set(_key("pending", bot, group, user), 0, ttl=STATE_TTL_S)
            await state.set(_key("last", bot, group, user), now, ttl=STATE_TTL_S)
            report = await self.run_job(bot, group, cfg, completed.turn_id, user_id=user)
            await state.set(_key("report", bot, group, user), report, ttl=STATE_TTL_S)
        finally:
            await state.delete(lock)

    async def _batch_rows(
        self, bot: int, group: int, cfg: ExtractionConfig
    ) -> tuple[list[StoredMessage], dict[int, str]]:
        await self.flush()
        cursor = int(await self.state.get(_key("cursor", bot, group)) or 0)
        recent = await self.messages.recent(bot, group, limit=cfg.max_messages)
        # another NoneBot plugin's sends are not the persona's speech: never extracted from
        rows = [m for m in recent if m.row_id > cursor and not m.sent_by]
        known = {m.message_id for m in rows}
        wanted = [m.reply_to for m in rows if m.reply_to is not None and m.reply_to not in known]
        quoted: dict[int, str] = {m.message_id: m.text for m in rows if m.is_bot}
        if wanted:
            found = await self.messages.find_by_message_ids(bot, group, wanted)
            quoted.update({mid: m.text for mid, m in found.items() if m.persona_line})
        return rows, quoted

    async def _private_rows(
        self, bot: int, user: int, cfg: ExtractionConfig
    ) -> tuple[list[StoredMessage], dict[int, str]]:
        """One private chat's new lines, the friend's and the bot's, from its session (the
        message table keeps no private answers; the session holds both sides)."""
        cursor = int(await self.state.get(_key("cursor", bot, 0, user)) or 0)
        turns = await self.chat_sessions.recent_for_user(bot, 0, user, limit=cfg.max_messages)
        rows = [
            StoredMessage(
                bot_id=bot,
                group_id=0,
                message_id=int(t.extra.get("message_id") or 0),
                user_id=user if t.role == "user" else bot,
                time=t.created_at,
                text=t.content,
                is_bot=t.role != "user",
                row_id=t.row_id,
            )
            for t in turns
            if not t.is_summary and t.row_id > cursor
        ]
        return rows, {}

    async def run_job(
        self, bot: int, group: int, cfg: ExtractionConfig, turn_id: str = "", *, user_id: int = 0
    ) -> dict[str, Any]:
        """One extraction job for a group, or for one private chat (group 0 with its user);
        returns a small report (also logged). Facts go to that chat's own scope only."""
        if group:
            rows, quoted = await self._batch_rows(bot, group, cfg)
        else:
            rows, quoted = await self._private_rows(bot, user_id, cfg)
        if not any(not m.is_bot and m.user_id != bot for m in rows):
            return {"outcome": "nothing_new"}
        scope = own_scope(bot, group, user_id)
        chat = f"group {group}" if group else f"private chat {user_id}"
        batch = build_batch(
            rows, bot_id=bot, quoted_bot_texts=quoted, max_chars=cfg.message_max_chars
        )
        persona = self.persona(self.group_config(group).persona)
        known = await self._known(scope, batch)
        prompt = extraction_messages(batch, bot_name=persona.name, known=known)
        now = self.clock.now()
        spent = await self.usage.totals(now=now, bot_id=bot, group_id=group, task="cheap")
        estimate = count_message_tokens(prompt) + cfg.max_output_tokens
        if spent.tokens + estimate > cfg.daily_token_budget:
            log.info(
                "%s: memory extraction skipped, daily budget (%d used + %d > %d)",
                chat,
                spent.tokens,
                estimate,
                cfg.daily_token_budget,
            )
            denied = await self._rule_denials(bot, scope, chat, batch, turn_id)
            return {"outcome": "budget", "spent": spent.tokens, "estimate": estimate,
                    "rule_denials": denied}  # fmt: skip
        result = await self.llm.complete(
            "cheap", prompt, bot_id=bot, group_id=group, max_tokens=cfg.max_output_tokens,
            temperature=0.0, json_schema=EXTRACTION_SCHEMA,
        )  # fmt: skip
        if not result.ok or not is_json_answer(result.text):
            error = result.error if not result.ok else "not_json"
            log.warning("%s: memory extraction call failed (%s)", chat, error)
            denied = await self._rule_denials(bot, scope, chat, batch, turn_id)
            return {"outcome": f"error:{error}", "rule_denials": denied}
        accepted, rejected = attribute(
            parse_extraction(result.text),
            batch,
            limit=cfg.max_facts_per_job,
            bot_names=(persona.name, *persona.aliases),
        )
        stored = [
            await self._store(bot, scope, chat, fact, turn_id, result.model, known)
            for fact in accepted
        ]
        cursor = _key("cursor", bot, group, user_id)
        await self.state.set(cursor, max(m.row_id for m in rows), ttl=None)
        report = {
            "outcome": "ok",
            "messages": len(rows),
            "stored": stored,
            "rejected": [{"text": r.fact.text[:40], "reason": r.reason} for r in rejected],
            "tokens": result.prompt_tokens + result.completion_tokens,
        }
        log.info("%s: memory extraction %s", chat, report)
        return report

    async def _known(self, scope: str, batch: Batch) -> dict[str, KnownFact]:
        """The live person facts of the batch's speakers in this chat (their newest few)."""
        facts: list[tuple[int, int, str, str]] = []
        for message in batch.users().values():
            items = await self.service.repo.candidates(
                [scope], PERSON_FACTS, subject_user_id=message.user_id, limit=KNOWN_PER_MEMBER
            )
            facts.extend((i.id, message.user_id, i.scope, i.text) for i in items)
        return known_facts(facts)

    async def _rule_denials(
        self, bot: int, scope: str, chat: str, batch: Batch, turn_id: str
    ) -> list[dict[str, Any]]:
        """The offline fallback: each member's denials in the batch retire what they deny."""
        out: list[dict[str, Any]] = []
        for message in batch.messages:
            if message.is_bot:
                continue
            outcomes = await self.service.deny_by_rules(
                bot_id=bot, scope=scope, user_id=message.user_id,
                text=message.text, subject_name=message.name,
                source={"message_ids": [message.message_id], "turn_id": turn_id},
            )  # fmt: skip
            out.extend(
                {"id": o.item.ref, "action": o.action, "replaced": o.replaced_ids} for o in outcomes
            )
        if out:
            log.info("%s: memory rule denials %s", chat, out)
        return out

    async def _store(
        self,
        bot: int,
        scope: str,
        chat: str,
        fact: ExtractedFact,
        turn_id: str,
        model: str,
        known: dict[str, KnownFact],
    ) -> dict[str, Any]:
        judged, dropped = None, list[str]()
        if fact.kind == PERSON_FACTS:
            judged, dropped = model_judgement(
                fact.op, fact.replaces, known, subject_user_id=fact.subject_user_id, scope=scope
            )
        if dropped:
            log.info("%s: extraction judgement of %r: %s", chat, fact.text[:40], dropped)
        outcome = await self.service.remember(
            bot_id=bot,
            scope=scope,
            kind=fact.kind,
            text=fact.text,
            origin="extract",
            key=fact.key,
            subject_user_id=fact.subject_user_id,
            author_user_id=fact.subject_user_id,
            subject_name=fact.subject_name,
            source={"message_ids": list(fact.message_ids), "turn_id": turn_id, "model": model},
            judged=judged,
        )
        return {"id": outcome.item.ref, "action": outcome.action, "replaced": outcome.replaced_ids,
                "op": judged.op if judged else "rules", "dropped": dropped}  # fmt: skip
