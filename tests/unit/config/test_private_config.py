"""What a private turn runs on: the defaults, shaped so that group id 0 — every private chat —
shares nothing between users, with the private chats' own daily budget."""

from __future__ import annotations

from pallas.config import GroupConfig, TurnConfigs

DEFAULTS = GroupConfig.model_validate(
    {
        "private": {"budget": {"chat_calls": 20}},
        "cost": {"budget": {"chat_calls": 600}},
        "svars": {
            "variables": [
                {"name": "hp", "type": "int", "default": 100, "scope": "group"},
                {"name": "mood", "type": "str", "default": "平静", "scope": "member"},
            ]
        },
    }
)


def test_a_private_turn_has_the_private_budget_and_nothing_shared_between_users() -> None:
    private = DEFAULTS.for_private_chat()
    assert private.cost.budget.chat_calls == 20  # [private.budget], not a group's
    assert private.cost.member == DEFAULTS.cost.member  # the same member limit
    assert [v.name for v in private.svars.variables] == ["mood"]  # per user only
    assert "activity" not in private.tools.allowed  # it would list other users' DMs
    assert "dice" in private.tools.allowed
    assert private.persona == DEFAULTS.persona and private.chat == DEFAULTS.chat


def test_turn_configs_shape_group_zero_only_and_once_per_reload() -> None:
    group = GroupConfig()
    configs = TurnConfigs(lambda group_id: DEFAULTS if group_id == 0 else group)
    assert configs(123) is group
    first = configs(0)
    assert first.cost.budget.chat_calls == 20
    assert configs(0) is first  # rebuilt only when the defaults object changes
