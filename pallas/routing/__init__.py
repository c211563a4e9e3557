"""Routing: from a group message to a decision, with zero LLM calls.

triggers → reply_gate → cooldown / disabled → reply_necessity → decide_current_turn
(REPLY | QUOTE | FOLLOW_UP | TOOL | PASS) → low_engagement for PASS. Every stage is a pure
function returning a frozen result with a reason; `Router` owns the StateStore I/O.
"""

from pallas.routing.ambient_stake import StakeKeys
from pallas.routing.config import RoutingConfig
from pallas.routing.current_turn_decision import (
    CurrentTurnAction,
    CurrentTurnDecision,
    CurrentTurnDecisionInput,
    DeliveryStyle,
    decide_current_turn_by_rule,
)
from pallas.routing.evaluate import RouteExtras, RouteOutcome, RouteResult, evaluate_route
from pallas.routing.route_state import RouteState
from pallas.routing.router import Router
from pallas.routing.text_signals import SocialAction
from pallas.routing.triggers import TriggerKind

__all__ = [
    "CurrentTurnAction",
    "CurrentTurnDecision",
    "CurrentTurnDecisionInput",
    "DeliveryStyle",
    "RouteExtras",
    "RouteOutcome",
    "RouteResult",
    "RouteState",
    "Router",
    "RoutingConfig",
    "SocialAction",
    "StakeKeys",
    "TriggerKind",
    "decide_current_turn_by_rule",
    "evaluate_route",
]
