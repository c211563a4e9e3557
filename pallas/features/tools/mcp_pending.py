"""Side-effect MCP calls waiting for an admin: held by the turn, run by `/pallas tool confirm`.

A tool marked `side_effects` (it sends, books, posts …) is never run because a model asked:
the call is held in the StateStore for `TOOL_PENDING_TTL_S` under a short code, the model is
told to say it awaits an admin's confirmation, and an admin of the group runs it with
`/pallas tool confirm CODE` (or drops it with `/pallas tool deny CODE`). A code is decided once
(`set_if_absent`), so a call never runs twice, even with two admins confirming at once.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pallas.core import state_keys as keys
from pallas.core.state import StateStore


@dataclass(frozen=True, slots=True)
class PendingCall:
    code: str
    server: str
    tool: str
    args: dict[str, Any]
    user_id: int  # the member whose turn asked for it
    at: float

    @property
    def name(self) -> str:
        return f"{self.server}.{self.tool}"

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "server": self.server, "tool": self.tool,
                "args": self.args, "user_id": self.user_id, "at": self.at}  # fmt: skip

    @classmethod
    def of(cls, value: Any) -> PendingCall | None:
        if not isinstance(value, Mapping):
            return None
        try:
            return cls(str(value["code"]), str(value["server"]), str(value["tool"]),
                       dict(value["args"]), int(value["user_id"]), float(value["at"]))  # fmt: skip
        except (KeyError, TypeError, ValueError):
            return None


@dataclass
class PendingCalls:
    state: StateStore

    async def hold(
        self,
        bot_id: int,
        group_id: int,
        *,
        server: str,
        tool: str,
        args: Mapping[str, Any],
        user_id: int,
        now: float,
    ) -> PendingCall:
        code = uuid.uuid4().hex[:6]
        call = PendingCall(code, server, tool, dict(args), user_id, now)
        key = keys.tool_pending(bot_id, group_id, code)
        await self.state.set(key, call.to_json(), ttl=keys.TOOL_PENDING_TTL_S)
        return call

    async def waiting(self, bot_id: int, group_id: int) -> list[PendingCall]:
        out = []
        for key in await self.state.keys(keys.tool_pending(bot_id, group_id)):
            call = PendingCall.of(await self.state.get(key))
            if call is not None:
                out.append(call)
        return sorted(out, key=lambda c: c.at)

    async def decide(self, bot_id: int, group_id: int, code: str) -> PendingCall | None:
        """The held call, taken once (None: unknown, expired or already decided)."""
        key = keys.tool_pending(bot_id, group_id, code)
        call = PendingCall.of(await self.state.get(key))
        if call is None:
            return None
        claim = keys.tool_pending_claim(bot_id, group_id, code)
        if not await self.state.set_if_absent(claim, True, ttl=keys.TOOL_PENDING_TTL_S):
            return None
        await self.state.delete(key)
        return call
