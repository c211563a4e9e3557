"""A development set for member recall (issue #47) of names: how members tell the name of
themselves, their people and their pets ("我家狗叫豆豆", "我老公姓李", "大家都喊它大橘",
"我对象是小王", "我儿子乐乐今年上一年级", "我的游戏ID是星辰大海"), asked with 叫什么 / 什么名字,
and 8 never-said name questions next to a told person or pet. Half of the facts tell the name
with no naming word (叫, 名, 姓 …): the set measures what a rule reading such words would cost.
Written on 2026-12-07 before any rule for name questions. Development data.

The distractors are the development half's (`_member_recall_data.DISTRACTORS`).
"""

from __future__ import annotations

from benchmarks._member_recall_data import DISTRACTORS as DISTRACTORS
from benchmarks._member_recall_shape import MemberFact, NegativeControl

WRITTEN_ON = "2026-12-07"

F = MemberFact

# fmt: off
FACTS: tuple[MemberFact, ...] = (
    # member 21: a mother of two in Hefei
    F(21, "我家狗叫豆豆，是只泰迪", "我家狗叫啥来着？", "豆豆", "direct"),
    F(21, "我老公姓李，在电力局上班", "我老公叫什么？", "姓李", "paraphrase"),
    F(21, "我儿子乐乐今年上一年级", "我儿子叫什么名字？", "乐乐", "paraphrase"),
    F(21, "我闺女的英文名是Lily", "我闺女英文名叫什么？", "Lily", "direct"),
    F(21, "我妈是王秀英，在老家带孙子", "我妈叫什么名字？", "王秀英", "paraphrase"),
    F(21, "我的微信昵称是小太阳", "我微信上叫什么？", "小太阳", "paraphrase"),
    # member 22: a game streamer in Xiamen
    F(22, "我的游戏ID是星辰大海", "我在游戏里叫什么？", "星辰大海", "paraphrase"),
    F(22, "我的猫是只橘猫，大家都喊它大橘", "我的猫叫什么名字？", "大橘", "paraphrase"),
    F(22, "我女朋友是小林，在鼓浪屿开民宿", "我女朋友叫啥？", "小林", "paraphrase"),
    F(22, "我直播间的粉丝叫星星", "我的粉丝叫什么？", "星星", "direct"),
    F(22, "我家仓鼠取名叫奶盖", "我的仓鼠叫什么？", "奶盖", "direct"),
    F(22, "我最好的兄弟阿杰在做外贸", "我最好的兄弟叫什么？", "阿杰", "paraphrase"),
)

NEGATIVES: tuple[NegativeControl, ...] = (
    NegativeControl(21, "我老公的名字是什么？"),  # only the surname was told
    NegativeControl(21, "我女儿的中文名叫什么？"),
    NegativeControl(21, "我婆婆叫什么？"),
    NegativeControl(21, "我家猫叫什么？"),
    NegativeControl(22, "我的狗叫什么名字？"),
    NegativeControl(22, "我的民宿叫什么？"),
    NegativeControl(22, "我的直播间叫什么名字？"),
    NegativeControl(22, "我妈叫什么？"),
)
# fmt: on
