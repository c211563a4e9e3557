"""Meaning probes for the memory-quality benchmark: facts members teach, asked in other words.

Each probe is a first-person teaching ("@牛牛 记住 我对花生过敏", stored as "TA对花生过敏" by the
real member-command path) and a question its author asks days later. After the probed fact the
same member teaches three unrelated facts (`DISTRACTORS`), so "the speaker's newest facts" cannot
stand in for retrieval.

Kinds:
- lexical    — the question shares content words with the fact (我住在海淀区 ← 我住哪个区);
- paraphrase — the same meaning in other words (我对花生过敏 ← 我有什么东西不能吃);
- category   — the question names the category, the fact an instance (我周末去游泳 ←
  我周末喜欢做什么运动).

`ISSUE_PROBES` are the examples the issue measured through the running bot; the rest were
written for this benchmark *before* the semantic table existed, to keep it honest.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class MeaningProbe:
    kind: str  # lexical | paraphrase | category
    taught: str  # first person, as the member says it after "记住"
    probe: str  # the question the member asks later
    source: str = "own"  # "issue" for the issue's own examples


ISSUE_PROBES = [
    MeaningProbe("lexical", "我住在海淀区", "我住哪个区？", "issue"),
    MeaningProbe("paraphrase", "我对花生过敏", "我有什么东西不能吃？", "issue"),
    MeaningProbe("paraphrase", "我是左撇子", "我用哪只手写字？", "issue"),
    MeaningProbe("category", "我周末一般去游泳", "我周末喜欢做什么运动？", "issue"),
    MeaningProbe("category", "我在备考雅思", "我最近在准备什么考试？", "issue"),
]

OWN_PROBES = [
    # lexical
    MeaningProbe("lexical", "我养了一只叫豆豆的柯基", "我家柯基叫啥来着？"),
    MeaningProbe("lexical", "我最喜欢的歌手是周杰伦", "我最喜欢的歌手是谁？"),
    MeaningProbe("lexical", "我每天早上七点起床", "我每天早上几点起床？"),
    MeaningProbe("lexical", "我的生日是五月三号", "我生日是哪天？"),
    MeaningProbe("lexical", "我喜欢喝拿铁", "我喜欢喝什么咖啡？"),
    MeaningProbe("lexical", "我老家在成都", "我老家是哪里的？"),
    MeaningProbe("lexical", "我女朋友叫小雨", "我女朋友叫什么名字？"),
    MeaningProbe("lexical", "我最喜欢的颜色是蓝色", "我最喜欢什么颜色？"),
    MeaningProbe("lexical", "我开的车是一辆白色的比亚迪", "我开的是什么车？"),
    # paraphrase
    MeaningProbe("paraphrase", "我不吃香菜", "我有什么忌口吗？"),
    MeaningProbe("paraphrase", "我在朝阳区上班", "我在哪儿工作？"),
    MeaningProbe("paraphrase", "我怕狗", "我害怕什么动物？"),
    MeaningProbe("paraphrase", "我一般晚上十一点睡觉", "我一般几点休息？"),
    MeaningProbe("paraphrase", "我有一个弟弟", "我有兄弟姐妹吗？"),
    MeaningProbe("paraphrase", "我近视六百度", "我眼睛度数多少？"),
    MeaningProbe("paraphrase", "我是程序员", "我是干什么的？"),
    MeaningProbe("paraphrase", "我每天坐地铁通勤", "我平时怎么去公司？"),
    MeaningProbe("paraphrase", "我下个月结婚", "我什么时候办婚礼？"),
    MeaningProbe("paraphrase", "我是素食主义者", "我吃肉吗？"),
    MeaningProbe("paraphrase", "我滴酒不沾", "我能喝啤酒吗？"),
    MeaningProbe("paraphrase", "我在读大三", "我上几年级了？"),
    # category
    MeaningProbe("category", "我养了一只橘猫", "我养的是什么宠物？"),
    MeaningProbe("category", "我会弹钢琴", "我会什么乐器？"),
    MeaningProbe("category", "我在一家银行上班", "我是做什么工作的？"),
    MeaningProbe("category", "我喜欢打王者荣耀", "我平时玩什么游戏？"),
    MeaningProbe("category", "我住在浦东", "我住在哪个区？"),
    MeaningProbe("category", "我最爱吃火锅", "我最喜欢什么食物？"),
    MeaningProbe("category", "我每周二晚上有篮球训练", "我哪天晚上有安排？"),
    MeaningProbe("category", "我平时喜欢钓鱼", "我有什么爱好？"),
    MeaningProbe("category", "我对海鲜过敏", "我对什么食物过敏？"),
    MeaningProbe("category", "我妈妈是老师", "我家里人是做什么的？"),
    MeaningProbe("category", "我在学吉他", "我在学什么乐器？"),
    MeaningProbe("category", "我下周要考驾照科目二", "我最近有什么考试？"),
    MeaningProbe("category", "我老家在广东潮汕", "我是哪个省的人？"),
]

# Written after the table's first version and run once before any table change; the first
# figure printed for this set is the honest out-of-sample one (see the closing note of the issue).
HOLDOUT_PROBES = [
    MeaningProbe("lexical", "我的血型是O型", "我是什么血型？", "holdout"),
    MeaningProbe("lexical", "我身高一米八", "我身高多少？", "holdout"),
    MeaningProbe("paraphrase", "我不能吃辣", "我吃得了辣吗？", "holdout"),
    MeaningProbe("paraphrase", "我有高血压", "我身体有什么毛病？", "holdout"),
    MeaningProbe("paraphrase", "我晕车", "我坐车会怎么样？", "holdout"),
    MeaningProbe("paraphrase", "我每天六点下班", "我什么时候能下班？", "holdout"),
    MeaningProbe("paraphrase", "我乳糖不耐受", "我能喝牛奶吗？", "holdout"),
    MeaningProbe("paraphrase", "我是独生子", "我有没有哥哥姐姐？", "holdout"),
    MeaningProbe("paraphrase", "我在深圳打工", "我在哪个城市上班？", "holdout"),
    MeaningProbe("paraphrase", "我上夜班", "我的工作时间是怎样的？", "holdout"),
    MeaningProbe("paraphrase", "我头发是自然卷", "我的发型是什么样？", "holdout"),
    MeaningProbe("paraphrase", "我戒烟三个月了", "我还抽烟吗？", "holdout"),
    MeaningProbe("category", "我喜欢打羽毛球", "我擅长什么球类运动？", "holdout"),
    MeaningProbe("category", "我在学法语", "我在学哪门外语？", "holdout"),
    MeaningProbe("category", "我养了两只兔子", "我家里有什么小动物？", "holdout"),
    MeaningProbe("category", "我最爱喝冰美式", "我平时喝什么饮料？", "holdout"),
    MeaningProbe("category", "我喜欢看宫崎骏的动画", "我喜欢什么类型的电影？", "holdout"),
    MeaningProbe("category", "我考过了教资", "我拿到过什么证？", "holdout"),
    MeaningProbe("category", "我在玩原神", "我最近沉迷什么游戏？", "holdout"),
    MeaningProbe("category", "我住在西湖区", "我家在哪一带？", "holdout"),
    MeaningProbe("category", "我爸是厨师", "我父亲的职业是什么？", "holdout"),
    MeaningProbe("category", "我每周六上午去上钢琴课", "我周六有什么课？", "holdout"),
]

# A second held-out set, written after the table was tuned on the first; never tuned on.
HOLDOUT2_PROBES = [
    MeaningProbe("lexical", "我的猫叫年糕", "我的猫叫什么？", "holdout2"),
    MeaningProbe("paraphrase", "我对酒精过敏", "我能喝酒吗？", "holdout2"),
    MeaningProbe("paraphrase", "我周末要加班", "我周末有空吗？", "holdout2"),
    MeaningProbe("paraphrase", "我是夜猫子，天天凌晨三点睡", "我睡得早吗？", "holdout2"),
    MeaningProbe("paraphrase", "我不会游泳", "我会水吗？", "holdout2"),
    MeaningProbe("paraphrase", "我在医院当护士", "我是干哪行的？", "holdout2"),
    MeaningProbe("paraphrase", "我每天骑自行车上班", "我通勤用什么交通工具？", "holdout2"),
    MeaningProbe("paraphrase", "我有两个孩子", "我当爸妈了吗？", "holdout2"),
    MeaningProbe("category", "我喜欢听五月天", "我喜欢哪个乐队？", "holdout2"),
    MeaningProbe("category", "我在准备考研", "我最近在忙什么考试？", "holdout2"),
    MeaningProbe("category", "我住在天河区", "我家在广州哪个区？", "holdout2"),
    MeaningProbe("category", "我养了一条金毛", "我养的狗是什么品种？", "holdout2"),
    MeaningProbe("category", "我周日上午练瑜伽", "我周日做什么运动？", "holdout2"),
    MeaningProbe("category", "我最爱吃榴莲", "我最喜欢哪种水果？", "holdout2"),
    MeaningProbe("category", "我在一家游戏公司做美术", "我在什么行业工作？", "holdout2"),
]

MEANING_PROBES = ISSUE_PROBES + OWN_PROBES + HOLDOUT_PROBES + HOLDOUT2_PROBES

# Taught by the same member after the probed fact: unrelated to every probe's answer.
DISTRACTORS = [
    "我手机壳是粉色的", "我喜欢收集明信片", "我讨厌下雨天", "我的网名以前叫小飞侠",
    "我一直想去冰岛看极光", "我用的是机械键盘", "我喜欢看悬疑电影", "我的微信头像是一只鸭子",
    "我小时候学过书法", "我喜欢穿格子衬衫", "我最近在追一部日剧", "我喜欢在阳台种薄荷",
    "我的笔记本电脑是二手的", "我有一件很旧的卫衣", "我喜欢闻雨后的味道", "我高中是住校的",
]  # fmt: skip
DISTRACTORS_PER_PROBE = 3
