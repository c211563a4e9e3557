"""Whether the bot speaks: the command, a reply, the budget — pure decisions with reasons."""

from __future__ import annotations

from typing import Any

import pytest

from pallas.features.voice import (
    VoiceConfig,
    VoiceUsage,
    decide_command,
    decide_reply,
    parse_speak_command,
)

NAMES = ("帕拉斯", "牛牛")
ON = VoiceConfig.model_validate({"enabled": True, "daily_calls": 10, "daily_chars": 100})


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("牛牛说 你好", "你好"),
        ("牛牛说你好", None),  # a separator is required…
        ("牛牛说的对", None),  # …so talk about the bot is no command
        ("牛牛说得对啊", None),
        ("牛牛说\n你好", "你好"),
        ("帕拉斯说：晚安", "晚安"),
        ("  牛牛 说, 早", "早"),
        ("牛牛说", None),
        ("牛牛你说呢", None),
        ("他说牛牛说 你好", None),
        ("小明说 你好", None),
    ],
)
def test_parse_speak_command(line: str, said: str | None) -> None:
    assert parse_speak_command(line, NAMES) == said


NO_USE = VoiceUsage()


def _command(said: str, usage: VoiceUsage = NO_USE, *, admin: bool = False,
             config: VoiceConfig = ON, provider: bool = True) -> tuple[bool, str]:  # fmt: skip
    decision = decide_command(config, said, usage, is_admin=admin, has_provider=provider)
    return decision.speak, decision.reason


def test_command_spoken_with_the_cleaned_text() -> None:
    decision = decide_command(ON, "你好😀", VoiceUsage(), is_admin=False, has_provider=True)
    assert (decision.speak, decision.reason, decision.text) == (True, "command", "你好")


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        ({"config": VoiceConfig()}, "voice_off"),
        ({"provider": False}, "no_provider"),
        ({"config": ON.model_copy(update={"command": ON.command.model_copy(
            update={"who": "admins"})})}, "admins_only"),
        ({"usage": VoiceUsage(member_commands=5)}, "member_limit"),
        ({"usage": VoiceUsage(calls=10)}, "budget_calls"),
        ({"usage": VoiceUsage(chars=99)}, "budget_chars"),
    ],
)  # fmt: skip
def test_command_refusals(kwargs: dict[str, Any], reason: str) -> None:
    assert _command("你好", **kwargs) == (False, reason)


@pytest.mark.parametrize(
    ("said", "reason"),
    [
        ("你个傻逼", "blocked_word"),
        ("看 https://evil.example.com", "link"),
        ("```rm -rf /```", "code"),
        ("1. 一\n2. 二\n3. 三", "list"),
        ("啊" * 61, "too_long"),
        ("😀😀", "nothing_to_say"),
    ],
)
def test_command_refuses_what_must_not_be_spoken(said: str, reason: str) -> None:
    assert _command(said) == (False, reason)


def test_admins_pass_the_member_limit_but_not_the_budget() -> None:
    assert _command("你好", VoiceUsage(member_commands=99), admin=True) == (True, "command")
    assert _command("你好", VoiceUsage(calls=10), admin=True) == (False, "budget_calls")


REPLY = VoiceConfig.model_validate(
    {"enabled": True, "reply_to_voice": True, "reply_probability": 0.3, "reply_max_chars": 20}
)


@pytest.mark.parametrize(
    ("bubbles", "to_voice", "roll", "reason"),
    [
        (("好哦",), True, 0.99, "reply_to_voice"),
        (("好哦",), False, 0.1, "reply_chance"),
        (("好哦",), False, 0.5, "not_chosen"),
        (("好哦", "再见"), True, 0.0, "several_bubbles"),
        (("这是一段很长很长很长很长很长很长很长很长的回复",), True, 0.0, "too_long"),
        (("去 https://a.cn 看",), True, 0.0, "link"),
    ],
)
def test_reply_decisions(bubbles: tuple[str, ...], to_voice: bool, roll: float,
                         reason: str) -> None:  # fmt: skip
    decision = decide_reply(REPLY, bubbles, VoiceUsage(), to_voice=to_voice, roll=roll,
                            has_provider=True)  # fmt: skip
    assert decision.reason == reason
    assert decision.speak == (reason in ("reply_to_voice", "reply_chance"))


def test_reply_respects_the_switch_and_the_budget() -> None:
    off = decide_reply(VoiceConfig(), ("好",), VoiceUsage(), to_voice=True, roll=0.0,
                       has_provider=True)  # fmt: skip
    assert off.reason == "voice_off"
    budget = REPLY.model_copy(update={"daily_calls": 1})
    spent = decide_reply(budget, ("好",), VoiceUsage(calls=1), to_voice=True, roll=0.0,
                         has_provider=True)  # fmt: skip
    assert (spent.speak, spent.reason) == (False, "budget_calls")
