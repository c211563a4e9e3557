"""Ephemeral shared state (cooldowns, candidates, in-flight turns, reply context, ...).

All mutable runtime state goes through a `StateStore` so that decisions stay pure and a
deployment with several processes can swap the in-memory store for a shared one (Redis).
Values must be JSON-compatible (str, int, float, bool, None, list, dict with str keys).

Two implementations: `MemoryStateStore` (this module, one process) and `RedisStateStore`
(`pallas.core.state_redis`, shared by several processes; `PALLAS_STATE_URL`). Only
`set_if_absent` and `compare_and_set` may raise `StateUnavailableError` (the shared store is
unreachable and a claim cannot be verified); every other operation has a documented fallback
and never raises for a connection problem. Callers that claim use `claim()` to say which way
to fail.
"""

from __future__ import annotations

import copy
import logging
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Protocol

from pallas.core.clock import Clock, SystemClock
from pallas.core.errors import StorageError

JSONValue = Any

log = logging.getLogger("pallas.state")


class StateUnavailableError(StorageError):
    """The shared state store cannot be reached (raised by claims, see `claim`)."""


class StateStore(Protocol):
    async def get(self, key: str) -> JSONValue | None: ...

    async def set(self, key: str, value: JSONValue, *, ttl: float | None = None) -> None: ...

    async def set_if_absent(self, key: str, value: JSONValue, *, ttl: float | None = None) -> bool:
        """Atomically claim `key`; False when it already holds a live value.

        Raises `StateUnavailableError` when a shared store cannot be reached."""
        ...

    async def compare_and_set(
        self, key: str, expected: JSONValue | None, value: JSONValue, *, ttl: float | None = None
    ) -> bool:
        """Atomically set `key` to `value` only while it still holds `expected` (None: only
        while it is missing); False when another writer changed it first (read again and
        decide again). Raises `StateUnavailableError` when a shared store cannot be reached."""
        ...

    async def delete(self, key: str) -> None: ...

    async def incr(self, key: str, amount: int = 1, *, ttl: float | None = None) -> int:
        """Add to an integer counter (created at 0); `ttl` applies when the key is created."""
        ...

    async def push(
        self, key: str, value: JSONValue, *, maxlen: int, ttl: float | None = None
    ) -> None:
        """Append to a bounded list (oldest dropped first)."""
        ...

    async def items(self, key: str) -> list[JSONValue]:
        """The bounded list at `key`, oldest first (empty when missing)."""
        ...

    async def take(self, key: str) -> list[JSONValue]:
        """Atomically read and delete the bounded list at `key` (drain; empty when missing)."""
        ...

    async def read(
        self, values: Sequence[str], lists: Sequence[str] = ()
    ) -> tuple[list[JSONValue | None], list[list[JSONValue]]]:
        """`get` of each key in `values` and `items` of each key in `lists`, in that order, in
        one round trip (routing reads a group's whole state on every message).

        The values are read-only views: a mapping for a dict, a sequence (a tuple or a list)
        for a list; they may be the store's own frozen objects (`MemoryStateStore`), so
        callers read them and never change them."""
        ...

    async def keys(self, prefix: str) -> list[str]:
        """Live keys starting with `prefix`, sorted."""
        ...


async def claim(
    state: StateStore,
    key: str,
    value: JSONValue,
    *,
    ttl: float | None = None,
    when_unavailable: bool,
) -> bool:
    """`set_if_absent`, with the answer to give when the store cannot be reached.

    `when_unavailable=False` fails closed (locks: the work is postponed, never doubled);
    `True` fails open (the caller already owns the work and the claim only refines it).
    """
    try:
        return await state.set_if_absent(key, value, ttl=ttl)
    except StateUnavailableError as exc:
        verdict = "granted" if when_unavailable else "refused"
        log.warning("state store unavailable, claim %s %s: %s", key, verdict, exc)
        return when_unavailable


@dataclass(slots=True)
class _Entry:
    value: Any
    expires_at: float | None


_EVICT_TO = 0.9  # share of max_keys left after a sweep


_SCALAR_TYPES = frozenset({str, int, float, bool, type(None)})


def _freeze(value: Any) -> Any:
    """The stored form of a JSON value: dicts as read-only mappings, lists as tuples.

    Stored values cannot be changed through any reference, so `read` hands them out without
    a copy (routing reads a group's whole state on every message); `get` / `items` thaw them
    into private dicts and lists, as Redis would hand back. Plain JSON types are matched by
    exact type first (most values are flat dicts / lists of scalars)."""
    kind = type(value)
    if kind in _SCALAR_TYPES:
        return value
    if kind is dict or kind is MappingProxyType:
        if _SCALAR_TYPES.issuperset(map(type, value.values())):  # flat: a C-level copy
            return MappingProxyType(dict(value))
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if kind is list or kind is tuple:
        return tuple(v if type(v) in _SCALAR_TYPES else _freeze(v) for v in value)
    return _freeze_any(value)


def _freeze_any(value: Any) -> Any:
    if isinstance(value, str | int | float | bool):  # subclasses (an IntEnum, ...)
        return value
    if isinstance(value, Mapping):
        return MappingProxyType({key: _freeze(item) for key, item in value.items()})
    if isinstance(value, list | tuple):
        return tuple(_freeze(item) for item in value)
    return _Private(copy.deepcopy(value))  # not JSON: a private copy, copied again on reads


@dataclass(frozen=True, slots=True)
class _Private:
    value: Any


def _thaw(value: Any) -> Any:
    """A private mutable copy of a stored value: dicts and lists again."""
    kind = type(value)
    if kind in _SCALAR_TYPES:
        return value
    if kind is MappingProxyType:
        if _SCALAR_TYPES.issuperset(map(type, value.values())):
            return dict(value)
        return {k: v if type(v) in _SCALAR_TYPES else _thaw(v) for k, v in value.items()}
    if kind is tuple:
        return [v if type(v) in _SCALAR_TYPES else _thaw(v) for v in value]
    if kind is _Private:
        return copy.deepcopy(value.value)
    return value  # a scalar subclass


def _view(value: Any) -> Any:
    """A stored value as `read` hands it out: itself (read-only), a non-JSON one copied."""
    return copy.deepcopy(value.value) if type(value) is _Private else value


SWEEP_EVERY_S = 300.0  # expired keys are dropped at most this long after a write finds them


class MemoryStateStore:
    """Single-process store with TTLs measured on the injected clock.

    `max_keys` bounds memory: when exceeded, expired entries go first, then the oldest, down
    to 90 % of the bound, so a full store pays one sweep per ~10 % of `max_keys` inserts
    rather than a full scan on every insert. Expired entries are also swept by the first write
    `SWEEP_EVERY_S` after the last sweep: keys nobody reads again (each message's dedupe claim)
    would otherwise stay until the bound (a soak grew ~1.4 MB per busy hour that way).
    Callers cannot mutate stored state: values are stored frozen (`_freeze`), `get` / `items`
    thaw a private copy and `read` hands out the frozen values themselves.
    """

    def __init__(self, clock: Clock | None = None, *, max_keys: int = 200_000) -> None:
        self._clock = clock or SystemClock()
        self._data: dict[str, _Entry] = {}
        self._max_keys = max_keys
        self._swept_at = self._clock.now()

    def _live(self, key: str) -> _Entry | None:
        entry = self._data.get(key)
        if entry is None:
            return None
        if entry.expires_at is not None and entry.expires_at <= self._clock.now():
            del self._data[key]
            return None
        return entry

    def _expiry(self, ttl: float | None) -> float | None:
        return None if ttl is None else self._clock.now() + ttl

    def _store(self, key: str, value: Any, ttl: float | None) -> None:
        self._data[key] = _Entry(value, self._expiry(ttl))
        if len(self._data) > self._max_keys:
            self._evict()
        elif self._clock.now() - self._swept_at >= SWEEP_EVERY_S:
            self._drop_expired()  # keys nobody reads again (a message's dedupe claim) go too

    def _drop_expired(self) -> None:
        now = self._swept_at = self._clock.now()
        expired = [
            k for k, e in self._data.items() if e.expires_at is not None and e.expires_at <= now
        ]
        for key in expired:
            del self._data[key]

    def _evict(self) -> None:
        self._drop_expired()
        overflow = len(self._data) - int(self._max_keys * _EVICT_TO)
        if overflow > 0:
            # dict preserves insertion order: drop the oldest keys first
            for key in list(self._data)[:overflow]:
                del self._data[key]

    def _get_now(self, key: str) -> Any | None:
        entry = self._live(key)
        if entry is None:
            return None
        value = entry.value
        if isinstance(value, deque):
            return [v if type(v) in _SCALAR_TYPES else _thaw(v) for v in value]
        return _thaw(value)

    def _items_now(self, key: str) -> list[Any]:
        entry = self._live(key)
        if entry is None or not isinstance(entry.value, deque):
            return []
        return [v if type(v) in _SCALAR_TYPES else _thaw(v) for v in entry.value]

    def _value_view(self, key: str) -> Any | None:
        entry = self._live(key)
        if entry is None:
            return None
        value = entry.value
        if isinstance(value, deque):
            return [v if type(v) is not _Private else _view(v) for v in value]
        return _view(value)

    def _items_view(self, key: str) -> list[Any]:
        entry = self._live(key)
        if entry is None or not isinstance(entry.value, deque):
            return []
        return [v if type(v) is not _Private else _view(v) for v in entry.value]

    async def get(self, key: str) -> Any | None:
        return self._get_now(key)

    async def set(self, key: str, value: Any, *, ttl: float | None = None) -> None:
        self._data.pop(key, None)
        self._store(key, _freeze(value), ttl)

    async def set_if_absent(self, key: str, value: Any, *, ttl: float | None = None) -> bool:
        if self._live(key) is not None:
            return False
        self._store(key, _freeze(value), ttl)
        return True

    async def compare_and_set(
        self, key: str, expected: Any | None, value: Any, *, ttl: float | None = None
    ) -> bool:
        entry = self._live(key)
        if entry is None:
            if expected is not None:
                return False
        elif expected is None or isinstance(entry.value, deque) or _thaw(entry.value) != expected:
            return False  # a list is not a value (as on Redis)
        await self.set(key, value, ttl=ttl)
        return True

    async def delete(self, key: str) -> None:
        self._data.pop(key, None)

    async def incr(self, key: str, amount: int = 1, *, ttl: float | None = None) -> int:
        entry = self._live(key)
        if entry is None:
            self._store(key, amount, ttl)
            return amount
        value = int(entry.value) + amount
        entry.value = value
        return value

    async def push(self, key: str, value: Any, *, maxlen: int, ttl: float | None = None) -> None:
        entry = self._live(key)
        if entry is None or not isinstance(entry.value, deque) or entry.value.maxlen != maxlen:
            old = list(entry.value) if entry is not None and isinstance(entry.value, deque) else []
            entry = _Entry(deque(old, maxlen=maxlen), self._expiry(ttl))
            self._data[key] = entry
        elif ttl is not None:
            entry.expires_at = self._expiry(ttl)
        entry.value.append(_freeze(value))

    async def items(self, key: str) -> list[Any]:
        return self._items_now(key)

    async def read(
        self, values: Sequence[str], lists: Sequence[str] = ()
    ) -> tuple[list[Any | None], list[list[Any]]]:
        return [self._value_view(key) for key in values], [self._items_view(key) for key in lists]

    async def take(self, key: str) -> list[Any]:
        values = await self.items(key)
        self._data.pop(key, None)
        return values

    async def keys(self, prefix: str) -> list[str]:
        return sorted(
            k for k in list(self._data) if k.startswith(prefix) and self._live(k) is not None
        )
