"""A third development set for the person-facts gate (issue #47): three more members, their
facts asked in other words, and questions about things they never said — many of them near a
topic the member did talk about (a girlfriend, never a wife; sons, never a daughter; a job in
a milk-tea shop, never a favourite tea). Written on 2026-12-07, before any change of that day,
because the development half's negatives were 26 of 27 empty while each frozen half left 55–79 %
empty: the dev negatives had been read while the vetoes were built, so they could no longer
say whether a rule generalises. Development data: read its misses, change the product, then
measure the frozen halves once.

The distractors are the development half's (`_member_recall_data.DISTRACTORS`).
"""

from __future__ import annotations

from benchmarks._member_recall_data import DISTRACTORS as DISTRACTORS
from benchmarks._member_recall_shape import MemberFact, NegativeControl

WRITTEN_ON = "2026-12-07"

F = MemberFact

# fmt: off
FACTS: tuple[MemberFact, ...] = (
    # member 10: a programmer in Shenzhen, from Hunan
    F(10, "我在深圳南山一家公司写代码", "我在哪个城市工作？", "深圳", "paraphrase"),
    F(10, "我每周跑三次步，每次五公里", "我一般跑多远？", "五公里", "paraphrase"),
    F(10, "我租的房子一个月四千五", "我房租多少钱？", "四千五", "direct"),
    F(10, "我最常用的编程语言是Go", "我主要写哪种语言？", "Go", "paraphrase"),
    F(10, "我在出租屋里养了三只仓鼠", "我养了什么小动物？", "仓鼠", "category"),
    F(10, "我对猫毛过敏", "我对什么东西过敏？", "猫毛", "direct"),
    F(10, "我老家在湖南衡阳", "我老家是哪的？", "衡阳", "paraphrase"),
    F(10, "我每天喝三杯美式", "我一天喝几杯咖啡？", "三杯", "paraphrase"),
    F(10, "我周末喜欢去爬梧桐山", "我周末常去哪座山？", "梧桐山", "direct"),
    F(10, "我玩了五年的英雄联盟", "我玩什么网游？", "英雄联盟", "category"),
    F(10, "我女朋友是做UI设计的", "我对象干什么工作？", "UI设计", "paraphrase"),
    F(10, "我下个月要去日本旅游", "我最近有什么出行计划？", "日本", "paraphrase"),
    # member 11: a shopkeeper and farmer in a Sichuan town, in his fifties
    F(11, "我在镇上开了个小卖部", "我做什么营生？", "小卖部", "category"),
    F(11, "我种了两亩柑橘", "我地里种的啥？", "柑橘", "category"),
    F(11, "我有两个儿子，都在外面打工", "我家有几个娃？", "两个儿子", "paraphrase"),
    F(11, "我每天晚上喝二两白酒", "我晚上爱喝点啥？", "白酒", "paraphrase"),
    F(11, "我腿有风湿，下雨天就疼", "我哪里不舒服？", "风湿", "category"),
    F(11, "我最爱吃回锅肉", "我最喜欢哪道菜？", "回锅肉", "category"),
    F(11, "我会打川牌", "我平时玩什么牌？", "川牌", "direct"),
    F(11, "我住在乐山的一个镇上", "我住在四川哪里？", "乐山", "direct"),
    F(11, "我骑摩托车去赶集", "我赶集怎么去？", "摩托车", "paraphrase"),
    F(11, "我养了十几只鸡", "我家养了什么家禽？", "十几只鸡", "category"),
    F(11, "我今年五十二岁", "我多大年纪了？", "五十二", "paraphrase"),
    F(11, "我爱听川剧", "我喜欢听什么戏？", "川剧", "category"),
    # member 12: a medical student in Xi'an, from Gansu
    F(12, "我在西安读临床医学", "我大学念的啥专业？", "临床医学", "direct"),
    F(12, "我正在准备考研", "我最近在忙着考什么？", "考研", "paraphrase"),
    F(12, "我每天背一百个单词", "我每天记多少个单词？", "一百个", "direct"),
    F(12, "我最喜欢的作家是余华", "我爱看谁写的书？", "余华", "paraphrase"),
    F(12, "我宿舍住六个人", "我寝室几个人？", "六个人", "paraphrase"),
    F(12, "我一口香菜都不碰", "我有什么忌口？", "香菜", "category"),
    F(12, "我低血糖，包里常备糖", "我有什么身体问题？", "低血糖", "category"),
    F(12, "我在学吉他", "我最近在学什么乐器？", "吉他", "category"),
    F(12, "我老家是甘肃天水的", "我是哪儿的人？", "天水", "paraphrase"),
    F(12, "我最爱吃肉夹馍", "我最爱的小吃是什么？", "肉夹馍", "category"),
    F(12, "我周末在奶茶店兼职", "我周末打什么工？", "奶茶店", "paraphrase"),
    F(12, "我养了一盆多肉", "我养了什么植物？", "多肉", "category"),
)

NEGATIVES: tuple[NegativeControl, ...] = (
    NegativeControl(10, "我说过我开什么车吗？"),
    NegativeControl(10, "你还记得我的狗叫什么吗"),
    NegativeControl(10, "我跟你说过我在哪上的大学吗？"),
    NegativeControl(10, "我的生日是哪天来着？"),
    NegativeControl(10, "我说过我喜欢哪个歌手吗？"),
    NegativeControl(10, "我爸妈是做什么的？"),
    NegativeControl(10, "我个子有多高？"),
    NegativeControl(10, "我老婆叫什么名字？"),
    NegativeControl(11, "我闺女嫁到哪了？"),
    NegativeControl(11, "我说过我抽什么烟吗？"),
    NegativeControl(11, "我家房子是几层的来着？"),
    NegativeControl(11, "你记得我孙子多大了吗"),
    NegativeControl(11, "我年轻时当过兵吗？"),
    NegativeControl(11, "我说过我血压高不高吗？"),
    NegativeControl(11, "我最怕什么？"),
    NegativeControl(11, "我一个月挣多少钱？"),
    NegativeControl(12, "我说过我男朋友是谁吗？"),
    NegativeControl(12, "我跟你说过我几点睡觉吗？"),
    NegativeControl(12, "我喜欢看什么电影？"),
    NegativeControl(12, "我高中在哪读的？"),
    NegativeControl(12, "我说过我养猫吗？"),
    NegativeControl(12, "我最爱喝什么奶茶？"),
    NegativeControl(12, "我家里有几口人？"),
    NegativeControl(12, "我跟你讲过我怕什么动物吗？"),
)
# fmt: on
