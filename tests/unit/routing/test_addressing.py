"""`Addressing`: every name the bot answers to, one rule for routing, tools, commands, replay."""

from __future__ import annotations

from pallas.config import GroupConfig
from pallas.features.persona.pack import PersonaPack
from pallas.turn.parts.addressing import Addressing


def _config(extra: list[str]) -> GroupConfig:
    return GroupConfig.model_validate({"routing": {"triggers": {"extra_aliases": extra}}})


def test_routing_names_are_persona_then_nickname_without_duplicates() -> None:
    persona = PersonaPack(name="帕拉斯", aliases=["帕拉斯", "牛牛"])
    names = Addressing(nicknames=("牛牛", "Pallas")).routing_aliases(persona)
    assert names == ("帕拉斯", "牛牛", "Pallas")


def test_the_persona_name_counts_even_when_the_aliases_leave_it_out() -> None:
    persona = PersonaPack(name="帕拉斯", aliases=["牛牛"])
    assert "帕拉斯" in Addressing().routing_aliases(persona)


def test_extra_aliases_reach_tools_and_commands_but_routing_adds_them_itself() -> None:
    persona = PersonaPack(name="帕拉斯", aliases=["牛牛"])
    config = _config(["小帕"])
    addressing = Addressing()
    assert "小帕" in addressing.aliases(persona, config)
    assert "小帕" not in addressing.routing_aliases(persona)  # detect_trigger appends them


def test_a_disabled_group_keeps_its_names() -> None:
    persona = PersonaPack(name="帕拉斯", aliases=["牛牛"])
    config = _config(["小帕"]).model_copy(update={"enabled": False})
    assert "小帕" in Addressing().aliases(persona, config)
