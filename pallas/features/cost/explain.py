"""The cost guard's reasons in plain Chinese, for `/pallas why` and the console.

Which rule limited a turn: the member flooding (`member_rate_limited`), the member's daily
conversation ceiling (`member_daily_ceiling`), or the group's / the deployment's daily budget
(`group_budget:…`, `deployment_budget:…`, `vision_budget:…`).
"""

from __future__ import annotations

_MEMBER = {
    "member_rate_limited": "刷屏限流：连续@太快或重复同一句，令牌用完",
    "member_daily_ceiling": "今日对话次数已满：该成员今天和机器人聊的轮数到了上限",
    "member_conversation": "对话节奏正常：不占刷屏令牌",
    "member_ok": "成员额度内",
    "member_exempt": "管理员不限流",
    "member_limit_off": "成员限流已关闭",
}
_SCOPE = {"group": "本群今日预算", "deployment": "全部群今日总预算", "vision": "本群今日识图预算"}
_STEP = {
    "phrase": "已用完，只回短句",
    "addressed_only": "将满，只回@",
    "drop_ambient": "将满，不再主动插话",
    "shorten_context": "将满，缩短上下文",
    "cheap_model": "将满，改用便宜模型",
    "text_only": "已用完，不看图",
}


def cost_reason_zh(reason: str) -> str | None:
    """`reason` read aloud, or None when it is not one of the cost guard's."""
    base = reason.removesuffix(":notified")
    if base in _MEMBER:
        said = _MEMBER[base]
        return said + ("（已提醒一次）" if base != reason else "")
    if base == "budget_warning":
        return "今日预算接近上限（已告警）"
    scope, sep, steps = base.partition("_budget:")
    if not sep or scope not in _SCOPE:
        return None
    parts = [_STEP.get(step, step) for step in steps.split("+")]
    return f"{_SCOPE[scope]}{'；'.join(parts)}"
