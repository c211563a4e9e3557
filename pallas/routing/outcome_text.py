"""What a routing record's `outcome` means, in Chinese (`/pallas why`, the console).

The router's own outcomes (`RouteOutcome`) and the ones later stages write into the same log:
the cost guard's (`cost_*`), a member's memory command (`memory`), a turn that failed after
routing (`error`).
"""

from __future__ import annotations

OUTCOME_ZH: dict[str, str] = {
    "reply": "回复",
    "quote": "引用回复",
    "follow_up": "追问",
    "tool": "工具",
    "pass_phrase": "短句",
    "pass_silent": "静默",
    "skip": "跳过",
    "accumulate": "冷却中攒着",
    "defer": "等下文",
    "merge": "并入上一轮",
    "duplicate": "重复事件",
    "cost_limited": "限流",
    "cost_phrase": "预算用完·短句",
    "cost_drop": "预算降级·不回",
    "error": "回复失败",
    "memory": "记忆命令",
    "reminder": "提醒",
    "cost_degraded": "降级回复",
    "voice": "语音",
    "voice_fallback": "语音没发成·改发文字",
}


def outcome_zh(outcome: str) -> str:
    return OUTCOME_ZH.get(outcome, outcome)


STAGE_ZH: dict[str, str] = {
    "dedupe": "去重",
    "gate": "闸门",
    "stake": "插话判断",
    "admission": "排队",
    "cooldown": "冷却",
    "necessity": "必要性",
    "decision": "决定",
    "low_engagement": "不回时的短句",
    "restraint": "克制",
    "cost": "限流 / 预算",
    "llm": "模型调用",
    "memory_command": "记忆命令",
    "reminder": "提醒（设置 / 查看 / 取消）",
    "voice_command": "语音命令",
    "plugin": "其他插件",
}

REASON_ZH: dict[str, str] = {
    # gate
    "noise": "无意义的刷屏（哈哈哈 / 666 之类）",
    "short": "太短，又没有叫机器人",
    "bystander": "@ 的是别人",
    "shut_up": "有人让机器人闭嘴",
    "incomplete": "话还没说完",
    "empty": "没有内容",
    "face": "只有表情",
    "media": "只有图片 / 表情",
    "addressed": "叫了机器人",
    "addressed_media": "叫了机器人（带图）",
    "bare_address": "只叫了一声机器人",
    "content": "有内容",
    "duplicate": "同一条消息又收到一次",
    "state_unavailable": "状态存储不可用",
    # stake
    "no_stake": "没人叫机器人，话题和它无关",
    "stake_disabled": "插话判断已关闭",
    "ad_or_post": "广告或转贴的长文",
    "announcement": "公告",
    "member_thread": "两位群友在对话",
    "member_follow_on": "接着别的群友的话",
    "member_only_question": "问的是群友",
    # stakes that let an unaddressed line go on (`ambient_stake`)
    "worldbook": "说到了世界书里的词",
    "knowledge": "说到了群知识里的词",
    "remembered_topic": "说到了这位群友和机器人聊过的话题",
    "member_memory": "说到了机器人记得的这位群友的事",
    "topic": "说到了人设关心的话题",
    "open_question": "问了一个开放的问题",
    "emotion": "带着情绪（好消息、吐槽或惊讶）",
    # admission / cooldown
    "user_in_flight": "这位群友的上一轮还没回完，并入其中",
    "cooldown_claimed": "冷却中",
    "disabled": "本群已暂停",
    "silenced": "被要求闭嘴，安静中",
    "cooldown": "冷却中",
    "accumulate": "冷却中，先攒着",
    "queue_full": "排队的太多，丢弃",
    "concurrency_full": "同时进行的回复太多",
    # necessity / decision
    "low_necessity": "分数不够",
    "rule_reply": "回复",
    "rule_reply_quote": "引用回复",
    "rule_reply_short_social": "寒暄，简短回复",
    "rule_pass_low_necessity": "分数不够，不回",
    "rule_pass_short_social": "没叫机器人的寒暄，不回",
    "rule_follow_up_bare_address": "只叫了一声，追问",
    "rule_follow_up_incomplete": "话没说完，追问",
    "rule_tool": "用工具回答",
    "rule_reply_tool_not_permitted": "工具不允许，直接回复",
    "daily_cap": "今天主动说话的次数用完了",
    # low_engagement (after a PASS)
    "emit": "发了一句短句",
    "roll_miss": "没抽中短句，不说话",
    "no_phrase": "没有合适的短句",
    "statement_silence": "普通陈述，不说话",
    "question": "问题，不用短句应付",
}

TRIGGER_ZH: dict[str, str] = {
    "at": "@ 机器人",
    "alias": "叫了名字",
    "alias_vocative": "叫了名字",
    "reply": "回复机器人的消息",
    "reply_to_bot": "回复机器人的消息",
    "follow_up": "接着刚才的对话",
    "ambient": "旁听时想插话",
    "ambient_disabled": "没叫机器人（旁听插话已关）",
    "none": "没叫机器人",
    "duplicate": "重复消息",
}


def trigger_zh(trigger: str) -> str:
    return TRIGGER_ZH.get(trigger, trigger)


def reason_zh(stage: str, reason: str) -> str:
    """A routing record's `stage:reason` in Chinese (`gate:noise` → 闸门：无意义的刷屏…); a code
    with no wording stays as it is. Compound reasons (`rule_pass_low_necessity:silent`) read
    part by part. `handled_by_plugin:<id>`: another NoneBot plugin of the bot answered."""
    plugin = reason.removeprefix("handled_by_plugin:")
    if plugin != reason:
        return f"{STAGE_ZH.get(stage, stage)}：由插件 {plugin} 处理"
    parts = [REASON_ZH.get(part, part) for part in reason.split(":") if part]
    where = STAGE_ZH.get(stage, stage)
    return f"{where}：{'，'.join(parts)}" if where else "，".join(parts)
