"""The reads an addressed turn will make, made before it asks.

Two moments:

- **An addressed line is read at the edge** (`anticipate`): the shared rows, the speaker's
  rows and consolidated profile and the indexes of the kinds with rows are read side by side,
  and the question is sent to the encoder's process, unless it is known that there is no row
  to compare it with. The turn's retrievals then find these cached or join them in flight,
  instead of starting them ~2 ms into the turn, one after the other
  (`benchmarks.ingest --at-facts`).
- **A write moved a scope's generation** (`written`): every cached window of the scope is
  now unreachable, so the next @ of anyone in the group would read it all again on the
  reply's critical path; in a burst each of those reads waits a whole pass of the busy loop.
  The members whose lines were anticipated recently in that scope (`REWARM_WITHIN_S`, at most
  `REWARM_MEMBERS`, the most recent first) have the same reads made again in the background
  without a question, `REWARM_DELAY_S` after the write: a member who has just taught the bot
  something is the one most likely to ask next. Writes in a row coalesce: those within the
  delay are read back once, and a re-read under way runs once more when it ends, not once
  per write.

Only with the local encoder, as the encode ahead: a provider's model would bill lines never
answered, and without vectors the turn's reads are few.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass

from cachetools import LRUCache

from pallas.core.clock import Clock
from pallas.features.memory.config import RetrievalConfig
from pallas.features.memory.embeddings import MemoryEmbeddings
from pallas.features.memory.kinds import PERSON_FACTS
from pallas.features.memory.profile_store import ProfileRepository
from pallas.features.memory.records import MemoryItem
from pallas.features.memory.windows import SHARED_KINDS, SPEAKER_KINDS, CandidateWindows

REWARM_WITHIN_S = 600.0  # a member anticipated this recently has their reads made again
REWARM_MEMBERS = 4  # at most this many members per write (the most recently anticipated)
# a re-read starts this long after the write: the writes of one burst (an extraction's rows,
# a correction and the fact it retires) are read back once
REWARM_DELAY_S = 0.05
TRACKED = 256  # (scopes, member) pairs remembered

Spawn = Callable[[Awaitable[None], str], object]


@dataclass(slots=True)
class _Asker:
    """A member whose line was anticipated: where and when, and the config it was read with."""

    scopes: frozenset[str]
    subject: int
    config: RetrievalConfig
    at: float


class ReadAhead:
    """The memory service's reads ahead of a turn (see the module docstring)."""

    def __init__(
        self,
        windows: CandidateWindows,
        embeddings: MemoryEmbeddings,
        profiles: ProfileRepository | None,
        clock: Clock,
        spawn: Spawn,
    ) -> None:
        self._windows = windows
        self._embeddings = embeddings
        self._profiles = profiles
        self._clock = clock
        self._spawn = spawn
        self._askers: LRUCache[tuple[frozenset[str], int], _Asker] = LRUCache(TRACKED)
        # re-reads under way, and those asked for again meanwhile (one more run when they end)
        self._running: set[tuple[frozenset[str], int]] = set()
        self._again: set[tuple[frozenset[str], int]] = set()

    def anticipate(
        self,
        query: str,
        *,
        scopes: Collection[str],
        subject: int,
        config: RetrievalConfig,
        bot_id: int,
        group_id: int,
    ) -> None:
        """An addressed line read at the edge: its reads and its question's encode, begun."""
        if not query.strip() or not self._embeddings.encodes_locally():
            return
        asker = _Asker(frozenset(scopes), subject, config, self._clock.now())
        self._askers[(asker.scopes, subject)] = asker
        self._spawn(self._anticipate(query, asker, bot_id, group_id), "question")

    def written(self, scopes: Collection[str]) -> None:
        """A write in `scopes` (their generations have moved): the recent askers' reads again."""
        if not self._askers or not self._embeddings.encodes_locally():
            return
        now, moved = self._clock.now(), set(scopes)
        recent = sorted(
            (
                a
                for a in self._askers.values()
                if a.scopes & moved and now - a.at <= REWARM_WITHIN_S
            ),
            key=lambda a: -a.at,
        )
        for asker in recent[:REWARM_MEMBERS]:
            key = (asker.scopes, asker.subject)
            if key in self._running:
                self._again.add(key)
                continue
            self._running.add(key)
            self._spawn(self._rewarm(asker), "memory re-read after a write")

    async def _rewarm(self, asker: _Asker) -> None:
        key = (asker.scopes, asker.subject)
        try:
            await asyncio.sleep(REWARM_DELAY_S)
            while True:
                self._again.discard(key)
                await self._read(asker.scopes, asker.subject, asker.config)
                if key not in self._again:
                    return
        finally:
            self._running.discard(key)
            self._again.discard(key)

    async def _anticipate(self, query: str, asker: _Asker, bot_id: int, group_id: int) -> None:
        embeddings = self._embeddings
        scopes, subject, config = asker.scopes, asker.subject, asker.config
        gen, speaker, who_unknown = await self._plan(scopes, subject)
        question = None
        if speaker:
            # their rows are there, or nothing is known of this generation yet (a write just
            # moved it: rows are very likely): the encode starts now, beside the reads. Begun
            # after them, it reached the encoder's process 5-15 ms late in a turn after a
            # write, the loop idle meanwhile (`benchmarks.reply_turn --encoder`, its p99)
            question = asyncio.ensure_future(embeddings.question_ahead(query, bot_id, group_id))
        rows = await self._rows(scopes, subject, config, gen, speaker, who_unknown)
        if not rows:  # nothing to compare the question with: no encode (or only the one begun)
            if question is not None:
                await question
            return
        await asyncio.gather(
            question or embeddings.question_ahead(query, bot_id, group_id),
            *(embeddings.index_ahead(scopes, k) for k in rows if k not in speaker),
            self._profile_ahead(rows.get(PERSON_FACTS, ()), subject, gen, config),
        )

    async def _read(self, scopes: Collection[str], subject: int, config: RetrievalConfig) -> None:
        """`_anticipate`'s reads without a question, at the new generation: the windows and
        who has rows, then, once the vectors of the rows just stored are written, the indexes
        of the kinds with rows (refreshed before, an index would miss the new row and the
        turn would refresh it again) and the speaker's consolidated profile."""
        gen, speaker, who_unknown = await self._plan(scopes, subject)
        rows = await self._rows(scopes, subject, config, gen, speaker, who_unknown, indexes=False)
        await self._embeddings.stored_settled()
        await asyncio.gather(
            *(self._embeddings.index_ahead(scopes, k) for k in rows),
            self._profile_ahead(rows.get(PERSON_FACTS, ()), subject, gen, config),
        )

    async def _plan(
        self, scopes: Collection[str], subject: int
    ) -> tuple[str, tuple[str, ...], bool]:
        """The scopes' generation, the speaker kinds to read and whether who has rows is
        unknown for it. In a burst each read that really waits costs a whole pass of the busy
        loop, so after a write (nothing cached for the new generation) the subjects, the
        windows and the speaker kinds' indexes are read side by side, not one after the other:
        the speaker's windows before knowing they have rows (for a member with none, two empty
        reads once per write generation)."""
        gen = await self._windows.generation(scopes)
        known = self._windows.known_subjects(scopes, gen)
        speaker = SPEAKER_KINDS if known is None or subject in known else ()
        return gen, speaker, known is None

    async def _rows(
        self,
        scopes: Collection[str],
        subject: int,
        config: RetrievalConfig,
        gen: str,
        speaker: Sequence[str],
        who_unknown: bool,
        *,
        indexes: bool = True,
    ) -> dict[str, tuple[MemoryItem, ...]]:
        """The shared windows and the speaker's, read side by side with who has rows (when
        not known for `gen`) and, with `indexes`, the speaker kinds' indexes: the non-empty
        windows by kind."""
        windows, cap = self._windows, config.candidate_cap
        side: list[Awaitable[object]] = (
            [self._embeddings.index_ahead(scopes, k) for k in speaker] if indexes else []
        )
        if who_unknown:
            side.append(windows.subjects(scopes, gen))
        reads = asyncio.gather(
            *(windows.window(scopes, k, None, cap, gen) for k in SHARED_KINDS),
            *(windows.speaker_window(scopes, k, subject, cap, gen) for k in speaker),
        )
        loaded, _ = await asyncio.gather(reads, asyncio.gather(*side))
        kinds = (*SHARED_KINDS, *speaker)
        return {k: w for k, w in zip(kinds, loaded, strict=True) if w}

    async def _profile_ahead(
        self, facts: Sequence[MemoryItem], subject: int, gen: str, config: RetrievalConfig
    ) -> None:
        """The consolidated profile the person-facts source reads after ranking, read now
        (cached per generation): one database trip less after the turn's retrieval."""
        live_scopes = {i.scope for i in facts}
        if self._profiles is None or not config.profile.consolidate or len(live_scopes) != 1:
            return
        await self._profiles.get(next(iter(live_scopes)), subject, gen=gen)
