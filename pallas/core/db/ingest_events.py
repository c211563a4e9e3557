"""Who hears of the messages the deployment records: one small fan-out, built first.

The message writer (told of every submit) and the message repository (every batch stored
through it) are built with the runtime, before the warm state the app keeps over them: a
group's newest lines (`MessageCache`) and the group warm-up (`GroupPreload`). Each of those
needs the writer (to flush it, to list what it has not stored yet) and must hear every message
the writer takes — a cycle if either side held the other. So the runtime builds this first and
hands it to the writer and the repository in their constructors; a follower is handed it in
its own constructor and subscribes itself there. Nothing reaches into another object's list of
listeners after it was built (`pallas structure --check` flags a `subscribe` outside an
`__init__`).

Listeners are called synchronously, in the order they subscribed, on the caller's thread (a
submit may come from any thread: the threaded writer's `submit` is thread-safe), so they must
be cheap and must not raise.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pallas.core.records import StoredMessage

SubmitListener = Callable[[StoredMessage], None]
StoreListener = Callable[[Sequence[StoredMessage]], None]


class IngestEvents:
    __slots__ = ("_stored", "_submitted")

    def __init__(self) -> None:
        # tuples, replaced whole on subscribe: a submit on another thread iterates a snapshot
        self._submitted: tuple[SubmitListener, ...] = ()
        self._stored: tuple[StoreListener, ...] = ()

    def subscribe(
        self, *, submitted: SubmitListener | None = None, stored: StoreListener | None = None
    ) -> None:
        """Called from a follower's constructor: `submitted` hears every message handed to the
        message writer, `stored` every batch stored through the message repository."""
        if submitted is not None:
            self._submitted = (*self._submitted, submitted)
        if stored is not None:
            self._stored = (*self._stored, stored)

    def submitted(self, message: StoredMessage) -> None:
        """A message handed to the message writer (not stored yet)."""
        for listener in self._submitted:
            listener(message)

    def stored(self, messages: Sequence[StoredMessage]) -> None:
        """A batch stored through the message repository (duplicates included)."""
        for listener in self._stored:
            listener(messages)


__all__ = ["IngestEvents", "StoreListener", "SubmitListener"]
