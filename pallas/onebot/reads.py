"""What the edge learns about an event when its frame is read, kept until its handling ends.

The moment a frame is parsed (`GuardedAdapter`), the edge converts a group message to its
`TurnInput` once, records it (`received` hooks), chooses its lane and — for an addressed
message — claims the loop (`PriorityHold`). The `ReadRecord` carries those to the event's
admission (`admitted`) and to the inbound entry, which hands the turn and the hold to the
handlers in the `Arrival`: nothing is converted twice and nothing travels in a global.

Records are keyed by the event object's identity and dropped when the handling ends; one the
handler never reaches (a failed dispatch) is dropped with the oldest ones once
`MAX_RECORDS` are kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pallas.onebot.events import ConvertedTurn
from pallas.onebot.lane_choice import LaneVerdict
from pallas.onebot.lanes import PriorityHold

MAX_RECORDS = 100_000


@dataclass(frozen=True, slots=True)
class ReadRecord:
    event: Any
    converted: ConvertedTurn | None  # None: not a group message, or not convertible
    verdict: LaneVerdict | None
    claim: PriorityHold | None  # an addressed message's hold on the loop


class EventReads:
    def __init__(self, max_records: int = MAX_RECORDS) -> None:
        self._records: dict[int, ReadRecord] = {}
        self._max = max_records

    def __len__(self) -> int:
        return len(self._records)

    def keep(self, record: ReadRecord) -> None:
        if len(self._records) >= self._max:  # events that never reached a handler
            del self._records[next(iter(self._records))]
        self._records[id(record.event)] = record

    def get(self, event: Any) -> ReadRecord | None:
        record = self._records.get(id(event))
        return record if record is not None and record.event is event else None

    def drop(self, event: Any) -> None:
        if self.get(event) is not None:
            del self._records[id(event)]


__all__ = ["MAX_RECORDS", "EventReads", "ReadRecord"]
