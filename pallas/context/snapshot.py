"""`TurnSnapshot`: the injection snapshot of one REPLY turn as a typed record.

Built before the LLM call from the assembled request (`analyzer.build_snapshot`); the reply
step adds the later fields (`dataclasses.replace`, from its typed records) as the turn goes
on. `to_dict()` is the JSON that is stored and that `pallas context --json`, `/pallas context`
and the web console read: the always-present keys first, then each later key once it is set,
in the order the turn sets them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Final

JsonDict = dict[str, Any]


@dataclass(frozen=True, slots=True)
class TurnSnapshot:
    # known before the LLM call
    decision: JsonDict
    sections: list[JsonDict]
    messages: list[JsonDict]
    budget: JsonDict  # {} when no budget ran
    pipeline: list[JsonDict]
    retrieval: JsonDict
    stage_ms: dict[str, float]
    processor_traces: JsonDict  # `trace.<processor id>` values from the draft's meta
    request: list[JsonDict]  # replaced by the vision step's image-safe copy
    warnings: list[str]
    rules: JsonDict  # regex hits, worldbook placements / drops, macros, injections
    # set as the turn goes on (omitted from the JSON while None)
    tool: JsonDict | None = None
    merge_wait: JsonDict | None = None
    cost: JsonDict | None = None
    vision: JsonDict | None = None
    usage: JsonDict | None = None
    response: str | None = None
    output_regex: list[JsonDict] | None = None  # output-stage regex hits
    bubbles: list[str] | None = None
    parse: JsonDict | None = None
    sent_message_ids: list[int] | None = None
    svars: JsonDict | None = None
    extra: JsonDict = field(default_factory=dict)  # keys a later stage adds (kept last)

    def to_dict(self) -> JsonDict:
        out: JsonDict = {}
        for f in fields(self):
            if f.name == "extra":
                continue
            value = getattr(self, f.name)
            if f.name in ALWAYS_PRESENT or value is not None:
                out[f.name] = value
        out.update(self.extra)
        return out


ALWAYS_PRESENT: Final = frozenset(
    {
        "decision",
        "sections",
        "messages",
        "budget",
        "pipeline",
        "retrieval",
        "stage_ms",
        "processor_traces",
        "request",
        "warnings",
        "rules",
    }
)
