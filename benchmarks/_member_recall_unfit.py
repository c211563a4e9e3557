"""A development set for member recall (issue #47) written after the question adapter
(`pallas.ranking.adapter`) was fitted, and never fitted on: `benchmarks.fit_question_adapter`
fits on the other dev sets only, so this one tells how the shipped adapter does on questions
it has not seen — the eight others are in its fit. Members 25–27: a retired teacher in Qingdao,
a nurse on night shifts in Changsha, a first-year student in Lanzhou. Every kind of question
the other sets ask (direct, paraphrase, category, yes-or-no), broad ones ("我平时都爱干点啥")
and 10 never-said questions next to a told topic. Written on 2026-12-07 before any run on it.
Development data: tune on it like the others, but refit the adapter without it.

The distractors are the development half's (`_member_recall_data.DISTRACTORS`).
"""

from __future__ import annotations

from benchmarks._member_recall_data import DISTRACTORS as DISTRACTORS
from benchmarks._member_recall_shape import MemberFact, NegativeControl

WRITTEN_ON = "2026-12-07"

F = MemberFact

# fmt: off
FACTS: tuple[MemberFact, ...] = (
    # member 25: a retired teacher in Qingdao
    F(25, "我退休前在中学教了三十年化学", "我以前是干哪一行的？", "教了三十年化学", "paraphrase"),
    F(25, "我每天早上去栈桥边打太极", "我早上一般去做什么？", "打太极", "paraphrase"),
    F(25, "我老伴去年做了心脏搭桥手术", "我老伴身体怎么样？", "心脏搭桥", "category"),
    F(25, "我孙子在上海读研究生", "我孙子在哪读书？", "上海读研究生", "direct"),
    F(25, "我年轻的时候在黄岛插过队", "我年轻时下过乡吗？", "黄岛插过队", "paraphrase"),
    F(25, "我喜欢自己腌咸鸭蛋", "我平时都爱干点啥？", "腌咸鸭蛋", "category"),
    F(25, "我血糖有点高，医生让我少吃甜的", "我有什么要忌口的？", "少吃甜的", "category"),
    # member 26: a nurse on night shifts in Changsha
    F(26, "我在湘雅医院儿科当护士", "我在哪个科室上班？", "儿科", "direct"),
    F(26, "我这个月一共排了九个夜班", "我这个月有几个夜班？", "九个夜班", "direct"),
    F(26, "我下了夜班就去吃一碗米粉", "我下班以后一般吃啥？", "一碗米粉", "paraphrase"),
    F(26, "我一直在攒钱想买辆二手的电动车", "我在为什么存钱？", "二手的电动车", "paraphrase"),
    F(26, "我对头孢过敏", "我对什么药过敏？", "头孢", "direct"),
    F(26, "我休息的时候喜欢窝在家里追综艺", "我放假的时候爱干嘛？", "追综艺", "paraphrase"),
    F(26, "我男朋友是消防员", "我对象是做什么工作的？", "消防员", "paraphrase"),
    F(26, "我偶尔会去橘子洲头跑步", "我有运动的习惯吗？", "橘子洲头跑步", "category"),
    # member 27: a first-year student in Lanzhou
    F(27, "我在兰州大学读大一，学的是大气科学", "我读的是什么专业？", "大气科学", "direct"),
    F(27, "我老家在甘肃天水", "我老家是哪儿的？", "甘肃天水", "paraphrase"),
    F(27, "我宿舍楼下有家牛肉面特别好吃", "我最近发现哪里的面好吃？", "牛肉面", "paraphrase"),
    F(27, "我参加了学校的天文社", "我加入了什么社团？", "天文社", "direct"),
    F(27, "我每周六去给初中生做家教", "我周六一般在忙什么？", "做家教", "paraphrase"),
    F(27, "我用的是一台二手的iPad记笔记", "我上课拿什么记笔记？", "iPad", "paraphrase"),
    F(27, "我暑假打算去敦煌看壁画", "我暑假有什么安排？", "敦煌看壁画", "category"),
    F(27, "我从小就怕蜘蛛", "我有什么害怕的东西吗？", "怕蜘蛛", "category"),
)

NEGATIVES: tuple[NegativeControl, ...] = (
    NegativeControl(25, "我退休以后每个月拿多少退休金？"),
    NegativeControl(25, "我孙女今年几岁了？"),
    NegativeControl(25, "我以前教过的学生里有当官的吗？"),
    NegativeControl(26, "我护士资格证是哪年考的？"),
    NegativeControl(26, "我男朋友是哪里人？"),
    NegativeControl(26, "我最喜欢哪个综艺节目？"),
    NegativeControl(26, "我养过猫吗？"),
    NegativeControl(27, "我高考考了多少分？"),
    NegativeControl(27, "我室友是哪里人？"),
    NegativeControl(27, "我会弹吉他吗？"),
)
# fmt: on
