"""Generate two realistic group logs where (almost) nobody talks to the bot.

Deterministic (fixed seeds): running it again rewrites the same files.

    .venv/bin/python benchmarks/transcripts/make_real_groups.py
    .venv/bin/pallas replay benchmarks/transcripts/campus_group.jsonl --totals-only
    .venv/bin/pallas replay benchmarks/transcripts/game_group.jsonl --totals-only

- `campus_group.jsonl` — a graduate cohort group (研究生一班) over two weekdays: the counsellor's
  and the class monitor's announcements, recruitment / part-time / questionnaire posts with
  phone numbers, e-mails, links and list formatting, members asking each other about fees,
  forms and rooms ("大家8号有被扣款100元吗？", "导师申请表你们都送到E307了吗"), "有人…吗" polls,
  two-person threads with quotes and @s, good news, venting, surprises, and a handful of
  messages that do address the bot (@, "牛牛，…", a quote of the bot's line) or only talk
  about it ("牛牛也是干员吧", "问牛牛", "@张三 牛牛看看").
- `game_group.jsonl` — an Arknights players' group over one evening: gacha luck, ads for
  boosting and account trading, the group rules, team-up polls, member threads, and a few
  real addresses.

Next to each log, `<name>.labels.json` maps every member message id to what it is (`ad`,
`announce`, `thread`, `member_q`, `poll`, `good_news`, `venting`, `surprise`, `statement`,
`open_q`, `mention`, `address`, `noise`): the replay test checks the bot's unprompted
utterances against these labels. The bot (帕拉斯, alias 牛牛, self_id 2854196310) answers the
real addresses in the log with its own lines.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from pallas.core.cq import to_cq

BOT_ID = 2854196310
BOT_NAME = "帕拉斯"
TZ = timezone(timedelta(hours=8))
HERE = Path(__file__).parent
_TOKEN_RE = re.compile(r"(@\w+|\[(?:reply|face|img)(?::[^\]]*)?\])")


@dataclass(frozen=True)
class Member:
    user_id: int
    nickname: str
    card: str = ""
    role: str = "member"


Step = tuple[Any, ...]  # (who, text, gap, kind[, label])

# ============================================================================ campus group

CAMPUS_MEMBERS = {
    "fu": Member(1300218877, "王老师", "辅导员-王老师", "owner"),
    "ban": Member(2411893302, "李想", "班长-李想", "admin"),
    "zhang": Member(3120987743, "张三", "张三-计算机"),
    "lin": Member(1688203391, "林小鹿", "林小鹿-软工"),
    "zhou": Member(2755610982, "周周", "周周-电子"),
    "he": Member(3402291187, "何同学", "何一帆"),
    "xu": Member(1920384756, "徐徐", "徐子墨-计算机"),
    "tang": Member(2290017764, "糖糖", "唐糖-软工"),
    "gao": Member(3011928375, "高远", ""),
    "yan": Member(1776500913, "言午", "许言-电子"),
    "hr": Member(3891027465, "HR小刘", "杭州某科技-HR小刘"),
    "zhong": Member(3555102987, "校园代理阿中", ""),
}

CAMPUS_DAY1: list[tuple[str, list[Step]]] = [
    (
        "08:12:00",
        [
            ("zhang", "早", 0, "noise"),
            ("lin", "早上好", 20, "statement"),
            ("zhou", "今天早八的课在哪个教室来着", 60, "member_q", "zhou_room"),
            ("lin", "[reply:zhou_room] B201", 25, "thread"),
            ("zhou", "谢谢", 10, "thread"),
            ("he", "有人带伞了吗 外面下雨了", 90, "poll"),
            ("xu", "没带 我打算冲过去", 30, "thread"),
        ],
    ),
    (
        "09:05:00",
        [
            (
                "fu",
                "@all 【通知】各位同学：请于本周五（5月24日）17:00前将导师申请表纸质版交至E307"
                "办公室，逾期不予受理。联系人：王老师 电话 0571-88206543",
                0,
                "announce",
                "fu_form",
            ),
            ("ban", "收到", 30, "noise"),
            ("tang", "收到", 5, "noise"),
            ("gao", "收到", 8, "noise"),
            ("xu", "收到", 6, "noise"),
            ("he", "收到收到", 15, "noise"),
            ("zhang", "导师申请表你们都送到E307了吗", 300, "member_q"),
            ("lin", "还没 下午去", 40, "thread"),
            ("zhang", "@lin 一起吗", 20, "thread"),
            ("lin", "@zhang 好 两点楼下见", 25, "thread"),
            ("zhou", "申请表要导师签字吗", 60, "member_q"),
            ("ban", "[reply:fu_form] 要签字 电子版不算", 40, "thread"),
        ],
    ),
    (
        "10:20:00",
        [
            (
                "hr",
                "【招聘】杭州某科技公司招聘Python实习生\n岗位要求：\n1、计算机相关专业硕士在读\n"
                "2、每周到岗4天，实习3个月以上\n3、熟悉Django或FastAPI优先\n薪资：200-300/天，"
                "包午餐\n简历投递：hr@xxtech.cn\n联系电话：13857162043（微信同号）",
                0,
                "ad",
            ),
            ("xu", "300一天还行啊", 120, "statement"),
            ("gao", "包午餐可以", 30, "statement"),
            (
                "zhong",
                "兼职家教，小学数学，每小时80，周末两次，地点文一路附近，有意私聊 微信 zhong_2024",
                200,
                "ad",
            ),
            (
                "tang",
                "帮忙填个问卷～毕业论文用的 https://www.wjx.cn/vm/Q8xYz3a.aspx 填完可以私聊互填",
                400,
                "ad",
            ),
            ("he", "填了", 60, "statement"),
            ("tang", "谢谢呀", 20, "statement"),
        ],
    ),
    (
        "11:40:00",
        [
            ("gao", "大家8号有被扣款100元吗？", 0, "member_q", "gao_fee"),
            ("yan", "我也被扣了", 40, "thread"),
            ("gao", "是啥钱啊", 20, "member_q"),
            ("yan", "好像是校园卡的", 30, "thread"),
            ("zhou", "[reply:gao_fee] 被扣800元是住宿费", 60, "thread"),
            ("gao", "800？？", 10, "surprise"),
            ("zhou", "对 一学期的", 15, "thread"),
            ("gao", "那100是啥", 20, "member_q"),
            ("ban", "100是医保 今年统一扣的", 50, "thread"),
            ("gao", "懂了 谢谢班长", 15, "thread"),
        ],
    ),
    (
        "12:30:00",
        [
            ("lin", "中午吃啥", 0, "member_q"),
            ("tang", "二食堂的麻辣香锅", 30, "thread"),
            ("xu", "卧槽 一食堂居然有小龙虾了", 120, "surprise"),
            ("he", "多少钱", 30, "thread"),
            ("xu", "38一份", 20, "thread"),
            ("he", "贵了", 10, "thread"),
            ("zhang", "牛牛也是干员吧", 200, "mention"),
            ("lin", "？什么干员", 20, "thread"),
            ("zhang", "明日方舟 这个群机器人叫帕拉斯", 30, "thread"),
            ("lin", "哦哦", 10, "noise"),
        ],
    ),
    (
        "14:10:00",
        [
            ("tang", "不是笔试吧", 0, "member_q"),
            ("gao", "面试 下周三", 20, "thread"),
            ("tang", "那还好", 15, "thread"),
            ("gao", "迎娶白富美", 200, "statement"),
            ("xu", "？", 5, "noise"),
            ("gao", "发错群了", 10, "statement"),
            ("he", "哈哈哈哈哈", 6, "noise"),
        ],
    ),
    (
        "15:30:00",
        [
            ("yan", "我过了！！！六级过了！", 0, "good_news"),
            ("lin", "恭喜恭喜", 20, "thread"),
            ("zhou", "请客", 10, "thread"),
            ("yan", "下次一定", 10, "thread"),
            ("zhang", "谁有高数的课件 发我一份", 300, "member_q"),
            ("xu", "@zhang 群文件里有", 40, "thread"),
            ("zhang", "@xu 好的 看到了", 20, "thread"),
        ],
    ),
    (
        "16:40:00",
        [
            ("he", "烦死了 实验又失败了", 0, "venting"),
            ("he", "跑了一下午全白跑", 20, "venting"),
            ("tang", "抱抱", 30, "thread"),
            ("he", "导师还说明天要结果", 20, "venting"),
            ("he", "心态崩了", 60, "venting"),
        ],
    ),
    (
        "18:05:00",
        [
            ("zhou", "@bot 今天杭州晚上会下雨吗", 0, "address"),
            ("bot", "今晚杭州有小雨 出门记得带伞", 6),
            ("zhou", "好的", 30, "noise"),
            ("lin", "牛牛，帮我想一个组会汇报的标题，主题是图神经网络做推荐", 300, "address"),
            ("bot", "《图上的偏好传播：基于GNN的推荐方法调研与复现》 / 可以再按你的重点改改", 8),
            ("lin", "可以 就这个", 40, "thread"),
        ],
    ),
    (
        "20:10:00",
        [
            (
                "ban",
                "@all 明天下午2点在B201开年级大会，内容：\n1. 奖学金评定细则\n2. 中期考核安排\n"
                "3. 宿舍安全检查\n请大家准时参加，不得缺席，有事请提前向我请假",
                0,
                "announce",
            ),
            ("gao", "收到", 40, "noise"),
            ("xu", "收到", 10, "noise"),
            ("he", "明天大会要带什么吗", 300, "member_q", "he_bring"),
            ("ban", "[reply:he_bring] 不用 带人就行", 40, "thread"),
            ("zhang", "有人明天上午去图书馆吗", 200, "poll"),
            ("yan", "我去 占座吗", 60, "thread"),
            ("zhang", "@yan 帮我占一个 谢谢", 20, "thread"),
            ("yan", "@zhang 行", 20, "thread"),
        ],
    ),
    (
        "22:20:00",
        [
            ("tang", "好累啊 改了一晚上论文", 0, "venting"),
            ("lin", "同 眼睛要瞎了", 30, "thread"),
            ("tang", "导师又让我重写引言", 20, "venting"),
            ("lin", "我的也是 第三版了", 20, "thread"),
            ("tang", "我们俩真是难兄难弟", 30, "thread"),
            ("lin", "早点睡吧", 30, "thread"),
            ("tang", "晚安", 10, "thread"),
        ],
    ),
]

CAMPUS_DAY2: list[tuple[str, list[Step]]] = [
    (
        "07:55:00",
        [
            ("xu", "卧槽 下雪了", 0, "surprise"),
            ("he", "真的假的 五月下雪？", 30, "thread"),
            ("xu", "骗你的 是柳絮", 20, "thread"),
            ("he", "无聊", 10, "thread"),
        ],
    ),
    (
        "09:30:00",
        [
            (
                "zhong",
                "【考研资料出售】\n24版408全套真题+讲义 原价399现价99\n数一真题解析 59\n"
                "需要的同学加QQ 3555102987 或扫码\nhttps://t.cn/A6xYzQ2",
                0,
                "ad",
            ),
            ("ban", "@zhong 群里禁止发广告 再发就踢了", 60, "thread"),
            ("zhong", "不好意思", 30, "thread"),
            (
                "fu",
                "各位同学注意：学校近期将进行消防安全检查，宿舍内禁止使用大功率电器（电热毯、"
                "电煮锅、吹风机功率超过1200W等），一经发现将通报批评并没收。检查时间：5月22日—"
                "5月26日，具体以宿管通知为准。",
                300,
                "announce",
            ),
            ("gao", "电热毯也不行吗", 120, "member_q"),
            ("ban", "不行", 40, "thread"),
            ("gao", "好吧", 10, "noise"),
        ],
    ),
    (
        "11:00:00",
        [
            ("zhou", "导师申请表是不是要交两份", 0, "member_q"),
            ("tang", "一份就行", 40, "thread"),
            ("zhou", "@tang 好 谢谢", 20, "thread"),
            ("lin", "我offer到手了！！下个月去实习", 300, "good_news"),
            ("xu", "卧槽 哪家", 20, "thread"),
            ("lin", "@xu 就昨天那个HR发的", 30, "thread"),
            ("xu", "@lin 可以啊", 20, "thread"),
            ("zhang", "问牛牛", 200, "mention"),
            ("he", "问什么", 30, "thread"),
            ("zhang", "@he 牛牛看看这题怎么做", 20, "mention"),
            ("he", "@zhang 自己做", 20, "thread"),
        ],
    ),
    (
        "14:20:00",
        [
            ("yan", "为什么冬天静电这么多啊", 0, "open_q"),
            ("zhou", "空气干", 40, "thread"),
            ("gao", "有什么好看的番推荐吗 最近剧荒", 600, "open_q"),
            ("tang", "葬送的芙莉莲", 30, "thread"),
            ("gao", "看过了", 20, "thread"),
            ("tang", "那就孤独摇滚", 20, "thread"),
        ],
    ),
    (
        "16:00:00",
        [
            ("xu", "论文终于中了！！！", 0, "good_news"),
            ("zhang", "牛啊", 20, "thread"),
            ("he", "请吃饭", 10, "thread"),
            ("xu", "周末请", 20, "thread"),
            ("tang", "诶 原来今天下午没课", 300, "surprise"),
            ("gao", "你才知道", 20, "thread"),
            ("he", "又被导师骂了 难受", 400, "venting"),
            ("zhou", "@he 咋了", 30, "thread"),
            ("he", "@zhou 数据不对 全要重跑", 20, "thread"),
        ],
    ),
    (
        "19:30:00",
        [
            ("gao", "@bot 帮我翻译一下 the model generalizes poorly", 0, "address"),
            ("bot", "模型的泛化能力很差", 6),
            ("yan", "帕拉斯，明天几点开大会来着", 300, "address"),
            ("bot", "下午两点 B201", 6),
            ("yan", "好嘞", 30, "noise"),
            ("ban", "有人今晚还没交班费吗 私聊我", 300, "poll"),
            ("he", "我明天转你", 40, "thread"),
        ],
    ),
]

CAMPUS_FILLER_LINES = [
    ("今天好热", "statement"),
    ("食堂又涨价了", "statement"),
    ("我在实验室", "statement"),
    ("下午有人打球吗", "poll"),
    ("有人要拼外卖吗", "poll"),
    ("快递站几点关门啊", "member_q"),
    ("今天的作业交到哪", "member_q"),
    ("组会改到周四了是吧", "member_q"),
    ("实验室空调坏了", "statement"),
    ("刚开完组会", "statement"),
    ("图书馆人好多", "statement"),
    ("宿舍热水几点开啊", "member_q"),
    ("你们中期报告写了吗", "member_q"),
    ("谁借我个充电宝", "poll"),
    ("明天的课还上吗", "member_q"),
    ("打印店在哪", "member_q"),
    ("我去开会了", "statement"),
    ("晚上吃火锅去", "statement"),
    ("校车几点发车", "member_q"),
    ("有人有多余的体检表吗", "poll"),
    ("这学期的课表出了吗", "member_q"),
    ("奖学金名单出了没", "member_q"),
    ("刚在路上看到一只橘猫", "statement"),
    ("今天跑了五公里", "statement"),
    ("实验室的咖啡机修好了", "statement"),
    ("网又断了", "statement"),
    ("开题报告模板谁有", "member_q"),
    ("我把周报写完了", "statement"),
]
NOISE = ["哈哈哈哈", "？", "666", "+1", "[face:178]", "[img]", "嗯嗯", "草", "好的", "ok", "hhhh"]

# ============================================================================ game group

GAME_MEMBERS = {
    "qz": Member(1450987621, "凯尔希的狗", "群主-老K", "owner"),
    "gl": Member(2560918374, "阿米娅单推人", "管理-阿米", "admin"),
    "dx": Member(3170293846, "刀客塔小明", "小明"),
    "ww": Member(1820937465, "W的炸弹", ""),
    "yy": Member(2930184756, "银灰老婆", "银老板"),
    "mk": Member(3340918273, "玛恩纳", "叔叔"),
    "ll": Member(1260938475, "临光", "光光"),
    "sg": Member(2670192837, "史尔特尔", "42姐"),
    "dl": Member(3780291836, "代练小王", ""),
    "sh": Member(3890129374, "收号商", "高价收号"),
}

GAME_DAY: list[tuple[str, list[Step]]] = [
    (
        "19:00:00",
        [
            (
                "qz",
                "【群规】\n1. 禁止发广告、代练、收号，违者直接踢\n2. 禁止引战、人身攻击\n"
                "3. 剧透请打码\n4. 每周五晚上8点群内抽奖\n有问题找管理",
                0,
                "announce",
            ),
            ("gl", "收到", 30, "noise"),
            ("dx", "出了！！！十连双黄 银灰到家", 120, "good_news"),
            ("yy", "我的老婆！！", 20, "thread"),
            ("dx", "@yy 你老婆在我家", 20, "thread"),
            ("yy", "@dx 滚", 10, "thread"),
            ("ww", "歪了 又歪了 气死", 200, "venting"),
            ("mk", "几抽了", 20, "thread"),
            ("ww", "@mk 140抽了", 10, "thread"),
            ("mk", "@ww 节哀", 10, "thread"),
        ],
    ),
    (
        "19:40:00",
        [
            ("ll", "今晚有人一起打危机合约吗", 0, "poll"),
            ("sg", "我打到18了", 60, "thread"),
            ("ll", "@sg 带带我", 20, "thread"),
            ("sg", "@ll 晚点", 20, "thread"),
            ("dx", "你们这期合约打到多少分了", 200, "member_q"),
            ("mk", "22", 30, "thread"),
            ("dx", "大佬", 10, "thread"),
            (
                "dl",
                "专业代练 危机合约 剿灭 主线 保底18级 价格优惠 效率高 不封号\n有意加V：dl8888w\n"
                "或QQ 3780291836",
                300,
                "ad",
                "dl_ad",
            ),
            ("gl", "[reply:dl_ad] 说了不许发广告", 30, "thread"),
            (
                "sh",
                "高价回收明日方舟账号 六星多的优先 秒结 安全 有意私聊\nhttps://www.jiaoyimao.com/xx",
                300,
                "ad",
            ),
        ],
    ),
    (
        "20:10:00",
        [
            ("yy", "卧槽 周年庆新干员是谁啊 居然是她", 0, "surprise"),
            ("ll", "真的假的", 20, "thread"),
            ("yy", "官号刚发的", 20, "thread"),
            ("sg", "牛牛也出过皮肤吧", 300, "mention"),
            ("mk", "帕拉斯有皮肤吗", 40, "thread"),
            ("sg", "有一个", 20, "thread"),
            ("dx", "@bot 帕拉斯的精二立绘好看吗", 300, "address"),
            ("bot", "那当然 斗牛士的气势你懂的", 6),
            ("ww", "牛牛，晚上好", 300, "address"),
            ("bot", "晚上好呀 今天抽卡顺利吗", 5),
            ("ww", "[reply:bot] 不顺利 歪了", 30, "address"),
            ("bot", "摸摸 下次一定出", 5),
        ],
    ),
    (
        "20:50:00",
        [
            ("mk", "我今天终于把所有关卡三星了", 0, "good_news"),
            ("ll", "牛啊", 20, "thread"),
            (
                "qz",
                "@all 今晚八点半群抽奖 奖品是月卡×3 参与方式：在群里发【我要月卡】",
                300,
                "announce",
            ),
            ("dx", "我要月卡", 30, "noise"),
            ("ww", "我要月卡", 10, "noise"),
            ("yy", "我要月卡", 10, "noise"),
            ("ll", "我要月卡", 10, "noise"),
            ("qz", "恭喜@ww 中奖", 300, "announce"),
            ("ww", "我中了！！居然是我", 20, "good_news"),
            ("ww", "刚才还歪了 这下平衡了", 20, "statement"),
        ],
    ),
    (
        "21:40:00",
        [
            ("ll", "有什么适合新手的练度推荐吗", 0, "open_q"),
            ("sg", "先练能天使和银灰", 60, "thread"),
            ("ll", "@sg 没有能天使", 20, "thread"),
            ("sg", "@ll 那就先练推王", 20, "thread"),
            ("dx", "烦 又被剿灭卡住了", 300, "venting"),
            ("mk", "哪一关", 30, "thread"),
            ("dx", "@mk 切尔诺伯格", 20, "thread"),
            ("mk", "@dx 抄作业 b站搜一下", 20, "thread"),
            ("gl", "有人知道这期活动商店什么时候关吗", 300, "poll"),
            ("yy", "下周二", 40, "thread"),
        ],
    ),
    (
        "22:30:00",
        [
            ("sg", "我要睡了 明天早八", 0, "statement"),
            ("ll", "晚安", 10, "thread"),
            ("dx", "明天见", 10, "thread"),
            ("ww", "牛牛晚安", 100, "address"),
            ("bot", "晚安 好梦", 5),
        ],
    ),
]

GAME_FILLER_LINES = [
    ("今天的日常做完了", "statement"),
    ("理智又溢出了", "statement"),
    ("刚刷完芯片本", "statement"),
    ("基建换班好麻烦", "statement"),
    ("有人要加好友吗 助战银灰", "poll"),
    ("你们抽新池子了吗", "member_q"),
    ("这期活动你们肝完了吗", "member_q"),
    ("谁有好的基建排班", "poll"),
    ("合成玉还剩多少", "member_q"),
    ("我在打剿灭", "statement"),
    ("公招出了个资深", "statement"),
    ("有人一起刷材料吗", "poll"),
    ("今天蹲直播", "statement"),
    ("你们几级了", "member_q"),
    ("刚才那关好难", "statement"),
    ("这皮肤好贵", "statement"),
    ("下个池子攒不攒", "member_q"),
    ("我去吃个饭", "statement"),
]


# ============================================================================ writer


class Writer:
    def __init__(self, seed: int, group_id: int, members: dict[str, Member], day: datetime):
        self.rng = random.Random(seed)
        self.group_id = group_id
        self.members = members
        self.day = day
        self.events: list[dict[str, Any]] = []
        self.labels: dict[str, str] = {}  # message id → kind
        self.named: dict[str, tuple[int, int]] = {}
        self.last_bot: tuple[int, int] | None = None
        self.t = int(day.timestamp())
        self.used: set[int] = set()

    def new_id(self) -> int:
        while True:
            mid = self.rng.randint(-(2**31), 2**31 - 1)
            if mid and mid not in self.used:
                self.used.add(mid)
                return mid

    def _member_name(self, user_id: int) -> str:
        for m in self.members.values():
            if m.user_id == user_id:
                return m.card or m.nickname
        return BOT_NAME

    def segments(self, text: str, *, is_bot: bool) -> list[dict[str, Any]]:
        segs: list[dict[str, Any]] = []
        for part in _TOKEN_RE.split(text):
            if not part:
                continue
            if part.startswith("@") and (part[1:] in self.members or part[1:] in ("bot", "all")):
                key = part[1:]
                if key == "bot":
                    segs.append({"type": "at", "data": {"qq": str(BOT_ID), "name": BOT_NAME}})
                elif key == "all":
                    segs.append({"type": "at", "data": {"qq": "all", "name": "全体成员"}})
                else:
                    m = self.members[key]
                    segs.append(
                        {"type": "at", "data": {"qq": str(m.user_id), "name": m.card or m.nickname}}
                    )
            elif part.startswith("[reply:"):
                label = part[7:-1]
                target = self.last_bot if label == "bot" else self.named[label]
                assert target is not None, label
                mid, author = target
                segs.append({"type": "reply", "data": {"id": str(mid)}})
                if not is_bot:
                    name = self._member_name(author)
                    segs.append({"type": "at", "data": {"qq": str(author), "name": name}})
            elif part.startswith("[face:"):
                segs.append({"type": "face", "data": {"id": part[6:-1]}})
            elif part == "[img]":
                digest = f"{self.rng.getrandbits(128):032X}"
                segs.append(
                    {
                        "type": "image",
                        "data": {
                            "file": f"{digest}.jpg",
                            "subType": 0,
                            "url": f"https://multimedia.nt.qq.com.cn/download?fileid={digest}",
                        },
                    }
                )
            else:
                text_part = part if segs else part.lstrip()
                if text_part.strip():
                    segs.append({"type": "text", "data": {"text": text_part}})
        return segs

    def _event(self, user_id: int, sender: dict[str, Any], segs: list[dict[str, Any]]) -> int:
        mid = self.new_id()
        event = {
            "self_id": BOT_ID,
            "user_id": user_id,
            "time": self.t,
            "message_id": mid,
            "message_seq": mid,
            "real_id": mid,
            "message_type": "group",
            "sender": sender,
            "raw_message": to_cq(segs),
            "font": 14,
            "sub_type": "normal",
            "message": segs,
            "message_format": "array",
            "post_type": "message",
            "group_id": self.group_id,
        }
        if user_id == BOT_ID:
            event["post_type"] = "message_sent"
            event["message_sent_type"] = "self"
            event["target_id"] = self.group_id
        self.events.append(event)
        return mid

    def member(self, key: str, text: str, gap: int, kind: str, label: str | None = None) -> None:
        self.t += gap
        m = self.members[key]
        sender = {
            "user_id": m.user_id,
            "nickname": m.nickname,
            "card": m.card,
            "role": m.role,
            "title": "",
            "level": "30",
        }
        mid = self._event(m.user_id, sender, self.segments(text, is_bot=False))
        self.labels[str(mid)] = kind
        if label:
            self.named[label] = (mid, m.user_id)

    def bot(self, text: str, gap: int) -> None:
        self.t += gap
        sender = {"user_id": BOT_ID, "nickname": BOT_NAME, "card": "", "role": "member"}
        for index, bubble in enumerate(b.strip() for b in text.split(" / ")):
            if index:
                self.t += self.rng.randint(1, 3)
            mid = self._event(BOT_ID, sender, self.segments(bubble, is_bot=True))
            self.last_bot = (mid, BOT_ID)

    def filler(self, count: int, until: int, lines: list[tuple[str, str]]) -> None:
        """Background chatter spread over the time left before `until`; some get an answer."""
        keys = [k for k, m in self.members.items() if m.role == "member" and k not in NO_FILL]
        step = max(20, (until - self.t - 60) // max(count, 1))
        written = 0
        while written < count:
            gap = max(5, int(self.rng.uniform(0.3, 1.7) * step))
            who = self.rng.choice(keys)
            if self.rng.random() < 0.55:
                text, kind = self.rng.choice(lines)
            else:
                text, kind = self.rng.choice(NOISE), "noise"
            self.member(who, text, gap, kind)
            written += 1
            if written < count and kind in ("member_q", "poll") and self.rng.random() < 0.7:
                other = self.rng.choice([k for k in keys if k != who])
                answer = self.rng.choice(["不知道", "我也想知道", "好像是", "@" + who + " 我也是"])
                self.member(other, answer, self.rng.randint(10, 60), "thread")
                written += 1

    def run(self, scenes: list[tuple[str, list[Step]]], fill: int, lines: Any, day: int) -> None:
        per_gap = fill // (len(scenes) + 1)
        self.t = max(self.t, int(self.day.timestamp()) + day * 86400 + 7 * 3600)
        for hms, steps in scenes:
            h, mi, s = (int(x) for x in hms.split(":"))
            start = int(self.day.replace(hour=h, minute=mi, second=s).timestamp())
            start += day * 86400
            self.filler(per_gap, start, lines)
            self.t = max(self.t + 30, start)
            for step in steps:
                who, text, gap = step[0], step[1], step[2]
                if who == "bot":
                    self.bot(text, gap)
                else:
                    self.member(who, text, gap, step[3], step[4] if len(step) > 4 else None)
        self.filler(per_gap, self.t + 3600, lines)

    def write(self, name: str) -> None:
        out = HERE / f"{name}.jsonl"
        with out.open("w", encoding="utf-8") as fh:
            for event in self.events:
                fh.write(json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n")
        (HERE / f"{name}.labels.json").write_text(
            json.dumps(self.labels, ensure_ascii=False, indent=0, sort_keys=True) + "\n",
            encoding="utf-8",
        )
        print(f"wrote {out.name}: {len(self.events)} events, {len(self.labels)} member messages")


NO_FILL = frozenset({"hr", "zhong", "dl", "sh", "fu"})


def main() -> None:
    campus = Writer(20240520, 612039487, CAMPUS_MEMBERS, datetime(2024, 5, 20, 0, 0, 0, tzinfo=TZ))
    campus.run(CAMPUS_DAY1, 110, CAMPUS_FILLER_LINES, 0)
    campus.run(CAMPUS_DAY2, 70, CAMPUS_FILLER_LINES, 1)
    campus.write("campus_group")
    game = Writer(20250601, 781230495, GAME_MEMBERS, datetime(2025, 6, 1, 0, 0, 0, tzinfo=TZ))
    game.run(GAME_DAY, 140, GAME_FILLER_LINES, 0)
    game.write("game_group")


if __name__ == "__main__":
    main()
