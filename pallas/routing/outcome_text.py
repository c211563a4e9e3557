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
    "cost_degraded": "降级回复",
}


def outcome_zh(outcome: str) -> str:
    return OUTCOME_ZH.get(outcome, outcome)
