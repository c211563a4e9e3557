"""Generated group history for the memory-quality benchmark (seeded, deterministic).

A multi-speaker group over `days` days: filler chatter built from fragments, occasional bot
replies, and planted facts — each planted fact is a message its subject really said (or an
admin-taught group fact), the row extraction / teaching would store, and a probe question asked
at the end with the keyword a correct answer needs.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

NAMES = [
    "阿米娅", "小林", "老王", "奶茶", "咸鱼", "阿狸", "木木", "星星", "小鹿", "大熊",
    "柚子", "石头", "七七", "豆包", "年糕", "土豆", "小白", "青柠", "橙子", "芒果",
    "饺子", "汤圆", "可乐", "雪糕", "布丁", "花卷", "麻薯", "松果", "栗子", "海苔",
]  # fmt: skip

OPENERS = ["", "", "", "话说", "感觉", "救命", "笑死", "其实", "我觉得", "刚刚"]
TOPICS = [
    "今天的活动关卡", "这期新干员", "晚饭", "地铁", "周报", "外卖", "天气", "新番", "抽卡",
    "加班", "考试", "猫片", "演唱会", "排位", "健身房", "快递", "房租", "新手机", "剧本杀",
    "咖啡", "早八", "视频", "更新公告", "基建", "公开招募", "肉鸽", "皮肤", "宿舍", "奶茶店",
]  # fmt: skip
COMMENTS = [
    "好难啊", "还行吧", "太离谱了", "有点意思", "又延期了", "真的绝", "没绷住", "谁懂啊",
    "算了算了", "明天再说", "冲冲冲", "好贵", "一般般", "好好笑", "我不行了", "稳了",
]  # fmt: skip
REACTIONS = ["哈哈哈", "确实", "+1", "草", "6", "真的假的", "？", "牛", "好耶", "懂了"]
BOT_LINES = ["哈哈确实", "辛苦啦", "要早点休息哦", "好耶", "我也想去", "加油加油"]


@dataclass(frozen=True, slots=True)
class PlantedFact:
    kind: str  # person_facts | relationship | group_memory | group_events | ip_knowledge
    subject: int | None  # speaker index (person kinds) or None
    statement: str  # what was said in the group (None-subject facts: said by an admin)
    fact: str  # the stored row, as extraction / teaching / an admin would write it
    key: str
    probe: str  # asked at the end
    keyword: str  # a correct answer needs this
    asker: int | None = None  # speaker index asking (default: the subject)
    probe_kind: str = "lexical"  # lexical | paraphrase | category (see _memory_meaning_data)
    source: str = "planted"  # planted (this module) | issue | own (_memory_meaning_data)


PERSON_TEMPLATES = [
    ("pet", "我养了一只叫{a}的{b}", "养了一只叫{a}的{b}", "我家{b}叫什么名字来着？",
     [("团子", "柯基"), ("煤球", "黑猫"), ("布丁", "仓鼠"), ("可可", "柴犬"), ("大福", "橘猫")]),
    ("favorite_food", "我最爱吃{a}了，一周能吃三次", "最爱吃{a}", "我最爱吃的东西是啥？",
     [("螺蛳粉",), ("麻辣烫",), ("寿司",), ("烤冷面",), ("酸菜鱼",)]),
    ("hometown", "我老家在{a}，过年才回去", "老家在{a}", "你还记得我老家是哪的吗？",
     [("哈尔滨",), ("泉州",), ("大理",), ("洛阳",), ("汕头",)]),
    ("job", "我是做{a}的，天天加班", "工作是{a}", "我是干什么工作的来着？",
     [("游戏策划",), ("护士",), ("前端开发",), ("会计",), ("中学老师",)]),
    ("instrument", "最近在学{a}，手指好疼", "最近在学{a}", "我在学的那个乐器叫啥？",
     [("尤克里里",), ("架子鼓",), ("大提琴",), ("口琴",)]),
    ("birthday", "我生日是{a}，记得祝我生日快乐", "生日是{a}", "我生日是哪天？",
     [("三月十二号",), ("七月七号",), ("十一月三十号",), ("一月九号",)]),
    ("main_operator", "方舟里我主玩{a}，练满了", "方舟主玩{a}", "我方舟主玩哪个干员？",
     [("艾雅法拉",), ("银灰",), ("塞雷娅",), ("史尔特尔",)]),
    ("allergy", "我对{a}过敏，一碰就起疹子", "对{a}过敏", "我对什么东西过敏来着？",
     [("芒果",), ("花生",), ("猫毛",), ("海鲜",)]),
    ("sport", "我每周都去{a}，雷打不动", "每周都去{a}", "我平时都做什么运动？",
     [("攀岩",), ("游泳",), ("羽毛球",), ("夜跑",)]),
]  # fmt: skip
RELATION_TEMPLATES = [
    ("nickname_for_bot", "以后我就叫你{a}了", "喜欢叫帕拉斯“{a}”", "你还记得我平时怎么叫你吗？",
     [("小羊",), ("帕帕",), ("羊羊老师",)]),
]  # fmt: skip
GROUP_FACTS = [
    ("group_memory", "weekly_game", "群规：每周五晚上八点固定开黑", "咱们群一般什么时候开黑？",
     "周五晚上八点"),
    ("group_memory", "group_owner", "群主是阿米娅，管理员是老王和七七", "谁是群主啊？", "阿米娅"),
    ("group_memory", "no_spoilers", "本群禁止剧透新番，剧透要加黑幕", "群里能剧透新番吗？", "黑幕"),
    ("group_memory", "bot_name", "群里管帕拉斯叫牛牛", "大家平时管你叫什么？", "牛牛"),
    ("group_memory", "meme", "“下次一定”是群里催更的梗", "下次一定是什么梗？", "催更"),
    ("group_events", "offline_meetup", "十月二号在杭州西湖边办了第一次线下聚会",
     "之前线下聚会是在哪办的？", "杭州"),
    ("group_events", "anniversary", "群是在去年六月一号建的，每年过群生日", "群是什么时候建的？",
     "六月一号"),
    ("group_events", "tournament", "上个月群内肉鸽比赛冠军是石头", "上次肉鸽比赛谁拿了冠军？",
     "石头"),
    ("ip_knowledge", "exusiai", "能天使是企鹅物流的狙击干员", "能天使是哪个公司的？", "企鹅物流"),
    ("ip_knowledge", "kaltsit", "凯尔希是罗德岛医疗部门的负责人", "凯尔希负责罗德岛的什么部门？",
     "医疗部门"),
    ("ip_knowledge", "originium", "源石是泰拉世界的能源矿物，接触会得矿石病", "源石有什么危害？",
     "矿石病"),
    ("ip_knowledge", "lungmen", "龙门是一座移动城市，近卫局负责治安", "龙门的治安归谁管？",
     "近卫局"),
]  # fmt: skip
# Planted person templates whose question names a category instead of sharing a word.
CATEGORY_KEYS = frozenset({"sport", "instrument"})

DECOY_GROUP = [
    "群里的奶茶党和咖啡党吵过三次", "有人提议过去爬泰山但没成行", "群相册里有很多猫片",
    "新人进群要发自我介绍", "群公告每周一更新", "深夜档一般是柚子在聊", "过年会发红包接龙",
    "群里有个追番表", "周报梗来自老王", "以前有人在群里卖过二手显卡", "群名改过五次",
    "群里流行用“寄”表示失败", "每次版本更新都有人熬夜", "有人在群里组过读书会",
    "曾经有人把群当备忘录用", "有过一次抽卡保底大赛", "群里不让发广告", "有人做过群表情包合集",
]  # fmt: skip

# Other stable facts members have (stored like the planted ones, never probed): with several per
# person, recalling the right one takes relevance, not just "the speaker's latest facts".
DECOY_PERSON = [
    ("drink", "喜欢喝奶茶，要少糖"), ("district", "住在城东"), ("sibling", "有个妹妹在读高中"),
    ("weekend", "周末常去图书馆"), ("spice", "不太能吃辣"), ("eyes", "近视八百度"),
    ("exam", "在备考教资"), ("phone", "用安卓手机"), ("music", "喜欢听摇滚"),
    ("wake", "每天早上六点起床"), ("language", "会说粤语"), ("fear", "怕打雷"),
    ("sleep", "经常熬夜到两点"), ("books", "喜欢看推理小说"), ("commute", "骑电动车上班"),
    ("plants", "养了很多多肉"), ("coffee", "每天一杯美式"), ("travel", "去年去过云南旅游"),
]  # fmt: skip
DECOYS_PER_PERSON = 5


def chatter(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.25:
        return rng.choice(REACTIONS)
    return f"{rng.choice(OPENERS)}{rng.choice(TOPICS)}{rng.choice(COMMENTS)}"


def planted_facts(rng: random.Random, speakers: int) -> list[PlantedFact]:
    facts: list[PlantedFact] = []
    pool = [(t, v) for t in PERSON_TEMPLATES for v in t[4]]
    rng.shuffle(pool)
    keys_of: dict[int, set[str]] = {}
    for i, (template, values) in enumerate(pool):
        key, said, fact, probe, _ = template
        # some people get two facts, never two values of one key (that would be a replacement)
        order = ((i + d) % speakers for d in range(speakers))
        subject = next(s for s in order if key not in keys_of.get(s, ()))
        keys_of.setdefault(subject, set()).add(key)
        fill = {"a": values[0], "b": values[-1]}
        facts.append(
            PlantedFact("person_facts", subject, said.format(**fill), fact.format(**fill), key,
                        probe.format(**fill), values[0],
                        probe_kind="category" if key in CATEGORY_KEYS else "lexical")
        )  # fmt: skip
    for j, (key, said, fact, probe, values) in enumerate(RELATION_TEMPLATES):
        for k, (value,) in enumerate(values):
            subject = (j * 7 + k * 11 + 3) % speakers
            facts.append(PlantedFact("relationship", subject, said.format(a=value),
                                     fact.format(a=value), key, probe, value))  # fmt: skip
    for kind, key, fact, probe, keyword in GROUP_FACTS:
        asker = rng.randrange(speakers)
        facts.append(PlantedFact(kind, None, fact, fact, key, probe, keyword, asker=asker))
    return facts
