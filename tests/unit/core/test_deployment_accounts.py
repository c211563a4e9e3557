"""The deployment's accounts across processes: each process announces the accounts connected
to it in the shared state store and learns the others' (two processes = two registries over
one store here; the store's push/items contract holds on Redis too)."""

from __future__ import annotations

from pallas.core.accounts import Accounts, DeploymentAccounts
from pallas.core.clock import FakeClock
from pallas.core.state import MemoryStateStore


async def test_each_process_learns_the_accounts_the_other_serves_until_they_go() -> None:
    clock = FakeClock(1_000.0)
    store = MemoryStateStore(clock)
    here, there = Accounts(clock.now), Accounts(clock.now)
    ours = DeploymentAccounts(here, store, clock.now)
    theirs = DeploymentAccounts(there, store, clock.now)
    here.connected(111)
    there.connected(222)
    assert ours.ids() == {111}, "nothing announced yet: only this process's own"
    await theirs.announce()
    await ours.announce()
    assert ours.ids() == {111, 222}
    await theirs.announce()
    assert theirs.ids() == {111, 222}

    there.disconnected(222)  # its NapCat went away: no more announcements for it
    for _ in range(4):
        clock.advance(10)
        await theirs.announce()
        await ours.announce()
    assert ours.ids() == {111}, "an account not announced for the TTL is gone"
    assert theirs.ids() == {111}
