"""The memory / knowledge / relationship / person-facts `ContextSource`s, in retrieval order.

    memory        【相关群内记忆】【已确认群事件】【相关 IP 知识】【用户明确教导】 → `memory`
    knowledge     knowledge rows → `knowledge`; activated worldbook entries → `worldbook`
                  (placed by the pipeline's worldbook processor: before / after the persona
                  or at their depth in the messages)
    relationship  notes about the current speaker (group turns, valid user)    → `relationship`
    person_facts  the current speaker's stable preferences                     → `person_facts`

Short social turns (no persistent memory) skip memory, relationship and person facts with the
trace `skipped_short_social_turn`; knowledge still runs. Every read is scoped by
`isolation.readable_scopes` (own group + the group's configured shared pools); person rows are
selected by the speaker's user id, never by a name.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from pallas.context import sections as S
from pallas.context.config import ContextConfig
from pallas.context.context import GatherRequest, SourceContribution
from pallas.context.processor_inputs import RetrievedBlock
from pallas.context.rule_processors import WORLDBOOK_BLOCK
from pallas.context.rules_config import ContextRulesConfig
from pallas.context.turn_rules import ScanCleaner, scan_cleaner
from pallas.core.db.repositories.messages import MessageRepository
from pallas.core.state import StateStore
from pallas.core.tokens import count_tokens
from pallas.core.turn import TurnInput
from pallas.features.memory import (
    KNOWLEDGE,
    MEMORY_SECTION_KINDS,
    PERSON_FACTS,
    RELATIONSHIP,
    BlockResult,
    MemoryItem,
    MemoryService,
    RetrievalConfig,
    StoredProfile,
    private_fact_scopes,
    readable_scopes,
)
from pallas.features.memory_prompt.profile import (
    compose_profile,
    consolidated_aside,
    consolidated_profile,
    profile_aside,
    profile_block,
    stands_for,
)
from pallas.features.memory_prompt.render import KindBlock, build_block
from pallas.features.persona import PersonaStore
from pallas.features.worldbook import (
    WorldbookConfig,
    WorldbookLibrary,
    WorldbookTurn,
    activate_for_turn,
)
from pallas.providers.models import ModelProfile

log = logging.getLogger("pallas.memory")

SKIPPED_SHORT_SOCIAL = "skipped_short_social_turn"
GROUP_FACT_ROWS = 200  # a private chat looks this far for the groups the user taught facts in


class PrivateChatView(Protocol):
    """`[private]` as the person-facts source reads it."""

    @property
    def use_group_facts(self) -> bool: ...


class MemorySourceConfig(Protocol):
    """The group config as these sources read it (`GroupConfig` is one: the config layer is
    above the features, so the sources name the fields, and mypy checks `GroupConfig` has
    them where the sources are listed as `ContextSource[GroupConfig]`)."""

    @property
    def memory(self) -> RetrievalConfig: ...

    @property
    def context(self) -> ContextConfig: ...

    @property
    def context_rules(self) -> ContextRulesConfig: ...

    @property
    def models(self) -> dict[str, ModelProfile]: ...

    @property
    def private(self) -> PrivateChatView: ...

    @property
    def worldbook(self) -> WorldbookConfig: ...

    @property
    def persona(self) -> str: ...


Request = GatherRequest[MemorySourceConfig]


def turn_scopes(request: Request) -> frozenset[str]:
    turn = request.turn
    pools = request.config.memory.shared_pools
    return readable_scopes(turn.bot_id, turn.group_id, pools, user_id=turn.user_id)


def _skip(request: Request, processor: str) -> SourceContribution | None:
    if processor in request.config.context.disabled_processors:
        # its section is switched off: nothing is retrieved, shown as chosen, or counted as used
        return SourceContribution(trace={"skipped": "processor_disabled"})
    if request.allow_persistent_memory:
        return None
    reason = SKIPPED_SHORT_SOCIAL if request.short_social else "persistent_memory_not_allowed"
    return SourceContribution(trace={"skipped": reason})


async def _retrieve(
    service: MemoryService,
    request: Request,
    kind: str,
    scopes: frozenset[str],
    *,
    subject: int | None = None,
    fallback_k: int = 0,
    near_k: int = 0,
    config: RetrievalConfig | None = None,
) -> BlockResult:
    return await service.retrieve(
        kind,
        request.query,
        scopes=scopes,
        config=config or request.config.memory,
        now=request.now,
        bot_id=request.turn.bot_id,
        group_id=request.turn.group_id,
        subject_user_id=subject,
        fallback_k=fallback_k,
        near_k=near_k,
    )


class MemorySource:
    name = "memory"

    def __init__(self, service: MemoryService) -> None:
        self.service = service

    async def gather(self, request: Request) -> SourceContribution:
        if (skipped := _skip(request, self.name)) is not None:
            return skipped
        scopes = turn_scopes(request)
        results = [await _retrieve(self.service, request, k, scopes) for k in MEMORY_SECTION_KINDS]
        block = build_block([KindBlock(r.kind, r.items) for r in results], source="memory")
        self.service.touch([i for r in results for i in r.ids])
        trace: dict[str, Any] = {"scopes": sorted(scopes)}
        trace.update({r.kind: r.trace for r in results})
        return SourceContribution(blocks={S.MEMORY: block} if block else {}, trace=trace)


class _PersonalSource:
    """Rows about the current speaker (by user id) of one kind."""

    name = ""
    kind = ""
    section = ""

    def __init__(self, service: MemoryService) -> None:
        self.service = service

    async def gather(self, request: Request) -> SourceContribution:
        turn = request.turn
        if turn.user_id <= 0 or turn.user_id == turn.bot_id:
            return SourceContribution(trace={"skipped": "not_a_member_turn"})
        if (skipped := _skip(request, self.name)) is not None:
            return skipped
        scopes = await self._scopes(request)
        config, fallback = self._retrieval(request.config.memory)
        result = await _retrieve(
            self.service, request, self.kind, scopes, subject=turn.user_id,
            fallback_k=fallback, near_k=self._near_k(request.config.memory), config=config,
        )  # fmt: skip
        block, extra = await self._block(result, request, scopes)
        self.service.touch(result.ids)
        trace = {"scopes": sorted(scopes), "subject_user_id": turn.user_id, **result.trace}
        trace.update(extra)
        return SourceContribution(blocks={self.section: block} if block else {}, trace=trace)

    async def _scopes(self, request: Request) -> frozenset[str]:
        return turn_scopes(request)

    def _retrieval(self, memory: RetrievalConfig) -> tuple[RetrievalConfig, int]:
        return memory, memory.personal_fallback_k

    def _near_k(self, memory: RetrievalConfig) -> int:
        return 0

    async def _block(
        self, result: BlockResult, request: Request, scopes: frozenset[str]
    ) -> tuple[RetrievedBlock | None, dict[str, Any]]:
        return build_block([KindBlock(self.kind, result.items)], source=self.name), {}


class RelationshipSource(_PersonalSource):
    name, kind, section = "relationship", RELATIONSHIP, S.RELATIONSHIP


class PersonFactsSource(_PersonalSource):
    """The speaker's facts: as their profile (every live fact, compact: `profile`), or, with
    `[memory.profile] enabled = false`, the relevant ones and the newest up to the block's
    caps, a line each."""

    name, kind, section = "person_facts", PERSON_FACTS, S.PERSON_FACTS

    def __init__(self, service: MemoryService) -> None:
        super().__init__(service)
        self._widened: dict[int, tuple[RetrievalConfig, RetrievalConfig]] = {}

    def _budget(self, memory: RetrievalConfig) -> int:
        """The token budget of the ranked profile, or 0 for every live fact: ranked only while
        retrieval ranks by meaning. Without vectors (encoder off or still loading, no provider
        model) words alone cannot tell a relevant fact from an unrelated one, so the speaker's
        whole profile is carried as before the budget existed."""
        return memory.profile.token_budget if self.service.ranks_by_meaning else 0

    def _retrieval(self, memory: RetrievalConfig) -> tuple[RetrievalConfig, int]:
        """The person-facts block widened to the profile's caps; with a token budget, no
        fallback: only the facts past the relevance gate (none for a question about something
        never said), else every live fact, the relevant first."""
        profile = memory.profile
        if not profile.enabled:
            return super()._retrieval(memory)
        fallback = 0 if self._budget(memory) else profile.max_facts
        cached = self._widened.get(id(memory))  # one copy per config object, not per turn
        if cached is None or cached[0] is not memory:
            block = memory.person_facts.model_copy(
                update={"top_k": profile.max_facts, "max_chars": profile.max_chars}
            )
            if len(self._widened) > 256:
                self._widened.clear()
            cached = self._widened[id(memory)] = (
                memory, memory.model_copy(update={"person_facts": block})
            )  # fmt: skip
        return cached[1], fallback

    def _near_k(self, memory: RetrievalConfig) -> int:
        """The facts nearest the question below the gate, for the profile's aside (ranked
        profiles only)."""
        enabled = memory.profile.enabled and self._budget(memory)
        return memory.profile.near_facts if enabled else 0

    async def _block(
        self, result: BlockResult, request: Request, scopes: frozenset[str]
    ) -> tuple[RetrievedBlock | None, dict[str, Any]]:
        memory = request.config.memory
        if not memory.profile.enabled:
            return await super()._block(result, request, scopes)
        items = result.items
        budget = self._budget(memory)
        subject = request.turn.user_id
        consolidated = self.service.profiles is not None and memory.profile.consolidate
        # the member's live facts and their generation, read once for both uses below
        gen, live = (
            await self.service.live_items(scopes, self.kind, subject, memory)
            if budget or consolidated
            else ("", ())
        )
        stored = await self._stored(request, gen, live) if consolidated else None
        max_chars = memory.profile.max_chars
        profile = None
        if stored is not None and (items or not budget):  # nothing relevant: none of those
            profile = consolidated_profile(stored, live, max_chars=max_chars,
                                           relevant=items if budget else None,
                                           max_tokens=budget)  # fmt: skip
        made = "model" if profile is not None else "rules"
        if profile is None:
            profile = compose_profile(items, max_chars=max_chars, max_tokens=budget)
        aside = None
        if budget and stored is not None:  # the statements, not the rows they merge
            aside = consolidated_aside(stored, live, profile, near=result.near,
                                       max_chars=max_chars, max_tokens=budget)  # fmt: skip
        elif budget:  # ranked: a profile small enough is still carried whole, the rest aside
            aside = profile_aside(live, profile, near=result.near, max_chars=max_chars,
                                  max_tokens=budget)  # fmt: skip
        trace = {"profile": {"facts": len(profile.refs), "left_out": profile.left_out,
                             "made_by": made,
                             "aside": len(aside.refs) if aside is not None else 0}}  # fmt: skip
        return profile_block(profile, source=self.name, aside=aside), trace

    async def _stored(
        self, request: Request, gen: str, live: tuple[MemoryItem, ...]
    ) -> StoredProfile | None:
        """The member's consolidated profile when it stands for exactly their `live` facts
        (all in one scope): no fact changed since the model consolidated them."""
        live_scopes = {i.scope for i in live}
        if self.service.profiles is None or len(live_scopes) != 1:
            return None
        subject = request.turn.user_id
        stored = await self.service.profiles.get(next(iter(live_scopes)), subject, gen=gen)
        return stored if stands_for(stored, live) else None

    async def _scopes(self, request: Request) -> frozenset[str]:
        """A group reads its own scope; a private chat reads the private scope plus, with
        `[private] use_group_facts`, the groups where this user taught the bot about
        themselves (their own rows only: retrieval selects by their user id)."""
        turn = request.turn
        if not turn.is_private:
            return turn_scopes(request)
        use_group_facts = bool(request.config.private.use_group_facts)
        found: list[str] = []
        if use_group_facts:
            mine = await self.service.repo.list_items(
                bot_id=turn.bot_id,
                kind=PERSON_FACTS,
                subject_user_id=turn.user_id,
                limit=GROUP_FACT_ROWS,
            )
            found = [item.scope for item in mine]
        return private_fact_scopes(
            turn.bot_id, turn.user_id, found, use_group_facts=use_group_facts
        )


class QuestionAhead:
    """The memory sources' `TurnAnticipator`: a group line addressed to the bot has its
    reads made and its question encoded from the moment the edge reads it
    (`ReadAhead.anticipate`), with the question and scopes its retrievals will use
    (`GatherRequest.query`, `turn_scopes`)."""

    def __init__(self, service: MemoryService) -> None:
        self.service = service

    def anticipate(self, turn: TurnInput, question: str, config: MemorySourceConfig) -> None:
        if turn.is_private or turn.user_id <= 0 or turn.user_id == turn.bot_id:
            return
        memory = config.memory
        self.service.ahead.anticipate(
            question,
            scopes=readable_scopes(turn.bot_id, turn.group_id, memory.shared_pools,
                                   user_id=turn.user_id),
            subject=turn.user_id,
            config=memory,
            bot_id=turn.bot_id,
            group_id=turn.group_id,
        )  # fmt: skip


class KnowledgeSource:
    """Knowledge rows plus the group's activated worldbook entries (runs on every turn)."""

    name = "knowledge"

    def __init__(
        self,
        service: MemoryService,
        library: WorldbookLibrary,
        *,
        messages: MessageRepository,
        state: StateStore,
        context_tokens: Callable[[MemorySourceConfig], int],
        regex_dir: Path | None = None,
        personas: PersonaStore | None = None,  # the persona pack's regex rules
    ) -> None:
        self.service = service
        self.library = library
        self._regex_dir = regex_dir
        self._personas = personas
        self._messages = messages
        self._state = state
        self._context_tokens = context_tokens

    async def gather(self, request: Request) -> SourceContribution:
        scopes = turn_scopes(request)
        result = await _retrieve(self.service, request, KNOWLEDGE, scopes)
        self.service.touch(result.ids)
        trace: dict[str, Any] = {"scopes": sorted(scopes), KNOWLEDGE: result.trace}
        worldbook = await self._worldbook(request, trace)
        block = build_block([KindBlock(KNOWLEDGE, result.items)], source="knowledge")
        blocks = {S.KNOWLEDGE: block} if block else {}
        if worldbook is not None:  # placed by the pipeline's `worldbook` processor
            blocks[WORLDBOOK_BLOCK] = worldbook
        return SourceContribution(blocks=blocks, trace=trace)

    async def _worldbook(self, request: Request, trace: dict[str, Any]) -> RetrievedBlock | None:
        config = request.config.worldbook
        turn = request.turn
        if not config.enabled or not config.books or turn.group_id == 0:
            return None
        entries = await self.library.entries(config.books)
        if not entries:
            trace["worldbook"] = {"books": list(config.books), "entries": 0}
            return None
        activation = await activate_for_turn(
            WorldbookTurn(turn.bot_id, turn.group_id, turn.message_id, request.current_text),
            entries,
            config,
            messages=self._messages,
            state=self._state,
            count_tokens=count_tokens,
            context_tokens=self._context_tokens(request.config),
            clean=self._scan_cleaner(request),
        )
        trace["worldbook"] = {"books": list(config.books), **activation.to_dict()}
        if not activation.activated:
            return None
        tokens = tuple(a.entry.source_token for a in activation.activated)
        return RetrievedBlock(
            text="\n".join(a.entry.content for a in activation.activated),
            source="worldbook",
            memory_ids=tokens,
            source_tokens=tokens,
            items=activation.activated,
        )

    def _scan_cleaner(self, request: Request) -> ScanCleaner | None:
        """Request-stage regex rules over the scanned messages (keys match cleaned text)."""
        if self._regex_dir is None or "regex" in request.config.context.disabled_processors:
            return None
        persona_rules = self._personas.get(request.config.persona).regex if self._personas else ()
        return scan_cleaner(request.config, self._regex_dir, persona_rules)
