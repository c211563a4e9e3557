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
values passed between them. `parts/` is private to this package: what the steps use — merges,
addressing, the turn's extras (svars, kb, attachments), the prompt inputs, vision, bubble
parsing and pacing, the output guard, the bot reply context, the cost exit. The parts the
composition root builds and hands to the steps (and the chat pipeline the console previews)
are re-exported below; nothing outside `pallas/turn/` imports `pallas.turn.parts`
(`pallas deps --check` refuses it), so a part can move or split without touching anyone else.
"""

from pallas.core.turn import AfterTurnHook, CompletedTurn
from pallas.turn.context import NO_HOLD, LoopHold, Pause, Sleep, TurnContext
from pallas.turn.contracts import PhraseSource, ReplyTurn, TurnOutcome, TurnResult
from pallas.turn.parts.accounts import AnswerClaims
from pallas.turn.parts.addressing import Addressing
from pallas.turn.parts.chat_pipeline import build_chat_pipeline
from pallas.turn.parts.cost_exit import outcome_name
from pallas.turn.parts.extras import TurnExtras
from pallas.turn.parts.known_stakes import KnownStakes
from pallas.turn.parts.merges import TurnMerges
from pallas.turn.parts.output_guard import guard_answer, protected_text
from pallas.turn.parts.tool_loop import ModelTools
from pallas.turn.parts.vision import QuotedMessageFetcher
from pallas.turn.route import NextStep, RoutedTurn, RouteStep
from pallas.turn.service import ChatTurnService

__all__ = [
    "NO_HOLD",
    "Addressing",
    "AfterTurnHook",
    "AnswerClaims",
    "ChatTurnService",
    "CompletedTurn",
    "KnownStakes",
    "LoopHold",
    "ModelTools",
    "NextStep",
    "Pause",
    "PhraseSource",
    "QuotedMessageFetcher",
    "ReplyTurn",
    "RouteStep",
    "RoutedTurn",
    "Sleep",
    "TurnContext",
    "TurnExtras",
    "TurnMerges",
    "TurnOutcome",
    "TurnResult",
    "build_chat_pipeline",
    "guard_answer",
    "outcome_name",
    "protected_text",
]
