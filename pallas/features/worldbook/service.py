"""Worldbooks at run time: files bound per group, reloaded on change, activated per turn.

- `WorldbookLibrary` keeps the parsed books of `config/worldbooks/` in memory and re-reads a
  file only when its mtime / size changed (checked at most every `check_interval_s`; parsing
  runs in a worker thread). Load errors are logged once per file version.
- `activate_for_turn` runs the pure `activate_worldbook` for one group turn: the scan text is
  the group's recent timeline (newest last) plus the current text; the turn index is a
  per-group counter and the sticky / cooldown timers are a `WorldbookState`, both in the
  StateStore, so timed effects survive across turns (and processes, with Redis).

Placement is the pipeline's `worldbook` processor: before-char entries before the persona text,
after-char ones after it, depth entries as messages at their depth.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pallas.core import state_keys
from pallas.core.clock import DAY_S
from pallas.core.db.repositories.messages import MessageRepository
from pallas.core.state import StateStore
from pallas.features.worldbook.activation import ActivationResult, activate_worldbook
from pallas.features.worldbook.loader import WorldbookLoadResult, load_worldbook_file
from pallas.features.worldbook.model import WorldbookConfig, WorldbookEntry, WorldbookState

log = logging.getLogger("pallas.worldbook")

MAX_SCAN_MESSAGES = 100
STATE_TTL_S = 30 * DAY_S


@dataclass(frozen=True, slots=True)
class _Loaded:
    signature: tuple[int, int]  # (mtime_ns, size)
    result: WorldbookLoadResult


def book_file_name(name: str) -> str | None:
    """``name`` or ``name.json`` as a plain file name inside the worldbooks dir, else None."""
    file_name = name if name.endswith(".json") else f"{name}.json"
    if Path(file_name).name != file_name or file_name.startswith("."):
        return None
    return file_name


class WorldbookLibrary:
    def __init__(self, directory: Path, *, check_interval_s: float = 2.0) -> None:
        self.directory = directory
        self._interval = check_interval_s
        self._books: dict[str, _Loaded] = {}
        self._checked: dict[str, float] = {}
        self._missing: set[str] = set()
        self._stake_keys: dict[tuple[object, ...], frozenset[str]] = {}

    async def stake_keys(self, names: Sequence[str]) -> frozenset[str]:
        """The primary keys of the named books' keyed entries (lower-cased, 2+ characters):
        a member who names one of them talks about the persona's world — a stake for the bot
        to speak (`routing.ambient_stake`). Constant and disabled entries have no say."""
        books = [(name, await self._book(name)) for name in dict.fromkeys(names)]
        signature = tuple((name, b.signature) for name, b in books if b is not None)
        keys = self._stake_keys.get(signature)
        if keys is None:
            keys = frozenset(
                key.strip().lower()
                for _, book in books
                if book is not None
                for entry in book.result.entries
                if entry.enabled and not entry.constant
                for key in entry.keys
                if len(key.strip()) >= 2 and not key.startswith("/")  # not a regex key
            )
            if len(self._stake_keys) >= 32:  # a few distinct book sets across the groups
                self._stake_keys.clear()
            self._stake_keys[signature] = keys
        return keys

    async def entries(self, names: Sequence[str]) -> tuple[WorldbookEntry, ...]:
        """Entries of the named books, in the given order; missing / broken books skipped."""
        out: list[WorldbookEntry] = []
        for name in dict.fromkeys(names):
            loaded = await self._book(name)
            if loaded is not None:
                out.extend(loaded.result.entries)
        return tuple(out)

    async def _book(self, name: str) -> _Loaded | None:
        file_name = book_file_name(name)
        if file_name is None:
            log.error("worldbook %r: book names must be plain file names", name)
            return None
        current = self._books.get(file_name)
        now = time.monotonic()
        if current is not None and now - self._checked.get(file_name, 0.0) < self._interval:
            return current
        self._checked[file_name] = now
        path = self.directory / file_name
        try:
            stat = path.stat()
        except OSError:
            if file_name not in self._missing:
                log.error("worldbook %s not found in %s", file_name, self.directory)
                self._missing.add(file_name)
            self._books.pop(file_name, None)
            return None
        self._missing.discard(file_name)
        signature = (stat.st_mtime_ns, stat.st_size)
        if current is not None and current.signature == signature:
            return current
        result = await asyncio.to_thread(load_worldbook_file, path)
        for error in result.errors:
            log.error("worldbook %s", error)
        loaded = _Loaded(signature, result)
        self._books[file_name] = loaded
        log.info("worldbook %s loaded: %d entries", file_name, len(result.entries))
        return loaded


@dataclass(frozen=True, slots=True)
class WorldbookTurn:
    bot_id: int
    group_id: int
    message_id: int
    current_text: str


def _state_key(bot_id: int, group_id: int) -> str:
    return state_keys.worldbook_state(bot_id, group_id)


def _turn_key(bot_id: int, group_id: int) -> str:
    return state_keys.worldbook_turn(bot_id, group_id)


def scan_depth_needed(entries: Sequence[WorldbookEntry], config: WorldbookConfig) -> int:
    depths = [config.scan_depth, *(e.scan_depth or 0 for e in entries)]
    return min(max(depths), MAX_SCAN_MESSAGES)


def _uses_messages(entries: Sequence[WorldbookEntry], config: WorldbookConfig) -> bool:
    return any(config.option(b, "timed_unit") == "messages" for b in {e.book for e in entries})


async def activate_for_turn(
    turn: WorldbookTurn,
    entries: Sequence[WorldbookEntry],
    config: WorldbookConfig,
    *,
    messages: MessageRepository,
    state: StateStore,
    count_tokens: Callable[[str], int],
    context_tokens: int,
    clean: Callable[[str, str, int], str] | None = None,
) -> ActivationResult:
    """Activate the group's entries for this turn and persist the new timed-effect state.

    `clean(text, role, depth)`: the request-stage regex rules, applied to every scanned
    message so keys match the cleaned text. Timed effects count chat messages (the group's
    stored message count, this message included) unless a book keeps bot replies as the unit.
    """
    depth = scan_depth_needed(entries, config)
    recent = await messages.recent(turn.bot_id, turn.group_id, limit=depth + 1) if depth else []
    rows = [m for m in recent if m.message_id != turn.message_id][-depth:] if depth else []
    scan = [(m.text, "assistant" if m.is_bot else "user") for m in rows]
    scan.append((turn.current_text, "user"))
    if clean is not None:
        last = len(scan) - 1
        scan = [(clean(text, role, last - i), role) for i, (text, role) in enumerate(scan)]
    texts = [text for text, _ in scan]
    chat_length = len(texts)
    total = None
    if any(e.delay for e in entries) or _uses_messages(entries, config):
        total = await messages.count(turn.bot_id, turn.group_id)
        chat_length = max(chat_length, total)
    turn_index = await state.incr(_turn_key(turn.bot_id, turn.group_id), ttl=STATE_TTL_S)
    previous = WorldbookState.from_dict(await state.get(_state_key(turn.bot_id, turn.group_id)))
    rng = random.Random(f"{turn.bot_id}:{turn.group_id}:{turn.message_id}:{turn_index}")
    result = activate_worldbook(
        entries,
        texts,
        previous,
        turn_index,
        rng,
        config,
        count_tokens=count_tokens,
        context_tokens=context_tokens,
        chat_length=chat_length,
        message_index=total or None,  # nothing stored (record = false): bot replies
    )
    await state.set(_state_key(turn.bot_id, turn.group_id), result.state.to_dict(), ttl=STATE_TTL_S)
    return result
