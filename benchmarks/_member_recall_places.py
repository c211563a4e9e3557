"""A development set for member recall (issue #47) of yes-or-no questions about places, whose
facts name the place by a town, a district or a landmark the concept table does not list
("我是不是在杭州上班" → "TA在滨江的一家互联网公司上班"), and 6 never-said place questions. Written
on 2026-12-07 before the place instances counted in yes-or-no questions were kept, to measure
what they would cost where the list runs out. Development data.

The distractors are the development half's (`_member_recall_data.DISTRACTORS`).
"""

from __future__ import annotations

from benchmarks._member_recall_data import DISTRACTORS as DISTRACTORS
from benchmarks._member_recall_shape import MemberFact, NegativeControl

WRITTEN_ON = "2026-12-07"

F = MemberFact

# fmt: off
FACTS: tuple[MemberFact, ...] = (
    # member 23: a programmer who grew up in Guangxi and works in Hangzhou
    F(23, "我在滨江的一家互联网公司上班", "我是不是在杭州上班？", "滨江", "category"),
    F(23, "我老家在桂林阳朔", "我是广西人吗？", "阳朔", "category"),
    F(23, "我大学在珞珈山下读的", "我是在武汉读的大学吗？", "珞珈山", "paraphrase"),
    F(23, "我去年国庆去了趟九寨沟", "我去过四川吗？", "九寨沟", "category"),
    F(23, "我周末常去西溪湿地跑步", "我周末是不是在杭州跑步？", "西溪湿地", "paraphrase"),
    F(23, "我女朋友在义乌做外贸", "我女朋友是不是在浙江工作？", "义乌", "category"),
    # member 24: a retired teacher in the north-east
    F(24, "我退休后搬到了威海养老", "我是不是住在山东？", "威海", "category"),
    F(24, "我年轻时在漠河当过老师", "我在黑龙江待过吗？", "漠河", "category"),
    F(24, "我儿子在中关村上班", "我儿子是在北京工作吗？", "中关村", "paraphrase"),
    F(24, "我每年冬天去西双版纳过冬", "我冬天是不是去云南？", "西双版纳", "category"),
)

NEGATIVES: tuple[NegativeControl, ...] = (
    NegativeControl(23, "我去过新疆吗？"),
    NegativeControl(23, "我是不是在上海住过？"),
    NegativeControl(23, "我去过日本吗？"),
    NegativeControl(24, "我去过海南吗？"),
    NegativeControl(24, "我是不是在广州工作过？"),
    NegativeControl(24, "我女儿是不是在深圳？"),
)
# fmt: on
