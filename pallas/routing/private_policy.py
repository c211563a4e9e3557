"""Who is answered in a private chat: a pure decision with its reason (table-tested).

OneBot v11 tells a private message's origin in `sub_type`: `friend` (the bot's QQ friend),
`group` (a temp session started from a group the two share) and `other` (anyone else). The
operator's `[private]` config says which of them the bot answers; a blocklist refuses a user
whatever their sub_type; a superuser is always answered (the admin commands work in private).
A refused message is still recorded; it is only not answered.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Protocol

FRIEND, GROUP_TEMP, OTHER = "friend", "group", "other"


class PrivateAccess(Protocol):
    """What the decision reads of `[private]` (`pallas.config.PrivateConfig` is one)."""

    @property
    def friends(self) -> bool: ...

    @property
    def group_temp(self) -> bool: ...

    @property
    def strangers(self) -> bool: ...

    @property
    def blocklist(self) -> Collection[int]: ...


@dataclass(frozen=True, slots=True)
class PrivateAdmission:
    allowed: bool
    reason: str


def admit_private(
    sub_type: str, user_id: int, access: PrivateAccess, superusers: Collection[int]
) -> PrivateAdmission:
    """Whether a private message of `sub_type` from `user_id` is answered, and why."""
    if user_id in superusers:
        return PrivateAdmission(True, "superuser")
    if user_id in access.blocklist:
        return PrivateAdmission(False, "blocklisted")
    if sub_type == FRIEND:
        return PrivateAdmission(access.friends, "friend" if access.friends else "friends_off")
    if sub_type == GROUP_TEMP:
        allowed = access.group_temp
        return PrivateAdmission(allowed, "group_temp" if allowed else "group_temp_off")
    allowed = access.strangers
    return PrivateAdmission(allowed, "stranger" if allowed else "strangers_off")


__all__ = ["FRIEND", "GROUP_TEMP", "OTHER", "PrivateAccess", "PrivateAdmission", "admit_private"]
