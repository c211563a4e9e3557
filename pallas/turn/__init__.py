"""The spine: what happens to one group message, one module per step, in order.

    1 intake     context.py    `TurnContext`: the message (converted once at the edge), where
                               answers go, its hold on the event loop, how it waits
    2 route      route.py      `RouteStep`: the line noted, freshness, tool plan, rules-only
                               routing → PASS phrase · merge · retry · silence · a REPLY turn
    3 admit      admit.py      `AdmitStep`: the group's slot, freshness after the queue, the
                               cost guard → `ReplyTurn`
    4 prepare    prepare.py    `PrepareStep`: merge wait, rows, retrieval, tool → the request
    5 call       call.py       `CallStep`: the one model call (the hold ends as it goes out)
    6 answer     answer.py     `read_answer`: svar tags, output rules, bubbles, output guard
    7 deliver    deliver.py    `DeliverStep`: quote, sticker, paced bubbles
    8 remember   remember.py   `TurnRecorder`: snapshot, session exchange, after-turn hooks

`service.py` runs them (`ChatTurnService`: read it top to bottom); `contracts.py` holds the
values passed between them. `parts/` holds what the steps use and nothing else does: merges,
addressing, the turn's extras (svars, kb, attachments), the prompt inputs, vision, bubble
parsing and pacing, the output guard, the bot reply context, the cost exit, the group preload.
"""

from pallas.core.turn import AfterTurnHook, CompletedTurn
from pallas.turn.context import NO_HOLD, LoopHold, Pause, Sleep, TurnContext
from pallas.turn.contracts import PhraseSource, ReplyTurn, TurnOutcome, TurnResult
from pallas.turn.route import NextStep, RoutedTurn, RouteStep
from pallas.turn.service import ChatTurnService

__all__ = [
    "NO_HOLD",
    "AfterTurnHook",
    "ChatTurnService",
    "CompletedTurn",
    "LoopHold",
    "NextStep",
    "Pause",
    "PhraseSource",
    "ReplyTurn",
    "RouteStep",
    "RoutedTurn",
    "Sleep",
    "TurnContext",
    "TurnOutcome",
    "TurnResult",
]
