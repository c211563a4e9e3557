"""The memory benchmark's held-out set: written once, on 2026-12-04, and frozen.

Nothing in the product may be tuned on these lines: no word list, concept class, slot rule or
prompt is to be changed because of a miss here (change them because of a miss elsewhere, then
run this set to see whether the change generalises). Adding a probe means writing a new set.

40 facts of the everyday kinds members tell a group bot (work, family, health, hobbies, places,
habits, fandoms, possessions, plans), each taught with 记住 in the first person and asked days
later by the same member: 14 share a content word with the fact (`lexical`), 14 ask the same
thing in other words (`paraphrase`), 12 name a category of which the fact is an instance
(`category`). `answer` is a fragment of the stored fact that must reach the request.

6 corrections (taught with 记住 after the old fact) and 2 denials (said in plain chat) each
replace a fact: afterwards the new state must reach the request and the old one must not.
"""

from __future__ import annotations

from dataclasses import dataclass

FROZEN_ON = "2026-12-04"


@dataclass(frozen=True, slots=True)
class HeldOutFact:
    area: str  # work | family | health | hobby | place | habit | fandom | possession | plan
    kind: str  # lexical | paraphrase | category
    taught: str  # first person, after "记住"
    question: str
    answer: str  # a fragment of the stored (third-person) fact


# fmt: off
FACTS: tuple[HeldOutFact, ...] = (
    # work
    HeldOutFact("work", "lexical", "我在一家物流公司做调度", "我在哪家公司上班来着？", "物流公司"),
    HeldOutFact("work", "paraphrase", "我是急诊科的护士", "你知道我在医院干啥吗？", "急诊科"),
    HeldOutFact("work", "category", "我白天在银行柜台上班", "我是做什么工作的？", "银行"),
    HeldOutFact("work", "paraphrase", "我每周三固定加班到十点", "哪天我会很晚才下班？", "周三"),
    HeldOutFact("work", "lexical", "我的工位在公司十八楼", "我工位在几楼？", "十八楼"),
    # family
    HeldOutFact("family", "paraphrase", "我奶奶今年九十二岁了", "我家老人多大年纪了？", "九十二"),
    HeldOutFact("family", "lexical", "我有一个双胞胎弟弟", "我弟弟是双胞胎吗？", "双胞胎"),
    HeldOutFact("family", "category", "我老婆是小学语文老师", "我爱人是做哪一行的？", "语文老师"),
    HeldOutFact("family", "paraphrase", "我女儿下个月满三岁", "我家小朋友多大了？", "三岁"),
    # health
    HeldOutFact("health", "lexical", "我对青霉素过敏", "我对哪种药过敏？", "青霉素"),
    HeldOutFact("health", "paraphrase", "我有轻度近视三百度", "我眼睛度数是多少？", "三百度"),
    HeldOutFact("health", "category", "我腰椎间盘突出", "我身体有什么老毛病？", "腰椎间盘"),
    HeldOutFact("health", "paraphrase", "我最近在吃降压药", "我现在每天要吃什么药？", "降压药"),
    # hobby
    HeldOutFact("hobby", "category", "我会弹尤克里里", "我会什么乐器？", "尤克里里"),
    HeldOutFact("hobby", "lexical", "我每周日下午去下围棋", "我周日下午一般干嘛？", "围棋"),
    HeldOutFact("hobby", "category", "我喜欢打匹克球", "我平时爱玩什么运动？", "匹克球"),
    HeldOutFact("hobby", "paraphrase", "我在学粤语", "我最近在学哪种方言？", "粤语"),
    HeldOutFact("hobby", "lexical", "我喜欢拼乐高", "我喜欢拼什么来着？", "乐高"),
    # place
    HeldOutFact("place", "lexical", "我老家在湖南常德", "我老家是哪里的？", "常德"),
    HeldOutFact("place", "paraphrase", "我现在租房住在通州", "我现在住北京哪一块？", "通州"),
    HeldOutFact("place", "category", "我大学在武汉读的", "我是在哪个城市上的大学？", "武汉"),
    HeldOutFact("place", "lexical", "我公司在陆家嘴", "我公司在哪边？", "陆家嘴"),
    # habit
    HeldOutFact("habit", "paraphrase", "我每天早上五点半起床跑步", "我早上一般几点起？", "五点半"),
    HeldOutFact("habit", "lexical", "我睡前一定要喝一杯热牛奶", "我睡前要喝什么？", "热牛奶"),
    HeldOutFact("habit", "category", "我不吃香菜", "我吃饭有什么忌口？", "香菜"),
    HeldOutFact("habit", "paraphrase", "我咖啡只喝燕麦拿铁",
                "帮我点咖啡的话该点哪种？", "燕麦拿铁"),
    HeldOutFact("habit", "lexical", "我每个月会献一次血", "我多久献一次血？", "献一次血"),
    # fandom
    HeldOutFact("fandom", "category", "我是五月天的歌迷", "我喜欢哪个乐队？", "五月天"),
    HeldOutFact("fandom", "paraphrase", "我追了十年海贼王",
                "我看了好多年的那部动漫是什么？", "海贼王"),
    HeldOutFact("fandom", "lexical", "我是湖人队的球迷", "我支持哪个球队？", "湖人"),
    HeldOutFact("fandom", "category", "我最爱的作家是东野圭吾", "我最喜欢谁写的小说？", "东野圭吾"),
    # possession
    HeldOutFact("possession", "lexical", "我的车是一辆白色的比亚迪", "我开的什么车？", "比亚迪"),
    HeldOutFact("possession", "category", "我养了一条柯基叫豆包", "我养的宠物叫什么？", "豆包"),
    HeldOutFact("possession", "paraphrase", "我用的是一台老款ThinkPad",
                "我的电脑是什么牌子的？", "ThinkPad"),
    HeldOutFact("possession", "lexical", "我收藏了两百多张黑胶唱片",
                "我收藏了多少张唱片？", "黑胶唱片"),
    # plan
    HeldOutFact("plan", "paraphrase", "我打算明年春天去新疆自驾", "我明年有什么出行计划？", "新疆"),
    HeldOutFact("plan", "lexical", "我在准备考驾照科目二", "我驾照考到哪一科了？", "科目二"),
    HeldOutFact("plan", "category", "我报名了十一月的半程马拉松",
                "我最近报了什么比赛？", "半程马拉松"),
    HeldOutFact("plan", "paraphrase", "我想年底前攒够买房的首付", "我在为什么存钱？", "首付"),
    HeldOutFact("plan", "category", "我下周要去拔智齿", "我下周有什么要去医院的事？", "智齿"),
)

# newer facts the same member teaches after the probed one (and the filler of 10 / 50 facts);
# none of them answers any question above
NEWER: tuple[str, ...] = (
    "我喜欢下雨天", "我字写得很丑", "我昨天剪了短发", "我手机壳是蓝色的", "我爱吃酸辣粉",
    "我小学当过班长", "我会做红烧肉", "我不太会游泳", "我怕蟑螂", "我喜欢绿色",
    "我记性不太好", "我周末喜欢睡懒觉", "我会说一点日语", "我养过一盆仙人掌", "我爱看纪录片",
    "我高中是住校的", "我脚是四十二码", "我喜欢吃草莓", "我不喝碳酸饮料", "我爱听播客",
    "我讨厌排队", "我喜欢冬天", "我以前学过素描", "我会骑摩托车", "我经常忘带钥匙",
    "我喜欢逛菜市场", "我爱吃火锅", "我没去过海边", "我是夜猫子", "我喜欢拍云",
    "我会折千纸鹤", "我小时候住在县城", "我爱喝豆浆", "我不喜欢吃甜食", "我玩过滑板",
    "我喜欢看天气预报", "我每天走一万步", "我有点恐高", "我喜欢收集明信片", "我会包饺子",
    "我爱喝普洱茶", "我喜欢用钢笔", "我不会做饭", "我喜欢坐火车", "我牙齿有点敏感",
    "我喜欢听雨声", "我很少发朋友圈", "我爱看悬疑剧", "我喜欢养多肉", "我会吹口琴",
    "我讨厌香水味", "我喜欢早睡", "我左耳有个耳洞", "我会修自行车",
)


@dataclass(frozen=True, slots=True)
class Update:
    how: str  # correction (taught with 记住) | denial (said in plain chat)
    old: str  # first person, taught with 记住 first
    new: str  # the correction after 记住, or the plain-chat denial
    question: str
    old_answer: str  # must no longer reach the request
    new_answer: str  # must reach it ("" for a denial: only the old must be gone)


UPDATES: tuple[Update, ...] = (
    Update("correction", "我在超市当收银员", "我换工作了，现在在做外卖骑手", "我现在做什么工作？",
           "收银员", "外卖骑手"),
    Update("correction", "我读高二", "我升高三了", "我现在读几年级？", "高二", "高三"),
    Update("correction", "我用的手机是小米", "我换手机了，现在用的是华为", "我现在用什么手机？",
           "小米", "华为"),
    Update("correction", "我最喜欢的水果是西瓜", "我现在最喜欢的水果变成芒果了",
           "我最喜欢吃什么水果？", "西瓜", "芒果"),
    Update("correction", "我住在天河区", "我上个月搬到番禺了", "我现在住在哪？", "天河区", "番禺"),
    Update("correction", "我的猫叫年糕", "我的猫改名叫汤圆了",
           "我的猫叫什么名字？", "年糕", "汤圆"),
    Update("denial", "我养了一只仓鼠", "我已经不养仓鼠了",
           "我现在还养着什么宠物吗？", "养了一只仓鼠", ""),
    Update("denial", "我在一家外企做翻译", "我已经从那家外企辞职了", "我现在还在外企上班吗？",
           "外企做翻译", ""),
)
# fmt: on
