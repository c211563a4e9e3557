"""Compound questions over the member-recall development half's facts (issue 47): a
DEVELOPMENT set, written on 2026-12-07 before any measurement with it, for deciding how a
question asked in clauses is encoded (`pallas.ranking.text.question_parts`).

Each question is asked by the member of `_member_recall_data` whose facts it names, in the way
members chain things in one line: two asks ("A，B？", "A，还有B？", "A，另外B？", "A，以及B？")
or an opener and one ask ("对了，…", "问你个事，…"). `answers` holds the words that name the
fact of each ask (as in `MemberFact.answer`); an opener asks nothing.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CompoundQuestion:
    member: int
    question: str
    answers: tuple[str, ...]  # one per ask, each in exactly one of the member's facts


QUESTIONS: tuple[CompoundQuestion, ...] = (
    CompoundQuestion(1, "我是做哪一行的，老家又是哪儿的？", ("火锅店", "赣州")),
    CompoundQuestion(1, "我养的鸟叫什么，还有我开什么车？", ("黑豆", "宝来")),
    CompoundQuestion(1, "对了，我对什么东西过敏来着？", ("海鲜",)),
    CompoundQuestion(1, "我早上爱吃啥，晚上睡前练啥？", ("热干面", "毛笔字")),
    CompoundQuestion(2, "我会什么乐器，平时玩什么游戏？", ("小提琴", "Minecraft")),
    CompoundQuestion(2, "我想考哪所大学，另外我现在读几年级？", ("浙江大学", "高二")),
    CompoundQuestion(2, "话说回来，我爱喝什么饮料？", ("珍珠奶茶",)),
    CompoundQuestion(2, "我眼镜多少度，牙齿在做什么？", ("六百度", "牙套")),
    CompoundQuestion(3, "我老婆干什么的，孩子上几年级了？", ("护士", "一年级")),
    CompoundQuestion(3, "我周六早上干嘛，支持哪个球队？", ("足球", "国安")),
    CompoundQuestion(3, "帮我想想，我有啥病来着？", ("痛风",)),
    CompoundQuestion(3, "我住北京哪儿，每天通勤多久？", ("回龙观", "一个半小时")),
    CompoundQuestion(4, "我的狗叫啥，冬天去哪过？", ("雪球", "海南")),
    CompoundQuestion(4, "我以前在哪上班，现在晚上干啥？", ("纺织厂", "广场舞")),
    CompoundQuestion(4, "你还记得吗，我外孙女在哪念书？", ("北京读大学",)),
    CompoundQuestion(5, "我的猫叫什么，我对什么过敏？", ("煤球", "尘螨")),
    CompoundQuestion(5, "我做什么工作的，最近在打哪个游戏？", ("软件测试", "艾尔登法环")),
    CompoundQuestion(5, "问你个事，我爱听哪个乐队？", ("万能青年旅店",)),
    CompoundQuestion(5, "我每天跑多少，周末在学啥？", ("五公里", "滑板")),
    CompoundQuestion(6, "我学什么专业的，网名叫啥？", ("建筑系", "星河旅人")),
    CompoundQuestion(6, "我养的什么宠物，怕什么天气？", ("仓鼠", "打雷")),
    CompoundQuestion(6, "我会弹什么，另外喜欢哪个明星？", ("尤克里里", "周深")),
    CompoundQuestion(7, "我老家哪里的，开什么车跑活？", ("临沂", "大货车")),
    CompoundQuestion(7, "我女儿多大了，以及我抽什么烟？", ("幼儿园大班", "泰山")),
    CompoundQuestion(7, "对了对了，我车牌尾号多少？", ("886",)),
)
