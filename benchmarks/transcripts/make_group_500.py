"""Generate `group_500.jsonl`: a realistic evening of one QQ group as OneBot v11 events.

Deterministic (fixed seed, fixed start time): running it again rewrites the same file.

    .venv/bin/python benchmarks/transcripts/make_group_500.py            # writes group_500.jsonl
    .venv/bin/pallas replay benchmarks/transcripts/group_500.jsonl

Saturday 17 May 2025, 19:41 to about 23:55 (UTC+8) in group 738291046. Ten members with cards /
nicknames (an owner, an admin), a spammer who joins and is kicked, and the bot (帕拉斯, alias
牛牛, self_id 2854196310) whose live answers are in the log as its own lines (`message_sent`,
and a few as `message` with `user_id == self_id`, as LLOneBot reports them). Scripted scenes
(greetings, dinner, gacha, homework, venting, an admin's raffle, anime recommendations, cat
pictures, teasing and "牛牛闭嘴", a VLOOKUP question, a 复读 chain, good-nights) alternate with
background chatter and noise (哈哈哈, 666, ？？？, faces, market faces, images) so that exactly
500 member messages are in the file, plus a few notices (join, kick, recall, poke).

Scene syntax, one step per tuple `(who, text, gap[, label])`:
- `who`: a member key, or "bot" for the bot's own line;
- `text` tokens: `@bot`, `@all`, `@<member>`, `[img]`, `[face:ID]`, `[mface:摘要]`,
  `[reply:LABEL]` (quote a labelled message; a member's quote adds QQ's automatic @author),
  `[reply:bot]` (quote the bot's latest line), ` / ` separates bubbles of one bot answer;
- `gap`: seconds after the previous message (an int, a (lo, hi) range, or None for 5–30 s);
- `label`: name this message for later quotes.
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

SEED = 20250517
BOT_ID = 2854196310
GROUP_ID = 738291046
TZ = timezone(timedelta(hours=8))
START = datetime(2025, 5, 17, 19, 41, 7, tzinfo=TZ)
TARGET_MEMBER_MESSAGES = 500
OUT = Path(__file__).with_name("group_500.jsonl")


@dataclass(frozen=True)
class Member:
    user_id: int
    nickname: str
    card: str = ""
    role: str = "member"
    level: str = "20"
    title: str = ""


MEMBERS = {
    "chen": Member(1023847561, "陈年老酒", "群主·老陈", "owner", "64", "养生大师"),
    "jie": Member(2947583016, "阿杰Jay", "管理｜阿杰", "admin", "51"),
    "yu": Member(3318204957, "鱼鱼今天也想摸鱼", "小鱼干", level="33"),
    "rin": Member(1769320485, "Rin_凛", "", level="28"),
    "momo": Member(2210938476, "momo", "momo不想上班", level="40"),
    "tudou": Member(3489012765, "土豆", "土豆丝", level="37"),
    "mao": Member(1184736092, "夜猫子", "夜猫子（熬夜冠军）", level="45"),
    "bai": Member(2675019384, "白白白白", "", level="12"),
    "youzi": Member(3056128847, "柚子", "柚子🍊", level="39"),
    "wang": Member(1590847326, "老王", "隔壁老王", level="48"),
    "spam": Member(3920481756, "小甜甜", "", level="1"),
}
BOT_NAME = "帕拉斯"

# --------------------------------------------------------------------------- scenes
# Each scene: (start "HH:MM:SS", steps). Member keys as in MEMBERS.

SCENES: list[tuple[str, list[tuple[Any, ...]]]] = [
    (
        "20:30:40",
        [
            ("youzi", "外面下雨了", 0),
            ("tudou", "真的 好大", 15),
            ("wang", "我衣服还晾在外面", 20),
            ("wang", "完了", 3),
            ("youzi", "哈哈哈哈 快去收", 8),
            ("wang", "已经湿透了 [mface:裂开]", 90),
            ("mao", "节哀", 10),
        ],
    ),
    (
        "20:45:30",
        [
            ("rin", "有没有好听的歌推荐", 0),
            ("yu", "最近在听周杰伦的新歌", 30),
            ("rin", "他出新歌了？", 8),
            ("yu", "骗你的", 5),
            ("rin", "？", 3),
            ("mao", "听点摇滚 这个乐队不错", 40),
            ("mao", "[img]", 3, "mao_band"),
            ("rin", "[reply:mao_band] 存了", 30),
        ],
    ),
    (
        "21:09:40",
        [
            ("tudou", "电脑又蓝屏了", 0),
            ("tudou", "这周第三次了", 4),
            ("wang", "重装吧", 20),
            ("tudou", "不想重装 资料太多", 10),
            ("chen", "先看看是不是内存条松了", 30),
            ("tudou", "牛牛 电脑老是蓝屏怎么办", 40, "tudou_bsod"),
            ("bot", "先记一下蓝屏代码 / 常见的是内存或者驱动的问题", 8),
            ("tudou", "[reply:bot] 代码是MEMORY_MANAGEMENT", 60),
            ("bot", "那大概率是内存 断电后拔下来擦擦金手指再插回去试试", 8),
            ("tudou", "好 我试试", 15),
            ("tudou", "好了！！", 240),
            ("tudou", "牛牛牛", 4),
            ("wang", "土豆终于不是菜鸡了", 20),
        ],
    ),
    (
        "21:24:10",
        [
            ("chen", "[json:晚上十点前睡觉的十大好处]", 0),
            ("mao", "又是养生文章", 20),
            ("yu", "老陈的朋友圈既视感", 15),
            ("chen", "你们不懂", 25),
            ("wang", "老陈 下次发点有用的", 10),
            ("chen", "@wang 你懂什么", 12),
            ("bai", "[mface:吃瓜]", 6),
        ],
    ),
    (
        "21:44:00",
        [
            ("jie", "下周六群里约个饭 有人来吗", 0, "jie_dinner"),
            ("tudou", "我来", 10),
            ("youzi", "+1", 5),
            ("yu", "在哪啊", 12),
            ("jie", "还没定 大概市中心", 20),
            ("momo", "不加班就来", 15),
            ("wang", "[reply:jie_dinner] AA吗", 20),
            ("jie", "当然AA", 6),
            ("youzi", "牛牛你也来吗", 30),
            ("bot", "我去不了 帮我多吃两口", 7),
        ],
    ),
    (
        "22:05:20",
        [
            (
                "momo",
                "今天真的离谱 早上地铁坐过站 中午外卖送错 下午被老板当众说方案不行 "
                "晚上还要加班改 我到底做错了什么",
                0,
            ),
            ("youzi", "抱抱 太惨了", 25),
            ("tudou", "明天会好的", 10),
            ("rin", "我觉得", 20),
            ("rin", "你该换个老板了", 6),
            ("momo", "哈哈哈 换不起", 15),
        ],
    ),
    (
        "22:24:20",
        [
            ("yu", "@bot 帮我翻译一下 break a leg 是什么意思", 0),
            ("bot", "字面是摔断腿 其实是祝你好运 / 演出前常说", 8),
            ("yu", "原来是祝好运", 20),
            ("mao", "学到了", 10),
            ("yu", "我还以为是骂人的", 8),
        ],
    ),
    (
        "22:46:40",
        [
            ("wang", "猜猜我今天晚饭吃了啥", 0),
            ("mao", "泡面", 15),
            ("wang", "对了", 6),
            ("yu", "哈哈哈哈", 4),
            ("wang", "还加了两个蛋", 10),
            ("tudou", "豪华", 8),
        ],
    ),
    (
        "23:05:10",
        [
            ("yu", "@rin 你刚才问牛牛的那个番好看吗", 0),
            ("rin", "@yu 还没看 明天看", 40),
            ("yu", "看完告诉我", 10),
        ],
    ),
    (
        "23:14:50",
        [
            ("wang", "牛牛 我考考你 1+1等于几", 0),
            ("bot", "2 这题我会", 6),
            ("wang", "错 等于田", 20),
            ("yu", "哈哈哈哈哈", 5),
            ("mao", "老梗了", 8),
            ("wang", "牛牛你被骗了吧", 15),
            ("bot", "哼 下次不上当了", 6),
        ],
    ),
    (
        "23:25:00",
        [
            ("tudou", "有人吃夜宵吗", 0),
            ("mao", "我点了炸鸡", 20),
            ("tudou", "[img] 我的烤冷面", 40),
            ("bai", "馋", 8),
            ("mao", "牛牛吃夜宵吗", 30),
            ("bot", "我吃草就行（", 6),
            ("mao", "哈哈哈哈哈", 6),
        ],
    ),
    (
        "19:41:07",
        [
            ("youzi", "晚上好呀", 0),
            ("tudou", "晚上好", 11),
            ("youzi", "今天群里好安静", 25),
            ("bai", "[mface:来了来了]", 40),
            ("momo", "下班了下班了 终于", 70),
            ("momo", "今天加班到七点 累死了", 6),
            ("youzi", "摸摸momo", 14),
            ("mao", "才七点 我刚起床（", 35),
            ("chen", "你这作息迟早出事", 22),
            ("momo", "我真的会谢", 9),
            ("momo", "周六还开会", 2),
            ("momo", "开到六点半", 2),
            ("momo", "[mface:心累]", 3),
            ("youzi", "牛牛晚上好～", 48),
            ("bot", "晚上好呀柚子～", 5),
            ("youzi", "[reply:bot] 嘿嘿 牛牛今天也很乖", 20),
            ("bot", "那是当然", 6),
            ("bai", "[face:178]", 15),
        ],
    ),
    (
        "19:52:40",
        [
            ("tudou", "晚饭吃啥 纠结死了", 0),
            ("tudou", "想吃麻辣烫又想吃烧烤", 4),
            ("yu", "烧烤！", 9),
            ("momo", "我点了黄焖鸡", 20),
            ("tudou", "黄焖鸡是打工人的归宿", 12, "huangmen"),
            ("momo", "哈哈哈哈哈", 7),
            ("wang", "[reply:huangmen] 精辟", 15),
            ("tudou", "@bot 麻辣烫和烧烤选一个 你选哪个", 30, "tudou_food"),
            ("bot", "选烧烤！周末就该吃点快乐的", 6),
            ("tudou", "[reply:bot] 好 听牛牛的", 18),
            ("bai", "666", 5),
            ("tudou", "[img] 点好了", 420),
            ("yu", "馋了", 12),
            ("chen", "年轻人少吃点烧烤 [face:178]", 40),
            ("tudou", "[reply:bot] 牛牛选的 不怪我", 25),
            ("bot", "我只负责推荐 不负责体重（", 7),
            ("yu", "哈哈哈哈哈哈哈", 6),
        ],
    ),
    (
        "20:09:30",
        [
            ("yu", "新池子你们抽了吗", 0),
            ("mao", "抽了 120抽才出", 18),
            ("yu", "我60抽出了 嘿嘿", 10, "yu_60"),
            ("mao", "？？？", 3),
            ("mao", "欧皇滚出去", 3),
            ("yu", "[mface:嘚瑟]", 6),
            ("rin", "我还在攒 等下个限定", 30),
            ("yu", "@bot 帕拉斯你觉得这期卡池值得抽吗", 25, "yu_pool"),
            ("bot", "缺这个职业位的话挺值得的 / 不缺就攒着等限定吧", 7),
            ("yu", "[reply:bot] 可是她好好看啊", 30),
            ("bot", "好看就是最大的强度（", 6),
            ("mao", "确实", 8),
            ("wang", "牛牛也是干员吧", 40),
            ("wang", "牛牛你自己几星", 12),
            ("bot", "六星！不接受反驳", 6),
            ("wang", "哈哈哈哈哈哈", 9),
            ("yu", "草", 4),
            ("mao", "[reply:yu_60] 我记住你了", 50),
            ("yu", "[mface:狗头]", 7),
        ],
    ),
    (
        "20:18:10",
        [
            ("spam", "免费领皮肤 加我微信 wx8866123 先到先得", 0, "spam1"),
            ("spam", "点击链接 https://t.cn/A6xYz 不用下载直接玩", 4),
            ("mao", "？", 20),
            ("jie", "@spam 别发广告", 25),
            ("!kick", "spam", 30),
            ("!recall", "spam1", 2),
            ("jie", "已踢 大家别点链接", 15),
            ("wang", "管理辛苦了", 10),
            ("chen", "辛苦了", 20),
        ],
    ),
    (
        "20:25:00",
        [
            ("chen", "@yu 作业写完没就在这抽卡", 0),
            ("yu", "@chen 写完了写完了", 20),
            ("yu", "骗你的", 5),
            ("chen", "[face:178]", 15),
            ("yu", "高数好难啊", 60),
            ("yu", "有没有人会求极限", 8),
            ("mao", "别问 问就是洛必达", 25),
            ("yu", "@bot 洛必达法则什么时候不能用啊", 30, "yu_lhopital"),
            ("bot", "得是0/0或者∞/∞型才能用哦 / 而且导数之比的极限要存在", 8),
            ("yu", "[reply:bot] 懂了 谢谢牛牛", 40),
            ("yu", "那x趋于无穷的时候sinx/x呢", 20),
            ("mao", "这个不能洛", 30),
            ("yu", "为啥", 6),
            ("mao", "问牛牛", 10),
        ],
    ),
    (
        "20:39:20",
        [
            ("momo", "烦死了", 0),
            ("momo", "老板说周末要改方案", 6),
            ("momo", "我真的想辞职", 5),
            ("youzi", "抱抱momo", 25),
            ("tudou", "辞了去开烧烤店 我天天去", 20),
            ("momo", "[mface:哭哭]", 10),
            ("momo", "累了 毁灭吧", 30),
            ("chen", "年轻人别冲动 先骑驴找马", 40),
            ("momo", "牛牛 我好累啊", 35),
            ("bot", "抱抱 先好好睡一觉 / 方案的事明天再烦也来得及", 7),
            ("momo", "[reply:bot] 呜呜还是牛牛好", 25),
            ("wang", "那我们呢", 12),
            ("momo", "你们也好（敷衍）", 9),
            ("wang", "哈哈哈哈", 5),
        ],
    ),
    (
        "20:55:00",
        [
            ("jie", "@all 今晚十点群里抽奖 送两份周边 记得来", 0, "jie_notice"),
            ("jie", "别刷屏啊 抽奖用群里的小程序", 15),
            ("bai", "来了来了", 20),
            ("mao", "好耶", 6),
            ("rin", "[reply:jie_notice] 什么周边", 30),
            ("jie", "立牌和徽章", 20),
            ("rin", "冲", 5),
            ("wang", "管理 能内定吗", 25),
            ("jie", "想得美", 8),
            ("youzi", "哈哈哈哈哈哈", 4),
        ],
    ),
    (
        "21:04:40",
        [
            ("rin", "最近有什么好看的番", 0),
            ("rin", "想看轻松一点的", 5),
            ("yu", "葬送的芙莉莲", 20),
            ("rin", "看过了 哭死", 10),
            ("rin", "@bot 推荐几部日常番吧 不要太虐的", 35, "rin_anime"),
            ("rin", "最好是新一点的", 2),
            ("rin", "老番也行", 2),
            ("bot", "可以试试《摇曳露营》 很治愈 / 老番的话《夏目友人帐》也不错", 8),
            ("rin", "[reply:bot] 夏目看过 摇曳露营记下了", 40),
            ("youzi", "夏目超好哭的", 15),
            ("rin", "不是说日常番吗怎么又要哭了", 10),
            ("youzi", "哈哈哈哈哈", 5),
            ("rin", "牛牛 还有别的吗 最好是搞笑的", 45),
            ("bot", "搞笑的话《日常》和《男子高中生的日常》 / 看的时候别喝水", 8),
            ("rin", "好！", 20),
        ],
    ),
    (
        "21:19:30",
        [
            ("youzi", "[img]", 0, "cat_pic"),
            ("youzi", "我家猫今天又拆家了", 5),
            ("tudou", "[reply:cat_pic] 好胖", 20),
            ("youzi", "那叫圆润！", 6),
            ("bai", "[face:66]", 10),
            ("bai", "[face:66]", 2),
            ("mao", "[mface:猫猫震惊]", 15),
            ("youzi", "@bot [img] 牛牛你看我家猫可爱吗", 40),
            ("bot", "好圆的小猫！想摸", 7),
            ("youzi", "[reply:bot] 只能云摸了", 25),
            ("chen", "我家狗也想出镜", 60),
            ("chen", "[img]", 5),
            ("yu", "哇 柯基", 20),
            ("chen", "[reply:bot] 牛牛看看狗", 15),
            ("bot", "柯基的屁股好圆 / 老陈家伙食不错啊", 7),
        ],
    ),
    (
        "21:34:00",
        [
            ("wang", "牛牛 你会唱歌吗", 0),
            ("bot", "不会哦 不过可以给你哼两句（", 6),
            ("wang", "牛牛 你是不是人工智障", 30),
            ("bot", "哼 你才是", 6, "bot_zhizhang"),
            ("wang", "哈哈哈哈哈", 7),
            ("wang", "牛牛 讲个笑话", 20),
            ("bot", "从前有头牛去买奶茶 / 店员问它要什么 它说牛乳茶", 8, "bot_joke"),
            ("mao", "？？？", 10),
            ("chen", "这笑话比我的还冷", 15),
            ("yu", "冷死了", 6),
            ("wang", "牛牛闭嘴", 12),
            ("mao", "哈哈哈哈哈哈哈", 5),
            ("youzi", "牛牛好可怜", 15),
            ("wang", "让它歇会", 10),
            ("tudou", "今晚谁打游戏", 100),
            ("mao", "我 瓦", 10),
            ("tudou", "带我一个", 8),
            ("mao", "你太菜了 不带", 6),
            ("tudou", "[mface:委屈]", 5),
            ("wang", "@bot 刚才凶你了 别生气哈", 240),
            ("bot", "没生气啦 下次笑话我准备好点", 7),
        ],
    ),
    (
        "21:50:10",
        [
            ("tudou", "有人知道周末哪里有漫展吗", 0, "tudou_expo"),
            ("rin", "好像会展中心有一个", 30),
            ("tudou", "票多少钱", 10),
            ("rin", "五六十吧", 20),
            ("tudou", "好 去看看", 15),
            ("yu", "带我带我", 10),
            ("rin", "[reply:tudou_expo] 我也去 可以一起", 25),
        ],
    ),
    (
        "22:00:05",
        [
            ("jie", "抽奖开始了 点群里的小程序参与", 0),
            ("bai", "来了", 5),
            ("mao", "冲", 3),
            ("wang", "冲冲冲", 2),
            ("youzi", "参与了", 6),
            ("rin", "保佑保佑", 8),
            ("yu", "[mface:拜托]", 4),
            ("momo", "我从来没中过", 15),
            ("jie", "开奖了 恭喜 @yu @rin 私聊我发地址", 120, "jie_lottery"),
            ("yu", "[reply:jie_lottery] 啊啊啊我中了！", 6),
            ("rin", "[reply:jie_lottery] 我也中了 好耶", 8),
            ("mao", "黑幕！", 4),
            ("wang", "内定！", 3, "wang_neiding"),
            ("jie", "[reply:wang_neiding] 系统随机的 别造谣", 20),
            ("momo", "恭喜恭喜", 10),
            ("yu", "@bot 我中奖了！！", 25),
            ("bot", "恭喜小鱼干！今天是欧皇日", 6),
            ("yu", "[reply:bot] 嘿嘿 今天运气用完了", 20),
            ("mao", "[reply:yu_60] 抽卡欧 抽奖也欧 过分了", 15),
        ],
    ),
    (
        "22:12:00",
        [
            ("mao", "瓦又输了", 0),
            ("mao", "队友全是演员", 3),
            ("mao", "气死了", 2),
            ("tudou", "我不是演员 我是真菜", 20),
            ("mao", "哈哈哈", 5),
            ("mao", "牛牛你说我是不是该卸载了", 40),
            ("bot", "卸载就不用了 先休息一会儿 / 连跪的时候换个心情再来", 8),
            ("mao", "[reply:bot] 好 再来一把", 20),
            ("mao", "不行", 600),
            ("mao", "还是输了", 2),
            ("mao", "我是fw", 3),
            ("tudou", "摸摸", 15),
        ],
    ),
    (
        "22:31:00",
        [
            ("chen", "年轻人都几点睡", 0),
            ("mao", "四点", 10),
            ("yu", "一点吧", 15),
            ("chen", "都早点睡", 8),
            ("chen", "@bot 熬夜对身体到底有多大伤害", 20, "chen_sleep"),
            ("bot", "长期熬夜会影响免疫力和记忆力 / 偶尔一次补个觉问题不大", 8),
            ("chen", "[reply!:bot] 听见没 @mao", 25),
            ("mao", "听不见听不见", 10),
            ("wang", "[reply:bot_joke] 这个笑话我回味了一下 还是好冷", 60),
            ("yu", "哈哈哈哈哈哈", 8),
        ],
    ),
    (
        "22:41:30",
        [
            ("momo", "有人会excel吗", 0),
            ("momo", "vlookup老是报错", 4),
            ("tudou", "问牛牛", 30),
            ("momo", "@bot vlookup为什么一直返回#N/A", 15, "momo_excel"),
            (
                "bot",
                "多半是查找值和表里的格式不一致 / 比如一个是文本一个是数字 用trim或value处理下",
                9,
            ),
            ("momo", "[reply:bot] 卧槽真的是 一个文本一个数字", 90),
            ("momo", "牛牛yyds", 5),
            ("bot", "嘿嘿 改好了就早点休息", 6),
            ("momo", "周六晚上在群里学excel 我好惨", 40),
            ("youzi", "抱抱", 10),
        ],
    ),
    (
        "22:55:00",
        [
            ("wang", "下班！", 0),
            ("mao", "下班！", 3),
            ("tudou", "下班！", 2),
            ("youzi", "下班！", 4),
            ("momo", "我周六还在加班 你们下什么班", 20),
            ("wang", "哈哈哈哈哈哈哈", 5),
            ("bai", "+1", 6),
        ],
    ),
    (
        "23:02:00",
        [
            ("rin", "你们觉得牛牛是真人吗", 0),
            ("yu", "肯定不是 回复太快了", 20),
            ("wang", "牛牛背后是个加班的程序员", 15),
            ("momo", "那他比我还惨", 10),
            ("rin", "牛牛 你是真人吗", 30),
            ("bot", "我是帕拉斯呀 群里的一头牛", 7),
            ("rin", "[reply:bot] 好的牛", 20),
        ],
    ),
    (
        "23:10:20",
        [
            ("yu", "牛牛 我跟你说", 0),
            ("bot", "嗯？怎么啦", 5),
            ("yu", "明天要早起去图书馆 但是我现在一点都不困", 15),
            ("bot", "那就把手机放远一点 躺着闭眼也算休息", 8),
            ("yu", "[reply:bot] 好难", 30),
            ("tudou", "@bot", 60),
            ("bot", "在呢 怎么了", 5),
            ("tudou", "明天吃什么", 10),
            ("bot", "早上来碗热干面？", 6),
        ],
    ),
    (
        "23:21:00",
        [
            ("youzi", "我先睡啦 晚安", 0),
            ("tudou", "晚安", 8),
            ("youzi", "牛牛晚安", 6),
            ("bot", "晚安柚子 好梦～", 6),
            ("chen", "我也睡了 你们早点睡", 40),
            ("mao", "夜生活才刚开始", 20),
            ("momo", "晚安", 30),
            ("wang", "晚安晚安", 10),
        ],
    ),
    (
        "23:40:00",
        [
            ("mao", "有人吗", 0),
            ("yu", "在", 40),
            ("mao", "睡不着", 10),
            ("yu", "我也是 明天早八", 15),
            ("mao", "哈哈哈 惨", 6),
            ("!poke", "yu", 20),
            ("yu", "牛牛 你睡了吗", 25),
            ("bot", "还没 陪你们熬一会儿", 6),
            ("yu", "别陪了 我要睡了", 20),
            ("yu", "晚安", 4),
            ("mao", "就剩我了", 60),
            ("mao", "[mface:孤单]", 10),
        ],
    ),
]

# --------------------------------------------------------------------------- background

NOISE = [
    "哈哈哈哈",
    "哈哈哈哈哈哈",
    "哈哈哈",
    "hhhhh",
    "666",
    "6666",
    "？？？",
    "?",
    "草",
    "笑死",
    "确实",
    "绷不住了",
    "好家伙",
    "典",
    "[face:178]",
    "[face:66]",
    "[face:212]",
    "[face:14]",
    "[mface:狗头]",
    "[mface:好耶]",
    "[mface:无语]",
    "[mface:点赞]",
    "[img]",
]
CHATTER: list[str | tuple[str, ...]] = [
    ("今天好热", "空调开起来"),
    ("刚到家 地铁上人好多", "周六也挤？", "附近有演唱会"),
    ("有人打瓦吗", "等会 我在吃饭"),
    ("周末有人出去玩吗", "宅家", "宅家+1"),
    "这周过得好快",
    "奶茶喝多了睡不着",
    "我宣布今天是摸鱼日",
    "群里今天好热闹",
    ("刚看完球赛 输了", "又输了？", "别提了"),
    "饿了",
    ("有没有推荐的耳机 三百以内", "漫步者吧", "谢谢"),
    ("我妈又催我找对象", "哈哈哈哈哈", "同款妈妈"),
    "明天要去体检 不能吃夜宵",
    "楼下又在装修",
    ("新买的键盘到了", "什么轴", "茶轴"),
    ("有人玩原神吗", "早退坑了"),
    "突然想吃火锅",
    ("我猫把我的耳机线咬断了", "猫：不关我事"),
    "这个月工资还没发",
    "刚洗完澡",
    "有没有人一起背单词",
    ("快递到了 开心", "买了啥", "秘密"),
    "今天跑了五公里",
    "刷到一个好好笑的视频",
    ("我好像感冒了", "多喝热水", "……"),
    "空调遥控器找不到了",
    "今天的晚霞好好看",
    "我在看老友记",
    "理发失败了 不想出门",
    ("你们用什么浏览器", "edge", "chrome"),
    "冰箱里只剩可乐了",
    "明天降温",
    "终于把房间收拾完了",
    "我又买了一堆用不上的东西",
    ("谁懂 外卖洒了", "太惨了"),
    "周一不想上班",
    "在看直播",
    "好无聊啊",
    "手机快没电了",
    "刚才那个视频谁发的",
    "有没有人知道哪里能修手表",
    "我去洗个澡",
    "回来了",
    "今天吃了三顿火锅",
    "想养只猫",
    "好困 但是不想睡",
    ("明天几点起", "睡到自然醒"),
    ("这游戏更新完好卡", "我也是"),
]
SPEAKER_WEIGHTS = {
    "bai": 5,
    "mao": 5,
    "wang": 4,
    "tudou": 4,
    "yu": 4,
    "youzi": 3,
    "rin": 3,
    "momo": 3,
    "chen": 2,
    "jie": 1,
}

_TOKEN_RE = re.compile(r"(@\w+|\[(?:reply!?|face|mface|img|json)(?::[^\]]*)?\])")


class Writer:
    def __init__(self) -> None:
        self.rng = random.Random(SEED)
        self.events: list[dict[str, Any]] = []
        self.t = int(START.timestamp())
        self.labels: dict[str, tuple[int, int]] = {}  # label → (message_id, user_id)
        self.last_bot: tuple[int, int] | None = None
        self.used_ids: set[int] = set()
        self.members = 0
        self.bot_lines = 0
        self.chatter_left = list(CHATTER)

    def new_id(self) -> int:
        while True:
            mid = self.rng.randint(-(2**31), 2**31 - 1)
            if mid not in self.used_ids and mid != 0:
                self.used_ids.add(mid)
                return mid

    def advance(self, gap: Any) -> None:
        if gap is None:
            gap = self.rng.randint(5, 30)
        elif isinstance(gap, tuple):
            gap = self.rng.randint(*gap)
        self.t += int(gap)

    def segments(self, text: str, *, is_bot: bool) -> list[dict[str, Any]]:
        segs: list[dict[str, Any]] = []
        for part in _TOKEN_RE.split(text):
            if not part:
                continue
            if part.startswith("@"):
                key = part[1:]
                if key == "bot":
                    segs.append({"type": "at", "data": {"qq": str(BOT_ID), "name": BOT_NAME}})
                elif key == "all":
                    segs.append({"type": "at", "data": {"qq": "all", "name": "全体成员"}})
                elif key in MEMBERS:
                    m = MEMBERS[key]
                    segs.append(
                        {"type": "at", "data": {"qq": str(m.user_id), "name": m.card or m.nickname}}
                    )
                else:
                    segs.append({"type": "text", "data": {"text": part}})
            elif part.startswith("[reply"):
                label = part.split(":", 1)[1][:-1]
                target = self.last_bot if label == "bot" else self.labels[label]
                assert target is not None
                mid, author = target
                segs.append({"type": "reply", "data": {"id": str(mid)}})
                if not is_bot and not part.startswith("[reply!"):
                    name = BOT_NAME if author == BOT_ID else _name_of(author)
                    segs.append({"type": "at", "data": {"qq": str(author), "name": name}})
            elif part.startswith("[face:"):
                segs.append({"type": "face", "data": {"id": part[6:-1]}})
            elif part.startswith("[mface:"):
                summary = part[7:-1]
                segs.append(
                    {
                        "type": "mface",
                        "data": {
                            "emoji_package_id": str(self.rng.randint(200000, 240000)),
                            "emoji_id": f"{self.rng.getrandbits(128):032x}",
                            "key": f"{self.rng.getrandbits(64):016x}",
                            "summary": f"[{summary}]",
                        },
                    }
                )
            elif part.startswith("[json:"):
                card = {
                    "app": "com.tencent.structmsg",
                    "prompt": f"[分享]{part[6:-1]}",
                    "meta": {"news": {"title": part[6:-1], "tag": "公众号"}},
                }
                segs.append(
                    {"type": "json", "data": {"data": json.dumps(card, ensure_ascii=False)}}
                )
            elif part == "[img]":
                digest = f"{self.rng.getrandbits(128):032X}"
                segs.append(
                    {
                        "type": "image",
                        "data": {
                            "file": f"{digest}.jpg",
                            "subType": 0,
                            "url": f"https://multimedia.nt.qq.com.cn/download?appid=1407&fileid={digest}",
                            "file_size": str(self.rng.randint(40_000, 900_000)),
                        },
                    }
                )
            else:
                stripped = part if segs else part.lstrip()
                if stripped.strip():
                    segs.append({"type": "text", "data": {"text": stripped}})
        return segs

    def member(self, key: str, text: str, gap: Any, label: str | None = None) -> None:
        self.advance(gap)
        m = MEMBERS[key]
        mid = self.new_id()
        segs = self.segments(text, is_bot=False)
        self.events.append(
            {
                "self_id": BOT_ID,
                "user_id": m.user_id,
                "time": self.t,
                "message_id": mid,
                "message_seq": mid,
                "real_id": mid,
                "message_type": "group",
                "sender": {
                    "user_id": m.user_id,
                    "nickname": m.nickname,
                    "card": m.card,
                    "role": m.role,
                    "title": m.title,
                    "level": m.level,
                },
                "raw_message": to_cq(segs),
                "font": 14,
                "sub_type": "normal",
                "message": segs,
                "message_format": "array",
                "post_type": "message",
                "group_id": GROUP_ID,
            }
        )
        self.members += 1
        if label:
            self.labels[label] = (mid, m.user_id)

    def bot(self, text: str, gap: Any, label: str | None = None) -> None:
        """The bot's live answer; ' / ' splits it into bubbles 1–3 s apart."""
        self.advance(gap)
        bubbles = [b.strip() for b in text.split(" / ")]
        for index, bubble in enumerate(bubbles):
            if index:
                self.t += self.rng.randint(1, 3)
            mid = self.new_id()
            segs = self.segments(bubble, is_bot=True)
            self.bot_lines += 1
            post_type = "message" if self.bot_lines % 4 == 0 else "message_sent"
            event = {
                "self_id": BOT_ID,
                "user_id": BOT_ID,
                "time": self.t,
                "message_id": mid,
                "message_seq": mid,
                "real_id": mid,
                "message_type": "group",
                "sender": {"user_id": BOT_ID, "nickname": BOT_NAME, "card": "", "role": "member"},
                "raw_message": to_cq(segs),
                "font": 14,
                "sub_type": "normal",
                "message": segs,
                "message_format": "array",
                "post_type": post_type,
                "group_id": GROUP_ID,
            }
            if post_type == "message_sent":
                event["message_sent_type"] = "self"
                event["target_id"] = GROUP_ID
            self.events.append(event)
            self.last_bot = (mid, BOT_ID)
            if label and index == 0:
                self.labels[label] = (mid, BOT_ID)

    def notice(self, kind: str, arg: str, gap: Any) -> None:
        self.advance(gap)
        base = {"time": self.t, "self_id": BOT_ID, "post_type": "notice", "group_id": GROUP_ID}
        if kind == "!kick":
            m = MEMBERS[arg]
            base.update(
                notice_type="group_decrease",
                sub_type="kick",
                user_id=m.user_id,
                operator_id=MEMBERS["jie"].user_id,
            )
        elif kind == "!recall":
            mid, author = self.labels[arg]
            base.update(
                notice_type="group_recall",
                user_id=author,
                operator_id=MEMBERS["jie"].user_id,
                message_id=mid,
            )
        elif kind == "!poke":
            base.update(
                notice_type="notify",
                sub_type="poke",
                user_id=MEMBERS["mao"].user_id,
                target_id=MEMBERS[arg].user_id,
            )
        self.events.append(base)

    def join(self, key: str, gap: Any) -> None:
        self.advance(gap)
        self.events.append(
            {
                "time": self.t,
                "self_id": BOT_ID,
                "post_type": "notice",
                "notice_type": "group_increase",
                "sub_type": "approve",
                "group_id": GROUP_ID,
                "user_id": MEMBERS[key].user_id,
                "operator_id": MEMBERS["jie"].user_id,
            }
        )

    def filler(self, count: int, until: int, *, speakers: tuple[str, ...] = ()) -> None:
        """`count` background messages spread over the time left before `until`.

        Small talk (a line, sometimes answered) and noise; about one in five gets an instant
        reaction from someone else.
        """
        if count <= 0:
            return
        span = max(until - self.t - 30, count * 6)
        step = span / (count + 1)
        keys = [k for k in SPEAKER_WEIGHTS if not speakers or k in speakers]
        weights = [SPEAKER_WEIGHTS[k] for k in keys]
        written = 0
        while written < count:
            gap = max(3, int(self.rng.uniform(0.3, 1.7) * step))
            who = self.rng.choices(keys, weights)[0]
            chatty = who != "bai" and self.chatter_left and self.rng.random() < 0.6
            if chatty:
                item = self.chatter_left.pop(self.rng.randrange(len(self.chatter_left)))
                lines = (item,) if isinstance(item, str) else item
                lines = lines[: count - written]
                speakers = [who]
                for _ in lines[1:]:
                    speakers.append(self.rng.choice([k for k in keys if k != speakers[-1]]))
                for index, (speaker, text) in enumerate(zip(speakers, lines, strict=True)):
                    self.member(speaker, text, gap if index == 0 else self.rng.randint(5, 25))
                written += len(lines)
            else:
                self.member(who, self.rng.choice(NOISE), gap)
                written += 1
            if written < count and self.rng.random() < 0.2:  # someone reacts right away
                other = self.rng.choices(keys, weights)[0]
                self.member(other, self.rng.choice(NOISE[:14]), self.rng.randint(2, 8))
                written += 1


def _name_of(user_id: int) -> str:
    for m in MEMBERS.values():
        if m.user_id == user_id:
            return m.card or m.nickname
    return str(user_id)


def _scene_members(steps: list[tuple[Any, ...]]) -> int:
    return sum(1 for s in steps if s[0] in MEMBERS)


def _at(hms: str) -> int:
    h, m, s = (int(x) for x in hms.split(":"))
    day = START.replace(hour=h, minute=m, second=s)
    return int(day.timestamp())


def build() -> Writer:
    w = Writer()
    scenes = sorted(SCENES, key=lambda scene: scene[0])
    scripted = sum(_scene_members(steps) for _, steps in scenes)
    assert scripted < TARGET_MEMBER_MESSAGES, f"scenes already have {scripted} member messages"
    # Background messages fill the quiet stretches between scenes: each stretch gets a share
    # of what is left (with some jitter); the late-night tail evens the count out.
    for index, (hms, steps) in enumerate(scenes):
        start = _at(hms)
        if index:
            stretches_left = len(scenes) - index + 1
            left = (
                TARGET_MEMBER_MESSAGES
                - w.members
                - sum(_scene_members(s) for _, s in scenes[index:])
            )
            share = round(left / stretches_left * w.rng.uniform(0.6, 1.4))
            w.filler(min(max(share, 0), left), start)
        if w.t < start:
            w.t = start
        else:  # the previous stretch ran late: the scene opens a little after it
            w.advance((20, 60))
        for step in steps:
            who, text, gap = step[0], step[1], step[2]
            label = step[3] if len(step) > 3 else None
            if who == "bot":
                w.bot(text, gap, label)
            elif who.startswith("!"):
                w.notice(who, text, gap)
            else:
                if who == "spam" and label == "spam1":
                    w.join("spam", 0)
                    gap = 40
                w.member(who, text, gap, label)
    # the ones still awake after the good-nights
    w.filler(TARGET_MEMBER_MESSAGES - w.members, w.t + 15 * 60, speakers=("mao", "bai", "wang"))
    assert w.members == TARGET_MEMBER_MESSAGES, w.members
    return w


def main() -> None:
    w = build()
    with OUT.open("w", encoding="utf-8") as fh:
        for event in w.events:
            fh.write(json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n")
    end = datetime.fromtimestamp(w.t, TZ).strftime("%H:%M")
    print(
        f"wrote {OUT.name}: {len(w.events)} events, {w.members} member messages, "
        f"{w.bot_lines} bot lines, until {end}"
    )


if __name__ == "__main__":
    main()
