"""Routing: from a group message to a decision, with zero LLM calls.

triggers → reply_gate → cooldown / disabled → reply_necessity → decide_current_turn
(REPLY | QUOTE | FOLLOW_UP | TOOL | PASS) → low_engagement for PASS. Every stage is a pure
function returning a frozen result with a reason; `RoutingEngine` owns the StateStore I/O.
"""

from pallas.product.llm.routing.config import RoutingConfig
from pallas.product.llm.routing.current_turn_decision import (
    CurrentTurnAction,
    CurrentTurnDecision,
    CurrentTurnDecisionInput,
    DeliveryStyle,
    decide_current_turn_by_rule,
)
from pallas.product.llm.routing.route_pipeline import (
    RouteExtras,
    RouteOutcome,
    RouteResult,
    evaluate_route,
)
from pallas.product.llm.routing.route_state import RouteState
from pallas.product.llm.routing.router import RoutingEngine
from pallas.product.llm.routing.text_signals import SocialAction
from pallas.product.llm.routing.triggers import TriggerKind

__all__ = [
    "CurrentTurnAction",
    "CurrentTurnDecision",
    "CurrentTurnDecisionInput",
    "DeliveryStyle",
    "RouteExtras",
    "RouteOutcome",
    "RouteResult",
    "RouteState",
    "RoutingConfig",
    "RoutingEngine",
    "SocialAction",
    "TriggerKind",
    "decide_current_turn_by_rule",
    "evaluate_route",
]
