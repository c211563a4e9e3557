"""Built-in phrase pools for the PASS low-engagement exit (帕拉斯 / 牛牛, soft and well-behaved).

Every pool can be replaced per group or persona through `LowEngagementConfig`; whatever the
source, phrases pass `low_engagement.is_clean_phrase` (length, no CQ codes, blocklist) first.
"""

from __future__ import annotations

# Soft pool: short acknowledgements, used for plain statements only when a group turns
# `low_engagement.statement_phrases` on (by default a plain statement gets silence). Nothing
# here reads as an answer, a question or an instruction (no trailing ？/吧/呀/呢).
SOFT_POOL: tuple[str, ...] = (
    "嗯嗯",
    "原来如此",
    "确实",
    "哦哦",
    "有道理",
    "欸嘿",
    "嘿嘿",
    "听起来不错",
)

# Good news (六级过了 / offer 到手 / 出货了): cheer along.
GOOD_NEWS_POOL: tuple[str, ...] = (
    "好耶",
    "好耶！",
    "恭喜恭喜",
    "太好了",
    "厉害了",
    "好诶",
    "✨",
)

# Surprise (卧槽 / 居然 / 原来): a small echo of the surprise, never a question.
SURPRISE_POOL: tuple[str, ...] = (
    "诶",
    "欸",
    "哇",
    "好家伙",
    "啊这",
    "👀",
)

# Thanks / teasing aimed at the bot (follow-up window or a mention of its name).
WARM_POOL: tuple[str, ...] = (
    "嘿嘿",
    "欸嘿",
    "不客气",
    "小事一桩",
    "(・ω・)",
)

# Venting / emotion: comfort or a gentle tangent.
EMOTION_TANGENT_POOL: tuple[str, ...] = (
    "抱抱",
    "摸摸头",
    "辛苦啦",
    "缓一缓",
    "先歇会儿",
    "会好起来的",
    "陪你一会",
)

# Fallback when the statement pools are empty after filtering (statement_phrases only).
EMOJI_POOL: tuple[str, ...] = ("🐮", "👀", "✨", "😊", "(・ω・)")

# Aggressive or dirty fragments: any phrase containing one of these never enters a pool.
BLOCKLIST: tuple[str, ...] = (
    "傻逼", "煞笔", "傻b", "sb", "脑残", "智障", "弱智", "废物", "垃圾", "去死", "死妈",
    "妈的", "他妈", "你妈", "尼玛", "草泥马", "cnm", "nmsl", "tmd", "wdnmd", "操", "艹",
    "滚", "爬", "闭嘴", "fuck", "shit", "bitch", "贱", "婊", "屌", "鸡巴", "狗东西", "畜生",
    "蠢", "傻", "滚蛋", "恶心", "丑",
)  # fmt: skip
