"""A development set for member recall (issue #47) of questions that name a thing as their
frame, not as what they ask: "我老家离成都远吗", "我以前喝咖啡，现在改喝什么了", "我在上海的时候
住哪个区" — the question names an instance of a class (a place, a drink, a food, a device, an
exam), and the fact that answers it may name another one. The instance veto assumes the
instance a question names is what it asks about; these 24 facts measure what that assumption
costs, and 12 never-said questions what it saves. Written on 2026-12-07, after the fourth dev
set (`_member_recall_extra3`) grew the instance lists and before any rule was changed for it.
Development data.

The distractors are the development half's (`_member_recall_data.DISTRACTORS`).
"""

from __future__ import annotations

from benchmarks._member_recall_data import DISTRACTORS as DISTRACTORS
from benchmarks._member_recall_shape import MemberFact, NegativeControl

WRITTEN_ON = "2026-12-07"

F = MemberFact

# fmt: off
FACTS: tuple[MemberFact, ...] = (
    # member 19: a sales manager who moved from Chongqing to Shenzhen
    F(19, "我老家在重庆江北", "我老家离成都远吗？", "重庆江北", "paraphrase"),
    F(19, "我大学毕业后从武汉搬到了深圳", "我来深圳之前在哪个城市？", "武汉", "paraphrase"),
    F(19, "我以前天天喝咖啡，现在改喝乌龙茶了", "我现在还喝咖啡吗？", "乌龙茶", "direct"),
    F(19, "我出差去上海一般住在静安", "我在上海出差住哪一块？", "静安", "direct"),
    F(19, "我最爱的饮料是冰可乐", "我最爱喝的是奶茶吗？", "冰可乐", "paraphrase"),
    F(19, "我手机坏了以后一直用平板看视频", "我手机坏了以后用什么看视频？", "平板", "direct"),
    F(19, "我考完驾照之后又去考了教资", "我考完驾照又考了什么？", "教资", "direct"),
    F(19, "我小时候在广州外婆家长大", "我是在深圳长大的吗？", "广州外婆家", "paraphrase"),
    F(19, "我吃火锅过敏，只能吃烧烤", "我吃火锅会怎么样？", "过敏", "direct"),
    F(19, "我去日本玩的时候最喜欢大阪", "我在日本最喜欢哪个城市？", "大阪", "direct"),
    F(19, "我的笔记本是用来剪视频的", "我拿电脑干什么？", "剪视频", "paraphrase"),
    F(19, "我老婆是湖南长沙人", "我老婆是四川人吗？", "长沙", "paraphrase"),
    # member 20: a postgraduate student in Nanjing who grew up in Hebei
    F(20, "我本科在西安读的，研究生来了南京", "我读研之前在哪读的书？", "西安", "paraphrase"),
    F(20, "我老家在石家庄", "我是不是北京人？", "石家庄", "paraphrase"),
    F(20, "我不喝牛奶，早上只喝豆浆", "我早餐喝牛奶吗？", "豆浆", "direct"),
    F(20, "我对芒果过敏，但是榴莲随便吃", "我能吃榴莲吗？", "榴莲随便吃", "direct"),
    F(20, "我雅思没考过，后来改考托福了", "我雅思后来怎么样了？", "改考托福", "direct"),
    F(20, "我最讨厌吃香菜，但是葱姜蒜都行", "我吃葱吗？", "葱姜蒜", "direct"),
    F(20, "我暑假在杭州实习", "我暑假是不是在上海实习？", "杭州", "paraphrase"),
    F(20, "我用iPad记笔记", "我上课用手机记笔记吗？", "iPad", "paraphrase"),
    F(20, "我爸爱喝白酒，我只喝啤酒", "我喝白酒吗？", "啤酒", "direct"),
    F(20, "我从小听外婆唱黄梅戏", "我外婆爱唱京剧吗？", "黄梅戏", "paraphrase"),
    F(20, "我养的是一只橘猫，不是狗", "我养的是狗吗？", "橘猫", "direct"),
    F(20, "我早饭吃包子，午饭吃米粉", "我午饭吃包子吗？", "米粉", "direct"),
)

NEGATIVES: tuple[NegativeControl, ...] = (
    NegativeControl(19, "我去过韩国吗？"),
    NegativeControl(19, "我喜欢吃寿司吗？"),
    NegativeControl(19, "我会不会弹吉他？"),
    NegativeControl(19, "我在成都住过吗？"),
    NegativeControl(19, "我考过雅思吗？"),
    NegativeControl(19, "我用什么牌子的耳机？"),
    NegativeControl(20, "我在北京实习过吗？"),
    NegativeControl(20, "我爱喝咖啡吗？"),
    NegativeControl(20, "我会说粤语吗？"),
    NegativeControl(20, "我吃花生过敏吗？"),
    NegativeControl(20, "我是不是玩原神？"),
    NegativeControl(20, "我喜欢吃火锅吗？"),
)
# fmt: on
