"""The QQ accounts that connected to this process, as plain values for the console, and the
deployment's accounts across processes.

The OneBot edge writes (`connected` when an implementation opens its reverse WebSocket,
`identified` once it answered `get_login_info` / `get_version_info`, `disconnected` when the
socket closes); the console's status page reads `listed()`. `DeploymentAccounts` announces
this process's connected accounts in the shared StateStore and reads the other processes'
(on Redis), so an account served by another process is known here as one of ours: its lines
are never answered or recorded twice. Nothing here knows NoneBot.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from pallas.core import state_keys
from pallas.core.state import StateStore

log = logging.getLogger("pallas.accounts")

ANNOUNCE_EVERY_S = 10.0  # well inside ACCOUNTS_LIVE_TTL_S: a missed beat does not drop one


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
        self._listeners: list[Callable[[], None]] = []

    def on_change(self, listener: Callable[[], None]) -> None:
        """Call `listener` (synchronously, cheaply) whenever an account connects or leaves."""
        self._listeners.append(listener)

    def _changed(self) -> None:
        for listener in self._listeners:
            listener()

    def connected(self, self_id: int) -> None:
        self._accounts[self_id] = Account(self_id, True, self._now())
        self._connected = self._connected | {self_id}
        self._changed()

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
            self._changed()

    def connected_ids(self) -> frozenset[int]:
        """The accounts connected now (each one's lines are another bot's in the others')."""
        return self._connected

    def listed(self) -> list[Account]:
        """Connected accounts first (longest connected first), then the ones that left."""
        return sorted(self._accounts.values(), key=lambda a: (not a.connected, a.since))


class DeploymentAccounts:
    """Every account of the deployment: this process's connected ones now, plus those other
    processes announced within `state_keys.ACCOUNTS_LIVE_TTL_S` (read every
    `ANNOUNCE_EVERY_S`, never per message). On one process it is `connected_ids()`."""

    def __init__(
        self, accounts: Accounts, state: StateStore, now: Callable[[], float] = time.time
    ) -> None:
        self._accounts = accounts
        self._state = state
        self._now = now
        self._announced: frozenset[int] = frozenset()
        self._task: asyncio.Task[None] | None = None
        self._nudged = asyncio.Event()  # an account connected here: announce it now
        accounts.on_change(self._nudged.set)

    def ids(self) -> frozenset[int]:
        connected, announced = self._accounts.connected_ids(), self._announced
        return connected if announced <= connected else connected | announced

    async def announce(self) -> None:
        """Say which accounts this process serves now; learn the others' (one beat)."""
        now = self._now()
        key = state_keys.ACCOUNTS_LIVE
        for self_id in sorted(self._accounts.connected_ids()):
            await self._state.push(
                key,
                {"id": self_id, "t": now},
                maxlen=state_keys.ACCOUNTS_LIVE_MAXLEN,
                ttl=state_keys.ACCOUNTS_LIVE_TTL_S,
            )
        since = now - state_keys.ACCOUNTS_LIVE_TTL_S
        live = set()
        for item in await self._state.items(key):
            if isinstance(item, dict) and float(item.get("t", 0)) >= since:
                with contextlib.suppress(TypeError, ValueError):
                    live.add(int(item["id"]))
        self._announced = frozenset(live)

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="deployment-accounts")

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        failing = False
        while True:
            try:
                await self.announce()
                failing = False
            except Exception as exc:  # the state store is down: keep what was known
                if not failing:
                    log.warning("deployment accounts not announced: %r", exc)
                failing = True
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._nudged.wait(), ANNOUNCE_EVERY_S)
            self._nudged.clear()
