"""Member memory commands: what counts as "remember this about me" / "forget me"."""

from __future__ import annotations

import pytest

from pallas.features.memory.teaching import (
    MemberCommand,
    detect_member_command,
    strip_address,
    third_person,
)

ALIASES = ("帕拉斯", "牛牛")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("记住 我喜欢猫", MemberCommand("teach", "我喜欢猫")),
        ("记住：我喜欢猫", MemberCommand("teach", "我喜欢猫")),
        ("帕拉斯，记住叫我小明就行", MemberCommand("teach", "叫我小明就行")),
        ("请帮我记住我的生日是5月3日。", MemberCommand("teach", "我的生日是5月3日")),
        ("记下：我在学吉他", MemberCommand("teach", "我在学吉他")),
        ("忘记我", MemberCommand("forget")),
        ("牛牛 忘掉关于我的事", MemberCommand("forget")),
        ("忘记关于我的一切吧！", MemberCommand("forget")),
        ("把我忘了吧", MemberCommand("forget")),
        ("删除我的信息", MemberCommand("forget")),
        # not commands
        ("记住我喜欢什么了吗？", None),
        ("记住了吗", None),
        ("记住了", None),
        ("你忘了我吗", None),
        ("别忘了我", None),
        ("忘了我昨天说啥", None),
        ("我喜欢猫", None),
        ("今天记住了三个单词", None),
        ("", None),
    ],
)
def test_detect_member_command(text: str, expected: MemberCommand | None) -> None:
    assert detect_member_command(text, ALIASES) == expected


@pytest.mark.parametrize(
    "text, fact",
    [
        ("我喜欢猫", "TA喜欢猫"),
        ("我的生日是5月3日", "TA的生日是5月3日"),
        ("叫我小明就行", "叫TA小明就行"),
        ("俺不吃香菜", "TA不吃香菜"),
        # not about the speaker: refused, members cannot teach about others or the group
        ("群主最帅", None),
        ("小王喜欢狗", None),
        ("我们周五开黑", None),
        ("大家都叫我老大", None),
    ],
)
def test_third_person_only_for_facts_about_the_speaker(text: str, fact: str | None) -> None:
    assert third_person(text) == fact


def test_strip_address_prefers_the_longest_alias() -> None:
    assert strip_address("帕拉斯酱，记住我", ("帕拉斯", "帕拉斯酱")) == "记住我"
    assert strip_address("  牛牛: 忘记我 ", ALIASES) == "忘记我"
