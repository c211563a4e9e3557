"""The QQ accounts that connected to this process, as plain values for the console.

The OneBot edge writes (`connected` when an implementation opens its reverse WebSocket,
`identified` once it answered `get_login_info` / `get_version_info`, `disconnected` when the
socket closes); the console's status page reads `listed()`. Nothing here knows NoneBot.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace


@dataclass(frozen=True, slots=True)
class Account:
    self_id: int
    connected: bool
    since: float  # unix seconds: when it connected (or, once gone, when it disconnected)
    nickname: str = ""  # from get_login_info ("" until it answered)
    app_name: str = ""  # the OneBot implementation (get_version_info), e.g. "NapCat.Onebot"
    app_version: str = ""
    protocol_version: str = ""  # e.g. "v11"

    @property
    def implementation(self) -> str:
        """`NapCat.Onebot 4.8.0` ("" when the implementation did not say)."""
        return " ".join(part for part in (self.app_name, self.app_version) if part)


class Accounts:
    """The accounts seen since start-up: connected ones, and the ones that went away."""

    def __init__(self, now: Callable[[], float] = time.time) -> None:
        self._now = now
        self._accounts: dict[int, Account] = {}
        self._connected: frozenset[int] = frozenset()  # read on every message: kept, not built

    def connected(self, self_id: int) -> None:
        self._accounts[self_id] = Account(self_id, True, self._now())
        self._connected = self._connected | {self_id}

    def identified(
        self,
        self_id: int,
        *,
        nickname: str | None = None,
        app_name: str | None = None,
        app_version: str | None = None,
        protocol_version: str | None = None,
    ) -> None:
        """What the implementation told about the account (None: it did not answer that)."""
        account = self._accounts.get(self_id)
        if account is None or not account.connected:
            return

        def told(value: str | None, known: str) -> str:
            return known if value is None else value[:64]

        self._accounts[self_id] = replace(
            account,
            nickname=told(nickname, account.nickname),
            app_name=told(app_name, account.app_name),
            app_version=told(app_version, account.app_version),
            protocol_version=told(protocol_version, account.protocol_version),
        )

    def disconnected(self, self_id: int) -> None:
        account = self._accounts.get(self_id)
        if account is not None and account.connected:
            self._accounts[self_id] = replace(account, connected=False, since=self._now())
            self._connected = self._connected - {self_id}

    def connected_ids(self) -> frozenset[int]:
        """The accounts connected now (each one's lines are another bot's in the others')."""
        return self._connected

    def listed(self) -> list[Account]:
        """Connected accounts first (longest connected first), then the ones that left."""
        return sorted(self._accounts.values(), key=lambda a: (not a.connected, a.since))
