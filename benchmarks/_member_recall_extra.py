"""Extra development data for the person-facts negatives (issue #47): two more members, their
facts asked in other words, and questions about things they never said. Written on 2026-12-07
after the instance and answer-type vetoes (`pallas.ranking.instances`, `answer_type`) were
built on the development half (`_member_recall_data`): a check of those rules on lines they
were not made from — including the cases that could break them (a number asked and told in
words, a pet asked by its kind, a negative whose member did tell numbers). Two choices were
made after reading it (docs/providers.md, "Fourth pass"): the answer-type veto no longer reads
多少 (it gated "我一次能喝多少酒" → "TA酒量不行，喝点白酒就上头"), and the instance veto's
cosine floor went 0.5 → 0.7; it is development data, not a held-out test.

The distractors are the development half's (`_member_recall_data.DISTRACTORS`).
"""

from __future__ import annotations

from benchmarks._member_recall_data import DISTRACTORS as DISTRACTORS
from benchmarks._member_recall_shape import MemberFact, NegativeControl

WRITTEN_ON = "2026-12-07"

F = MemberFact

# fmt: off
FACTS: tuple[MemberFact, ...] = (
    # member 8: an emergency nurse in Guangzhou, mother of a small daughter
    F(8, "我在医院急诊科当护士", "我在哪个科室上班？", "急诊科", "direct"),
    F(8, "我女儿三岁了", "我闺女今年多大？", "三岁", "paraphrase"),
    F(8, "我家有一只金毛叫旺财", "我家狗叫什么名字？", "旺财", "direct"),
    F(8, "我每天六点半起床", "我早上几点起？", "六点半", "direct"),
    F(8, "我一周上四个夜班", "我一周值几次夜班？", "四个夜班", "paraphrase"),
    F(8, "我最爱吃肠粉", "我早茶最爱点什么？", "肠粉", "category"),
    F(8, "我会说粤语和普通话", "我会讲哪些话？", "粤语", "paraphrase"),
    F(8, "我骑电动车上班", "我怎么去上班？", "电动车", "paraphrase"),
    F(8, "我的血型是O型", "我是什么血型？", "O型", "direct"),
    F(8, "我老公是做外贸的", "我先生做什么工作？", "外贸", "paraphrase"),
    F(8, "我每个月给家里寄两千块", "我每月往家里寄多少钱？", "两千块", "direct"),
    F(8, "我喜欢打羽毛球", "我平时爱玩什么球？", "羽毛球", "category"),
    # member 9: a retired Chinese teacher in Nanjing
    F(9, "我教了三十年语文", "我以前教什么科目？", "语文", "paraphrase"),
    F(9, "我住在南京鼓楼区", "我住南京哪个区？", "鼓楼", "direct"),
    F(9, "我每天早上去公园打太极", "我晨练一般练什么？", "太极", "paraphrase"),
    F(9, "我有高血压，每天吃降压药", "我身体有什么毛病？", "高血压", "category"),
    F(9, "我孙子在上初二", "我孙子读几年级？", "初二", "direct"),
    F(9, "我养了一缸金鱼", "我养了什么宠物？", "金鱼", "category"),
    F(9, "我爱听京剧", "我爱听哪种戏曲？", "京剧", "category"),
    F(9, "我酒量不行，喝点白酒就上头", "我一次能喝多少酒？", "上头", "paraphrase"),
    F(9, "我的老花镜是三百度的", "我老花镜多少度？", "三百度", "direct"),
    F(9, "我年轻时下过乡", "我年轻时有过什么经历？", "下过乡", "paraphrase"),
    F(9, "我属虎", "我属什么？", "属虎", "direct"),
    F(9, "我每周三去老年大学学书法", "我星期几去上课？", "每周三", "paraphrase"),
)

NEGATIVES: tuple[NegativeControl, ...] = (
    NegativeControl(8, "你还记得我养的猫叫什么吗"),
    NegativeControl(8, "我说过我几岁了吗？"),
    NegativeControl(8, "我跟你说过我身高多少吗？"),
    NegativeControl(8, "我老家是哪里的来着？"),
    NegativeControl(8, "你记得我儿子叫什么吗"),
    NegativeControl(8, "我说过我会弹什么乐器吗？"),
    NegativeControl(8, "我跟你讲过我最喜欢的电影吗？"),
    NegativeControl(8, "我大学是在哪读的？"),
    NegativeControl(9, "你还记得我养的狗叫什么吗"),
    NegativeControl(9, "我说过我几点睡觉吗？"),
    NegativeControl(9, "我跟你说过我体重多少吗？"),
    NegativeControl(9, "你记得我孙女在哪上学吗？"),
    NegativeControl(9, "我说过我喜欢下象棋吗？"),
    NegativeControl(9, "我跟你说过我老伴叫什么吗？"),
    NegativeControl(9, "我以前在哪所学校教书？"),
    NegativeControl(9, "我最爱吃的菜是什么？"),
)
# fmt: on
