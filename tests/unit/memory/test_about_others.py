"""Whose fact a teaching states (issue 47 item 4): a table of teachings decides it.

The speaker is 10001 ("咸鱼本鱼" here); the group's recent speakers are 大橘子 (20002),
"【管理】夜航船" (20003) and Lucky (20004).
"""

from __future__ import annotations

import pytest

from pallas.features.memory_commands.about_others import GroupNames, name_forms, subject_of
from pallas.features.memory_commands.teaching import read_teaching

MEMBERS = [(20002, "大橘子"), (20003, "【管理】夜航船"), (20004, "Lucky"), (10001, "咸鱼本鱼")]
NAMES = GroupNames.of(10001, ["咸鱼本鱼"], MEMBERS)

SELF, OTHER = "self", "other"


@pytest.mark.parametrize(
    "text, kind, fact",
    [
        # the speaker's own facts, with 我
        ("我的血型是O型", SELF, "TA的血型是O型"),
        ("我每天走一万步", SELF, "TA每天走一万步"),
        ("俺不吃香菜", SELF, "TA不吃香菜"),
        ("叫我小明就行", SELF, "叫TA小明就行"),
        ("我的QQ号是12345678", SELF, "TA的QQ号是12345678"),
        ("我和张伟是高中同学", SELF, "TA和张伟是高中同学"),
        ("我最喜欢的歌手是周杰伦", SELF, "TA最喜欢的歌手是周杰伦"),
        # ... and without 我
        ("对芒果过敏", SELF, "TA对芒果过敏"),
        ("周末喜欢去爬山", SELF, "TA周末喜欢去爬山"),
        ("高铁通勤一小时", SELF, "TA高铁通勤一小时"),
        ("杨梅吃多了会过敏", SELF, "TA杨梅吃多了会过敏"),
        ("马拉松跑过三次", SELF, "TA马拉松跑过三次"),
        ("黄金段位卡了一个月", SELF, "TA黄金段位卡了一个月"),
        ("白羊座", SELF, "TA白羊座"),
        ("每天8000步", SELF, "TA每天8000步"),
        ("520是我的幸运数字", SELF, "520是TA的幸运数字"),
        ("123456是我的幸运数字", SELF, "123456是TA的幸运数字"),
        ("易胖体质", SELF, "TA易胖体质"),
        ("唐诗背了三百首", SELF, "TA唐诗背了三百首"),
        # the speaker's own card or id as the subject
        ("咸鱼本鱼喜欢猫", SELF, "TA喜欢猫"),
        ("10001的生日是五月三号", SELF, "TA的生日是五月三号"),
        # the speaker's opinion of someone, or something they did with them
        ("我觉得老王人不错", SELF, "TA觉得老王人不错"),
        ("老王人不错，我觉得", SELF, "老王人不错，TA觉得"),
        ("在我看来张伟挺靠谱的", SELF, "在TA看来张伟挺靠谱的"),
        ("我认为大橘子是个好人", SELF, "TA认为大橘子是个好人"),
        ("老王和我是同学", SELF, "老王和TA是同学"),
        ("张伟跟我一起学过吉他", SELF, "张伟跟TA一起学过吉他"),
        ("张伟是我的偶像", "relation", "张伟是TA的偶像"),
        # another member by the card they go by here
        ("大橘子欠钱不还", OTHER, ""),
        ("大橘子的手机号是13800000000", OTHER, ""),
        ("夜航船是个骗子", OTHER, ""),
        ("【管理】夜航船住在朝阳", OTHER, ""),
        ("Lucky喜欢猫", OTHER, ""),
        ("大橘子，在腾讯上班", OTHER, ""),
        # a QQ id
        ("12345678的密码是abc123", OTHER, ""),
        ("QQ12345678欠我钱", OTHER, ""),
        ("20002是个骗子", OTHER, ""),
        ("87654321喜欢女装", OTHER, ""),
        ("20004的生日是五月三号", OTHER, ""),
        # a bare name
        ("张伟欠钱不还", OTHER, ""),
        ("李雷的密码是abc123", OTHER, ""),
        ("韩梅梅住在隔壁", OTHER, ""),
        ("欧阳娜娜很漂亮", OTHER, ""),
        ("刘洋考研失败了", OTHER, ""),
        ("陈晨怀孕了", OTHER, ""),
        ("王芳是个好人", OTHER, ""),
        ("马云很有钱", OTHER, ""),
        # the forms refused before (a pronoun, 小X / 老X, @, a title)
        ("他是左撇子", OTHER, ""),
        ("她的生日是五月三号", OTHER, ""),
        ("小王喜欢狗", OTHER, ""),
        ("老张住海淀", OTHER, ""),
        ("老王欠我钱", OTHER, ""),
        ("@咸鱼 喜欢猫", OTHER, ""),
        ("王老师人很好", OTHER, ""),
    ],
)
def test_whose_fact_a_teaching_states(text: str, kind: str, fact: str) -> None:
    teaching = read_teaching(text, NAMES)
    assert (teaching.kind, teaching.fact) == (kind, fact), teaching.reason


@pytest.mark.parametrize(
    "text, reason",
    [
        ("大橘子欠钱不还", "group_name"),
        ("12345678的密码是abc123", "qq_id"),
        ("张伟欠钱不还", "bare_name"),
        ("我觉得老王人不错", "first_person"),
        ("老王人不错，我觉得", "opinion"),
        ("咸鱼本鱼喜欢猫", "own_name"),
        ("对芒果过敏", ""),
    ],
)
def test_the_reason_names_the_form(text: str, reason: str) -> None:
    assert subject_of(text, NAMES).reason == reason


def test_without_the_group_names_a_card_is_no_name() -> None:
    """Cards are only known from the group: without them a card reads as the speaker's fact."""
    assert read_teaching("大橘子欠钱不还").kind == "self"
    assert read_teaching("大橘子欠钱不还", NAMES).kind == "other"


def test_a_card_as_common_word_needs_a_person_after_it() -> None:
    names = GroupNames.of(1, [], [(2, "学生")])
    assert read_teaching("学生时代当过班长", names).kind == "self"
    assert read_teaching("学生是个骗子", names).kind == "other"


@pytest.mark.parametrize(
    "raw, forms",
    [("【管理】夜航船", ("【管理】夜航船", "夜航船")), ("Lucky", ("Lucky",)), ("猫", ())],
)
def test_name_forms(raw: str, forms: tuple[str, ...]) -> None:
    assert name_forms(raw) == forms
