"""Member memory commands: what counts as "remember this about me" / "forget me", and what a
teaching says (the speaker's fact, a tie, the group's, somebody else's, a question)."""

from __future__ import annotations

import pytest

from pallas.features.memory_commands.teaching import (
    MemberCommand,
    Teaching,
    detect_member_command,
    is_question,
    read_teaching,
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
        ("记住 对芒果过敏", MemberCommand("teach", "对芒果过敏")),
        ("记得 我是做设计的", MemberCommand("teach", "我是做设计的")),
        # the bot's name called at the end is no part of the fact; joined to it, it is
        ("记住我喜欢猫，帕拉斯", MemberCommand("teach", "我喜欢猫")),
        ("记住 我在学吉他 牛牛~", MemberCommand("teach", "我在学吉他")),
        ("记住我最喜欢帕拉斯", MemberCommand("teach", "我最喜欢帕拉斯")),
        ("记住我家狗叫牛牛", MemberCommand("teach", "我家狗叫牛牛")),
        ("牛牛记住我在学吉他", MemberCommand("teach", "我在学吉他")),
        # a teaching-looking question is a recall with the question: answered, never stored
        ("记住我喜欢什么了吗？", MemberCommand("recall", "我喜欢什么了吗？")),
        ("你记得我是做哪行的吗", MemberCommand("recall", "我是做哪行的吗")),
        ("牛牛 你记得我是做哪行的", MemberCommand("recall", "我是做哪行的")),
        ("还记得我养的啥", MemberCommand("recall", "我养的啥")),
        ("还记得我家狗叫什么吗", MemberCommand("recall", "我家狗叫什么吗")),
        ("你记得我什么", MemberCommand("recall")),
        ("关于我你都知道些什么", MemberCommand("recall")),
        # not commands
        ("记得提醒我喝水", None),
        ("记得叫我起床", None),
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
        ("对芒果过敏", "TA对芒果过敏"),
        # not about the speaker: members cannot teach about others or the group
        ("群主最帅", None),
        ("小王喜欢狗", None),
        ("我们周五开黑", None),
        ("小王是我表哥", None),
    ],
)
def test_third_person_only_for_facts_about_the_speaker(text: str, fact: str | None) -> None:
    assert third_person(text) == fact


@pytest.mark.parametrize(
    "text, expected",
    [
        # subject-less: the speaker's own
        ("对芒果过敏", Teaching("self", "TA对芒果过敏", "no_subject")),
        ("家里狗子是只萨摩耶", Teaching("self", "TA家里狗子是只萨摩耶", "no_subject")),
        ("周三晚上固定打羽毛球", Teaching("self", "TA周三晚上固定打羽毛球", "no_subject")),
        ("高中在北京读的", Teaching("self", "TA高中在北京读的", "no_subject")),
        ("上周末帮表妹搬家", Teaching("self", "TA上周末帮表妹搬家", "no_subject")),
        # first person
        ("我喜欢猫", Teaching("self", "TA喜欢猫", "first_person")),
        ("叫我小明就行", Teaching("self", "叫TA小明就行", "first_person")),
        ("我女朋友叫小美", Teaching("self", "TA女朋友叫小美", "first_person")),
        # a tie of the speaker's: a relationship note about that person
        ("小王是我表哥", Teaching("relation", "小王是TA的表哥", "tie:表哥")),
        ("我表哥叫小王", Teaching("relation", "小王是TA的表哥", "tie:表哥")),
        ("阿杰是我的大学同学", Teaching("relation", "阿杰是TA的大学同学", "tie:大学同学")),
        ("我同事是老陈", Teaching("relation", "老陈是TA的同事", "tie:同事")),
        # somebody else: they must say it themselves
        ("群主最帅", Teaching("other", reason="about_someone_else")),
        ("小王喜欢狗", Teaching("other", reason="about_someone_else")),
        ("他是左撇子", Teaching("other", reason="about_someone_else")),
        ("王老师人很好", Teaching("other", reason="about_someone_else")),
        ("老张住海淀", Teaching("other", reason="about_someone_else")),
        # the group: admins only
        ("我们周五开黑", Teaching("group", "我们周五开黑", "about_group")),
        ("群里禁止刷屏", Teaching("group", "群里禁止刷屏", "about_group")),
        # a question is never a fact
        ("我喜欢什么？", Teaching("question", reason="question")),
        ("我是做哪行的吗", Teaching("question", reason="question")),
    ],
)
def test_read_teaching(text: str, expected: Teaching) -> None:
    assert read_teaching(text) == expected


@pytest.mark.parametrize(
    "text, asked, expected",
    [
        ("我喜欢什么？", False, True),
        ("我是做哪行的吗", False, True),
        ("我跟你说过我对芒果过敏了没", False, True),
        ("我是做哪行的", True, True),  # after 记得, a question word is a question
        ("我是做哪行的", False, False),
        ("我不知道什么是害怕", False, False),
        ("我喜欢猫", True, False),
    ],
)
def test_is_question(text: str, asked: bool, expected: bool) -> None:
    assert is_question(text, asked=asked) is expected


def test_strip_address_prefers_the_longest_alias() -> None:
    assert strip_address("帕拉斯酱，记住我", ("帕拉斯", "帕拉斯酱")) == "记住我"
    assert strip_address("  牛牛: 忘记我 ", ALIASES) == "忘记我"


def test_a_latin_name_is_called_in_any_case() -> None:
    aliases = ("Pallas", "帕拉斯")
    for call in ("Pallas，", "pallas ", "PALLAS:"):
        assert detect_member_command(f"{call}记住我喜欢猫", aliases) == MemberCommand(
            "teach", "我喜欢猫"
        )
