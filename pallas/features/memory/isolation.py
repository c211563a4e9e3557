"""Memory scopes: which stored rows a (bot, group) may read or write.

A scope is a string stored with every memory row:

- ``group:<bot_id>:<group_id>`` — one bot's memory of one group (the default for everything),
- ``private:<bot_id>:<user_id>`` — one bot's private chat with one user,
- ``pool:<name>`` — a named shared pool that groups opt into explicitly in config.

The rule: a (bot, group) reads its own group scope plus the pools its config names, nothing
else. Pool names are validated so a configured "pool" can never spell another group's scope,
and the reading side cannot be widened by anything but config.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from typing import Protocol, TypeVar

from pallas.core.errors import ConfigError

GROUP_PREFIX = "group:"
PRIVATE_PREFIX = "private:"
POOL_PREFIX = "pool:"

_POOL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$")


# a ValueError too: `validate_pool_name` runs in a pydantic field validator (retrieval_config),
# and pydantic turns only a ValueError raised there into a ValidationError
class InvalidPoolName(ConfigError, ValueError):
    """A configured shared-pool name is not a plain identifier."""


def validate_pool_name(name: str) -> str:
    """Return the pool name if it is 1–64 chars of ``[A-Za-z0-9_.-]`` (no ``:``), else raise."""
    if not isinstance(name, str) or not _POOL_NAME.match(name):
        raise InvalidPoolName(
            f"invalid shared memory pool name {name!r}: use 1-64 letters, digits, '_', '.', '-'"
        )
    return name


def group_scope(bot_id: int, group_id: int) -> str:
    if group_id == 0:
        raise ValueError("group_id 0 is a private chat; use private_scope(bot_id, user_id)")
    return f"{GROUP_PREFIX}{int(bot_id)}:{int(group_id)}"


def private_scope(bot_id: int, user_id: int) -> str:
    return f"{PRIVATE_PREFIX}{int(bot_id)}:{int(user_id)}"


def pool_scope(name: str) -> str:
    return POOL_PREFIX + validate_pool_name(name)


def own_scope(bot_id: int, group_id: int, user_id: int | None = None) -> str:
    """The one scope a conversation writes to: its group, or the private chat (group_id 0)."""
    if group_id == 0:
        if user_id is None:
            raise ValueError("a private chat scope needs the user id")
        return private_scope(bot_id, user_id)
    return group_scope(bot_id, group_id)


def readable_scopes(
    bot_id: int,
    group_id: int,
    shared_pools: Iterable[str] = (),
    *,
    user_id: int | None = None,
) -> frozenset[str]:
    """Scopes a (bot, group) may read: its own scope plus explicitly configured pools.

    Never another group's scope and never another bot's: there is no parameter that could
    name one. Raises `InvalidPoolName` for a malformed pool name (config validation should have
    caught it earlier; failing closed is the safe default).
    """
    scopes = {own_scope(bot_id, group_id, user_id)}
    scopes.update(pool_scope(name) for name in shared_pools)
    return frozenset(scopes)


def bot_group_scopes(bot_id: int, scopes: Iterable[str]) -> frozenset[str]:
    """Of `scopes`, the group scopes of `bot_id` (never a pool, a private chat or another
    bot's group): in a private chat, where that user's own person facts taught in groups are
    read from (`private_fact_scopes`)."""
    prefix = f"{GROUP_PREFIX}{int(bot_id)}:"
    return frozenset(s for s in scopes if s.startswith(prefix))


def private_fact_scopes(
    bot_id: int, user_id: int, fact_scopes: Iterable[str], *, use_group_facts: bool
) -> frozenset[str]:
    """Scopes a private chat reads the user's person facts from: the private chat, plus (with
    `use_group_facts`) the bot's groups where `fact_scopes` says this user has facts. The
    rows are still selected by the user's own id, so another member's facts never come."""
    scopes = {private_scope(bot_id, user_id)}
    if use_group_facts:
        scopes.update(bot_group_scopes(bot_id, fact_scopes))
    return frozenset(scopes)


def can_read(scope: str, allowed: Collection[str]) -> bool:
    return scope in allowed


class _Scoped(Protocol):
    @property
    def scope(self) -> str: ...


ScopedT = TypeVar("ScopedT", bound=_Scoped)


def filter_readable(items: Iterable[ScopedT], allowed: Collection[str]) -> list[ScopedT]:
    """Keep only the items whose scope is in `allowed` (order preserved)."""
    return [item for item in items if item.scope in allowed]
