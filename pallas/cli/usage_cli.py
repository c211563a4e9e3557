"""`pallas usage [--group G] [--days N]`: reply calls and tokens per China day against budgets.

Reads the usage ledger (durable, every task), so it works with the bot stopped. Reply calls are
the ledger's `chat` task, with image replies included (the ledger does not tell them apart;
the live `/pallas status` does). Member limits hit today live in the StateStore: shown when
`PALLAS_STATE_URL` points at the shared Redis, otherwise `/pallas status` shows them.
"""

from __future__ import annotations

import argparse
from collections import defaultdict

from sqlalchemy.exc import OperationalError

from pallas.config import GroupConfig
from pallas.core import state_keys as keys
from pallas.core.clock import DAY_S, local_day
from pallas.core.config_files import GroupConfigStore
from pallas.core.db.engine import create_engine, normalise_database_url, session_factory
from pallas.core.db.repositories.usage import DailyUsage, UsageTotals, add_totals, usage_by_day
from pallas.core.settings import PallasSettings
from pallas.features.cost import Limits, Usage, UsageCounters, budget_line
from pallas.providers.models import price_of, profile_for


def days_back(now: float, days: int) -> list[str]:
    return sorted({local_day(now - i * DAY_S) for i in range(max(1, days))}, reverse=True)


def render(
    rows: list[DailyUsage],
    days: list[str],
    configs: GroupConfigStore[GroupConfig],
    cap: Limits,
) -> list[str]:
    by_day: dict[str, dict[tuple[int, int], dict[str, UsageTotals]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    costs: dict[tuple[str, int], list[tuple[float, float]]] = defaultdict(list)
    for row in rows:
        tasks = by_day[row.day][(row.bot_id, row.group_id)]
        tasks[row.task] = add_totals(tasks.get(row.task, UsageTotals()), row.totals)
        cost = _cost(row, configs)
        if cost is not None:
            costs[(row.day, row.group_id)].append(cost)
    out = ["usage per China day (usage ledger; replies = task chat, image replies included)"]
    for day in days:
        groups = by_day.get(day, {})
        out.append(f"{day}:")
        if not groups:
            out.append("  no LLM calls")
            continue
        total = Usage()
        for (bot_id, group_id), tasks in sorted(groups.items(), key=lambda kv: kv[0][1]):
            chat = tasks.get("chat", UsageTotals())
            total = Usage(total.calls + chat.calls, total.tokens + chat.tokens)
            config = configs.get(group_id)
            budget = config.cost.budget if group_id else config.private.budget
            limits = Limits(budget.chat_calls, budget.chat_tokens)
            where = f"group {group_id}" if group_id else "private chats (私聊)"
            out.append(f"  {where} (bot {bot_id}):")
            used = Usage(chat.calls, chat.tokens)
            out.append("    " + budget_line("replies", used, limits, budget))
            others = [
                f"{task} {t.calls} calls / {t.tokens} tokens"
                for task, t in sorted(tasks.items())
                if task != "chat"
            ]
            if others:
                out.append("    background: " + "; ".join(others))
            out.extend(_cache_lines(tasks, costs.get((day, group_id), [])))
        if cap.calls or cap.tokens:
            default_budget = GroupConfig().cost.budget
            out.append("  " + budget_line("deployment", total, cap, default_budget))
        else:
            out.append(f"  deployment: {total.calls} reply calls / {total.tokens} tokens (no cap)")
    return out


def _cost(row: DailyUsage, configs: GroupConfigStore[GroupConfig]) -> tuple[float, float] | None:
    """(billed, billed as if nothing hit the cache) for one ledger row; None without prices."""
    profile = profile_for(configs.get(row.group_id).models, row.model)
    t = row.totals
    billed = price_of(profile, t.prompt_tokens, t.cached_tokens, t.completion_tokens)
    if billed is None:
        return None
    naive = price_of(profile, t.prompt_tokens, t.cached_tokens, t.completion_tokens, cache=False)
    return billed, naive or 0.0


def _cache_lines(tasks: dict[str, UsageTotals], costs: list[tuple[float, float]]) -> list[str]:
    all_tasks = UsageTotals()
    for totals in tasks.values():
        all_tasks = add_totals(all_tasks, totals)
    lines = []
    if all_tasks.cached_tokens or all_tasks.reasoning_tokens:
        lines.append(
            f"    prompt cache: {all_tasks.cache_share:.0%} of {all_tasks.prompt_tokens} prompt "
            f"tokens cached; reasoning {all_tasks.reasoning_tokens} tokens"
        )
    if costs:
        billed, naive = sum(c[0] for c in costs), sum(c[1] for c in costs)
        saved = f" (without the cache {naive:.4f})" if naive > billed else ""
        lines.append(f"    cost: {billed:.4f}{saved}")
    return lines


async def _member_lines(settings: PallasSettings, group: int | None, now: float) -> list[str]:
    if not settings.pallas_state_url:
        return ["member limits hit today: in-memory state, see /pallas status in the group"]
    from pallas.core.state_redis import close_state_store, open_state_store

    state = await open_state_store(
        settings.pallas_state_url, settings.pallas_state_prefix, wait_s=2.0
    )
    try:
        prefix = keys.cost_limited(local_day(now), keys.cost_scope(0)).removesuffix("0")
        lines = []
        for key in await state.keys(prefix):
            group_id = int(key[len(prefix) :])
            if group is not None and group_id != group:
                continue
            count, members = await UsageCounters(state).limited_today(now, group_id)
            lines.append(f"  group {group_id}: {count} refused turns, members {members}")
        return ["member limits hit today:", *(lines or ["  none"])]
    finally:
        await close_state_store(state)


async def _usage(args: argparse.Namespace) -> int:
    from pallas.core.clock import SystemClock

    settings = PallasSettings.from_env()
    now = SystemClock(settings.pallas_clock_offset_seconds).now()
    days = days_back(now, args.days)
    url = normalise_database_url(settings.database_url)
    engine = create_engine(url)
    try:
        rows = await usage_by_day(session_factory(engine), days, group_id=args.group)
    except OperationalError as exc:
        print(f"cannot read the usage ledger at {url}: {exc.orig} (run `pallas db upgrade`?)")
        return 1
    finally:
        await engine.dispose()
    configs = GroupConfigStore(GroupConfig, settings.groups_dir)
    cap = Limits(settings.pallas_daily_call_cap, settings.pallas_daily_token_cap)
    for line in render(rows, days, configs, cap):
        print(line)
    for line in await _member_lines(settings, args.group, now):
        print(line)
    return 0


def register_usage(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    usage = sub.add_parser("usage", help="reply calls and tokens per day against the budgets")
    usage.add_argument("--group", type=int, default=None, help="only this group")
    usage.add_argument("--days", type=int, default=1, help="how many China days back (1 = today)")
    usage.set_defaults(handler=_usage)
