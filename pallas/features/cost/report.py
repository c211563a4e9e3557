"""What an admin sees of the cost guard: today's use against each budget, limits hit today.

Shared by `/pallas status` (reads the StateStore counters, cheap) and `pallas usage` (reads
the usage ledger for several days).
"""

from __future__ import annotations

from pallas.features.cost.config import BudgetConfig, CostConfig
from pallas.features.cost.counters import UsageCounters
from pallas.features.cost.ladder import Limits, Usage, active_steps, percent_used

_STEP_ZH = {
    "drop_ambient": "不插话",
    "shorten_context": "缩短上下文",
    "cheap_model": "只回@·便宜模型",
    "phrase": "只回短句",
}


def budget_line(label: str, used: Usage, limits: Limits, budget: BudgetConfig) -> str:
    """`今日回复 12/600 次，tokens 3400/3000000（2%）` plus the warning / ladder state."""
    calls = f"{used.calls}/{limits.calls or '不限'}"
    tokens = f"{used.tokens}/{limits.tokens or '不限'}"
    pct = percent_used(used, limits)
    line = f"{label} {calls} 次，tokens {tokens}（{pct:.0f}%）"
    if pct >= 100.0:
        steps = active_steps(pct, budget)
        return line + f"，已达上限，降级：{'→'.join(_STEP_ZH.get(s, s) for s in steps)}"
    if pct >= budget.warn_pct:
        return line + "，预警"
    return line


async def status_lines(
    counters: UsageCounters,
    config: CostConfig,
    deployment: Limits,
    *,
    now: float,
    bot_id: int,
    group_id: int,
) -> list[str]:
    """The cost guard's lines in `/pallas status`."""
    usage = await counters.today(now, group_id)
    b = config.budget
    lines = []
    if config.enabled:
        lines.append(budget_line("今日回复", usage.chat, Limits(b.chat_calls, b.chat_tokens), b))
        lines.append(
            budget_line("今日识图回复", usage.vision, Limits(b.vision_calls, b.vision_tokens), b)
        )
    else:
        lines.append("回复预算与限流：本群关闭")
    if deployment.calls or deployment.tokens:
        lines.append(budget_line("全部群今日回复", usage.deployment, deployment, b))
    m = config.member
    count, members = await counters.limited_today(now, group_id)
    rule = f"每人 {m.turns} 次/{m.window_s:.0f} 秒，连发 {m.burst}"
    if m.conversation_daily_turns:
        rule += f"；正常对话每天 {m.conversation_daily_turns} 轮"
    if not (config.enabled and m.enabled):
        lines.append("成员限流：关闭")
    elif count:
        shown = "、".join(str(u) for u in members[:10]) + ("…" if len(members) > 10 else "")
        lines.append(f"成员限流（{rule}）：今日限流 {count} 次，成员 {shown}")
    else:
        lines.append(f"成员限流（{rule}）：今日未触发")
    lines.extend(f"⚠ {notice}" for notice in await counters.notices(now))
    return lines
