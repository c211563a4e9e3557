"""Private messages at the edge: who the bot answers in private (`[private]` in
`config/groups/default.toml`), decided once per message by `pallas.routing.private_policy`.

A refused private message is recorded like any other (at read) and goes to no handler; its
reason is one INFO line, rate-limited per reason so a flood of DMs from strangers costs a few
lines a minute, not one per message.
"""

from __future__ import annotations

import logging

from nonebot.adapters.onebot.v11 import PrivateMessageEvent

from pallas.core.log_limit import LogLimiter, skipped_note
from pallas.routing.private_policy import PrivateAdmission, admit_private
from pallas.runtime import PallasRuntime

log = logging.getLogger("pallas.inbound")

PRIVATE_CONFIG_GROUP = 0  # a private chat has no group file: its config is the defaults


class PrivateGate:
    def __init__(self, runtime: PallasRuntime, *, limiter: LogLimiter | None = None) -> None:
        self._runtime = runtime
        self._limiter = limiter or LogLimiter(per_window=3, window_s=60.0)
        self.refused = 0

    def decide(self, event: PrivateMessageEvent) -> PrivateAdmission:
        """The verdict alone (the edge's lane choice at read: a refused message never takes
        the priority lane)."""
        runtime = self._runtime
        config = runtime.group_configs.get(PRIVATE_CONFIG_GROUP)
        return admit_private(
            str(event.sub_type), int(event.user_id), config.private, runtime.superusers
        )

    def admission(self, event: PrivateMessageEvent) -> PrivateAdmission:
        """The verdict, counted and (rate-limited) logged when it refuses."""
        verdict = self.decide(event)
        user_id = int(event.user_id)
        if not verdict.allowed:
            self.refused += 1
            allowed, skipped = self._limiter.allow(verdict.reason)
            if allowed:
                log.info(
                    "private message %s from %s not answered: %s%s",
                    event.message_id,
                    user_id,
                    verdict.reason,
                    skipped_note(skipped),
                )
        return verdict


__all__ = ["PRIVATE_CONFIG_GROUP", "PrivateGate"]
