"""Group learning admin commands: `/pallas learn now|status`, `/pallas feedback list|undo`."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeAlias

from pallas.core.admin_commands import AdminCommand, AdminContext
from pallas.core.clock import Clock
from pallas.features.learning.collector import CONFIGURED
from pallas.features.learning.config import LearningConfig
from pallas.features.learning.feedback_repository import StoredFeedback
from pallas.features.learning.feedback_service import FeedbackStores, undo_negative_feedback
from pallas.features.learning.group_insight_processor import GroupInsightProcessor, run_sweep
from pallas.features.learning.repository import LearningRepository
from pallas.features.learning.scheduler import budget_day


@dataclass(frozen=True, slots=True)
class LearningAdmin:
    """What the learning commands read (bound to the app's services by `pallas.admin`)."""

    learning: LearningRepository
    feedback: FeedbackStores
    insight: GroupInsightProcessor
    clock: Clock
    flush: Callable[[], Awaitable[None]]  # the message writer's: pending rows are counted
    config: Callable[[int], LearningConfig]  # a group's `[learning]`


Ctx: TypeAlias = AdminContext[LearningAdmin]

_KIND_ZH = {
    "expression": "表达",
    "semantic": "策略",
    "ambient": "环境",
    "memory": "记忆",
    "bot_line": "原句",
}


def _on(flag: bool) -> str:
    return "开" if flag else "关"


async def _learn_status(cmd: Ctx) -> str:
    svc = cmd.services
    config = svc.config(cmd.group_id)
    repo = svc.learning
    await svc.flush()
    counts = await repo.counts(cmd.bot_id, cmd.group_id)
    cursor = await repo.cursor(cmd.bot_id, cmd.group_id)
    pending = await repo.count_rows_after(cmd.bot_id, cmd.group_id, cursor.last_row_id)
    stored = await repo.profile(cmd.bot_id, cmd.group_id)
    now = svc.clock.now()
    day = budget_day(now, utc_offset_hours=config.budget_utc_offset_hours)
    calls, tokens = cursor.spent_on(day)
    feedback = await svc.feedback.feedback.for_group(cmd.bot_id, cmd.group_id)
    chosen = await svc.insight.collector(cmd.group_id)
    collecting = config.collect_enabled and chosen.bot_id in (None, cmd.bot_id)
    collector = (
        f"（只由 {chosen.bot_id} 收集）"
        if chosen.bot_id is not None and (chosen.reason == CONFIGURED or not collecting)
        else ""
    )
    lines = [
        f"群学习：收集 {_on(collecting)}{collector}，注入 {_on(config.inject_enabled)}",
        f"真人接话样本 {counts.observed_pairs} 条，接话复盘样本 {counts.reflection_pairs} 条，"
        f"已标注 {counts.labels} 条，行为策略 {counts.strategies} 条",
    ]
    if stored is None:
        lines.append("回复画像：还没有建立")
    else:
        p = stored.profile
        lines.append(
            f"回复画像：{p.sample_turns} 轮，单条占比 {p.single_bubble_share:.0%}，"
            f"每轮条数 p50/p90 {p.bubbles_p50:g}/{p.bubbles_p90:g}，"
            f"单段字数 p50/p90 {p.chars_p50:g}/{p.chars_p90:g}"
        )
    lines.append(f"待处理消息 {pending} 条（游标在第 {cursor.last_row_id} 行）")
    lines.append(
        f"今日标注调用 {calls}/{config.daily_call_budget} 次，"
        f"tokens {tokens}/{config.daily_token_budget}"
    )
    if cursor.last_error:
        lines.append(f"上次标注失败：{cursor.last_error}")
    active = sum(1 for f in feedback if f.outcome.active)
    lines.append(f"负反馈：生效 {active} 条，已撤销 {len(feedback) - active} 条")
    return "\n".join(lines)


async def _learn_now(cmd: Ctx) -> str:
    report = await run_sweep(cmd.services.insight)
    if report.busy:
        return "已经有一轮学习在进行，稍后再试"
    mine = [j for j in report.jobs if (j.bot_id, j.group_id) == (cmd.bot_id, cmd.group_id)]
    errors = [j.error for j in report.jobs if j.error]
    lines = [
        f"学习完成：{len(report.jobs)} 个任务，{len(report.refreshed)} 个群更新，"
        f"新增样本 {sum(j.new_pairs for j in report.jobs)} 条，"
        f"标注 {sum(j.labels for j in report.jobs)} 条，调用模型 {report.llm_calls} 次",
        f"本群：新增样本 {sum(j.new_pairs for j in mine)} 条，"
        f"标注 {sum(j.labels for j in mine)} 条",
    ]
    if errors:
        lines.append(f"有 {len(errors)} 个任务标注失败（{errors[0]}），下一轮会重试")
    return "\n".join(lines)


async def learn(cmd: Ctx) -> str:
    action = cmd.args[0] if cmd.args else "status"
    if action == "now":
        return await _learn_now(cmd)
    if action == "status":
        return await _learn_status(cmd)
    return "用法：/pallas learn now|status"


def _feedback_line(item: StoredFeedback) -> str:
    outcome = item.outcome
    when = time.strftime("%m-%d %H:%M", time.localtime(outcome.created_at))
    status = "生效" if outcome.active else "已撤销"
    kinds = Counter(b.kind for b in outcome.blames)
    blame = "、".join(f"{_KIND_ZH.get(k, k)}×{n}" for k, n in sorted(kinds.items())) or "无"
    text = outcome.bot_text[:20] + ("…" if len(outcome.bot_text) > 20 else "")
    return f"#{item.id} {when} [{status}] 「{text}」 by {outcome.admin_id}：{blame}"


async def _feedback_list(cmd: Ctx) -> str:
    items = await cmd.services.feedback.feedback.for_group(cmd.bot_id, cmd.group_id, limit=10)
    if not items:
        return "本群还没有负反馈记录"
    return "\n".join(_feedback_line(i) for i in items)


async def _feedback_undo(cmd: Ctx) -> str:
    feedback_id = int(cmd.args[1]) if len(cmd.args) > 1 and cmd.args[1].isdigit() else None
    if feedback_id is None and cmd.reply_to is None:
        return "用法：回复那条被否定的消息发 /pallas feedback undo，或 /pallas feedback undo <编号>"
    report = await undo_negative_feedback(
        cmd.services.feedback,
        cmd.bot_id,
        cmd.group_id,
        bot_message_id=None if feedback_id is not None else cmd.reply_to,
        feedback_id=feedback_id,
    )
    if report.reason == "undone":
        return f"已撤销 {len(report.undone)} 条负反馈：" + "、".join(
            f"#{item.id}" for item in report.undone
        )
    if report.reason == "already_undone":
        return "这条负反馈已经撤销过了"
    return "没有找到对应的负反馈"


async def feedback(cmd: Ctx) -> str:
    action = cmd.args[0] if cmd.args else "list"
    if action == "list":
        return await _feedback_list(cmd)
    if action == "undo":
        return await _feedback_undo(cmd)
    return "用法：/pallas feedback list|undo [编号]"


COMMANDS: list[AdminCommand[LearningAdmin]] = [
    AdminCommand("learn", "/pallas learn now|status", "群学习：立即学习一轮 / 样本与预算", learn),
    AdminCommand(
        "feedback",
        "/pallas feedback list|undo [编号]",
        "负反馈记录；撤销（回复那条消息，或给编号）",
        feedback,
    ),
]
