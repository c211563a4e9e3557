"""Built-in phrase pools for the PASS low-engagement exit (帕拉斯 / 牛牛, soft and well-behaved).

Every pool can be replaced per group or persona through `LowEngagementConfig`; whatever the
source, phrases pass `low_engagement.is_clean_phrase` (length, no CQ codes, blocklist) first.
"""

from __future__ import annotations

# General soft pool: short, gentle acknowledgements in character.
SOFT_POOL: tuple[str, ...] = (
    "嗯嗯",
    "在听呢",
    "诶？",
    "原来如此",
    "确实",
    "好耶",
    "哦哦",
    "有道理",
    "欸嘿",
    "牛牛在呢",
    "记下啦",
    "嘿嘿",
    "是这样呀",
    "听起来不错",
    "好哦",
)

# Emotion tangent pool: a clean, gentle one-line shift when the text carries emotion words.
EMOTION_TANGENT_POOL: tuple[str, ...] = (
    "没绷住",
    "休息会",
    "抱抱",
    "摸摸头",
    "辛苦啦",
    "缓一缓",
    "喝口水吧",
    "先歇会儿",
    "会好起来的",
    "深呼吸～",
    "陪你一会",
)

# Fallback when every other pool is empty after filtering.
EMOJI_POOL: tuple[str, ...] = ("🐮", "👀", "✨", "😊", "(・ω・)")

# Aggressive or dirty fragments: any phrase containing one of these never enters a pool.
BLOCKLIST: tuple[str, ...] = (
    "傻逼", "煞笔", "傻b", "sb", "脑残", "智障", "弱智", "废物", "垃圾", "去死", "死妈",
    "妈的", "他妈", "你妈", "尼玛", "草泥马", "cnm", "nmsl", "tmd", "wdnmd", "操", "艹",
    "滚", "爬", "闭嘴", "fuck", "shit", "bitch", "贱", "婊", "屌", "鸡巴", "狗东西", "畜生",
    "蠢", "傻", "滚蛋", "恶心", "丑",
)  # fmt: skip
