"""`TurnOutcome.outcome` is an enum whose string values are the ones logs and replays show."""

import json

import pytest

from pallas.routing.evaluate import RouteOutcome
from pallas.turn.contracts import TurnOutcome, TurnResult
from pallas.turn.parts.cost_exit import outcome_name


def test_every_routing_outcome_is_a_turn_result_with_the_same_value():
    for route in RouteOutcome:
        assert TurnResult(route.value) == route.value


@pytest.mark.parametrize("value", ["delivered", "partial", "silent", "stale", "cost_limited"])
def test_strings_are_converted_and_still_compare_and_serialise_as_before(value):
    outcome = TurnOutcome(value, "why")
    assert isinstance(outcome.outcome, TurnResult)
    assert outcome.outcome == value and f"{outcome.outcome}" == value
    assert json.dumps({"o": outcome.outcome}) == json.dumps({"o": value})


def test_cost_guard_outcome_names_are_turn_results():
    class Verdict:  # the three shapes `outcome_name` distinguishes
        def __init__(self, member, action):
            self.member, self.action = member, action

    class Member:
        allowed = False

    for verdict in (Verdict(Member(), ""), Verdict(None, "phrase"), Verdict(None, "drop")):
        assert TurnResult(outcome_name(verdict))
    assert TurnResult(outcome_name(Verdict(None, "degrade"))) is TurnResult.COST_DEGRADED


def test_an_unknown_outcome_is_refused():
    with pytest.raises(ValueError, match="unheard_of"):
        TurnOutcome("unheard_of", "")
