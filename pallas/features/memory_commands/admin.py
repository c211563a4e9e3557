"""`/pallas memory …`: admins list, add and delete what the bot remembers in their group.

    /pallas memory list [类型] [QQ号]          live items readable here (own group + shared pools)
    /pallas memory add group|ip|event|teach|knowledge [pool:名称] <内容>
    /pallas memory del <id>                   soft-delete one item readable here
    /pallas memory forget <QQ号>              drop a member's facts / notes in this group
    /pallas memory history [QQ号]             facts a newer one replaced, with their replacement
    /pallas memory profile <QQ号>             a member's profile as the cheap model consolidated it

Everything is scoped to the group the command is typed in; a pool can only be written when the
group's config lists it in `memory.shared_pools`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from pallas.core.admin_commands import AdminCommand, AdminContext
from pallas.features.memory import (
    GROUP_EVENTS,
    GROUP_MEMORY,
    IP_KNOWLEDGE,
    KNOWLEDGE,
    PERSON_FACTS,
    SHORT_NAMES,
    TEACHINGS,
    MemoryItem,
    MemoryService,
    RetrievalConfig,
    group_scope,
    parse_ref,
    pool_scope,
    readable_scopes,
    resolve_kind,
    retired_items,
)


@dataclass(frozen=True, slots=True)
class MemoryAdmin:
    """What `/pallas memory` reads (bound to the app's services by `pallas.admin`)."""

    service: MemoryService  # the app's one memory service
    config: Callable[[int], RetrievalConfig]  # a group's `[memory]`: its shared pools


Ctx: TypeAlias = AdminContext[MemoryAdmin]

ADMIN_WRITABLE = (GROUP_MEMORY, GROUP_EVENTS, IP_KNOWLEDGE, TEACHINGS, KNOWLEDGE)
LIST_LIMIT = 20
USAGE = (
    "用法：\n"
    "/pallas memory list [类型] [QQ号]\n"
    "/pallas memory add group|ip|event|teach|knowledge [pool:名称] <内容>\n"
    "/pallas memory del <id>\n"
    "/pallas memory forget <QQ号>\n"
    "/pallas memory history [QQ号]\n"
    "/pallas memory profile <QQ号>"
)
_USER = re.compile(r"^@?(\d{5,12})$")


def format_item(item: MemoryItem) -> str:
    who = f" 关于{item.subject_name or item.subject_user_id}" if item.subject_user_id else ""
    where = f" [{item.scope}]" if item.scope.startswith("pool:") else ""
    return f"{item.ref} {SHORT_NAMES.get(item.kind, item.kind)}{who}{where}：{item.text[:60]}"


def _scopes(cmd: Ctx) -> frozenset[str]:
    config = cmd.services.config(cmd.group_id)
    return readable_scopes(cmd.bot_id, cmd.group_id, config.shared_pools)


def _parse_list_args(args: Sequence[str]) -> tuple[str | None, int | None, str | None]:
    kind = user = None
    for arg in args:
        if (resolved := resolve_kind(arg)) is not None:
            kind = resolved
        elif (match := _USER.match(arg)) is not None:
            user = int(match.group(1))
        else:
            return None, None, f"看不懂「{arg}」\n{USAGE}"
    return kind, user, None


async def _list(cmd: Ctx, args: Sequence[str]) -> str:
    kind, user, problem = _parse_list_args(args)
    if problem:
        return problem
    service = _memory(cmd)
    items = await service.repo.list_items(
        scopes=_scopes(cmd), kind=kind, subject_user_id=user, limit=LIST_LIMIT
    )
    if not items:
        return "这里还没有记住什么"
    lines = [format_item(i) for i in items]
    if len(items) >= LIST_LIMIT:
        lines.append(f"（只列出最新 {LIST_LIMIT} 条，可按类型或 QQ 号筛选）")
    return "\n".join(lines)


async def _add(cmd: Ctx, args: Sequence[str]) -> str:
    if len(args) < 2:
        return USAGE
    kind = resolve_kind(args[0])
    if kind not in ADMIN_WRITABLE:
        return "类型只能是 group / ip / event / teach / knowledge"
    rest = list(args[1:])
    scope = group_scope(cmd.bot_id, cmd.group_id)
    if rest[0].startswith("pool:"):
        name = rest.pop(0).removeprefix("pool:")
        config = cmd.services.config(cmd.group_id)
        if name not in config.shared_pools:
            return f"本群没有配置共享池 {name}（memory.shared_pools）"
        scope = pool_scope(name)
    text = " ".join(rest).strip()
    if not text:
        return USAGE
    service = _memory(cmd)
    try:
        outcome = await service.remember(
            bot_id=cmd.bot_id,
            scope=scope,
            kind=kind,
            text=text,
            origin="admin",
            author_user_id=cmd.user_id,
            source={"command": "/pallas memory add", "by": cmd.user_id},
        )
    except ValueError:
        return "内容是空的"
    if outcome.action == "duplicate":
        return f"已经记着了：{outcome.item.ref}"
    return f"记下了：{format_item(outcome.item)}"


async def _delete(cmd: Ctx, args: Sequence[str]) -> str:
    ids = [parse_ref(a) for a in args]
    if not ids or any(i is None for i in ids):
        return "用法：/pallas memory del <id>（id 见 /pallas memory list）"
    service = _memory(cmd)
    gone = await service.delete(
        [i for i in ids if i is not None], reason="admin", scopes=_scopes(cmd)
    )
    if not gone:
        return "没找到这条记忆（只能删本群能看到的）"
    return "已删除：" + "、".join(i.ref for i in gone)


async def _forget(cmd: Ctx, args: Sequence[str]) -> str:
    match = _USER.match(args[0]) if len(args) == 1 else None
    if match is None:
        return "用法：/pallas memory forget <QQ号>"
    user = int(match.group(1))
    service = _memory(cmd)
    gone = await service.forget_user(user, [group_scope(cmd.bot_id, cmd.group_id)])
    return f"已忘掉 {user} 的 {len(gone)} 条记忆"


async def _history(cmd: Ctx, args: Sequence[str]) -> str:
    match = _USER.match(args[0]) if len(args) == 1 else None
    if args and match is None:
        return "用法：/pallas memory history [QQ号]"
    user = int(match.group(1)) if match is not None else None
    retired = await retired_items(_memory(cmd).repo, _scopes(cmd), subject_user_id=user)
    if not retired:
        return "还没有被新说法替换掉的记忆"
    lines = []
    for entry in retired:
        now = f"{entry.new.ref}：{entry.new.text[:40]}" if entry.new else "（新的那条已不在）"
        lines.append(f"{format_item(entry.old)}\n  → {entry.reason_zh}：{now}")
    return "\n".join(lines)


async def _profile(cmd: Ctx, args: Sequence[str]) -> str:
    match = _USER.match(args[0]) if len(args) == 1 else None
    if match is None:
        return "用法：/pallas memory profile <QQ号>"
    user, service = int(match.group(1)), _memory(cmd)
    scope = group_scope(cmd.bot_id, cmd.group_id)
    stored = await service.profiles.get(scope, user) if service.profiles else None
    if stored is None:
        return f"{user} 还没有模型整理的档案（用逐条事实）"
    live = await service.repo.candidates([scope], PERSON_FACTS, subject_user_id=user, limit=500)
    current = tuple(sorted(i.id for i in live)) == stored.basis
    state = "在用" if current else "之后事实有变，暂用逐条事实，等下次整理"
    lines = [f"{user} 的档案（模型整理，{state}）："]
    for statement in stored.statements:
        refs = "、".join(f"mem:{i}" for i in statement.item_ids)
        lines.append(f"- {statement.text}（{refs}）")
    if stored.superseded:
        lines.append("整理时划掉：" + "、".join(f"mem:{i}" for i in stored.superseded))
    return "\n".join(lines)


async def memory(cmd: Ctx) -> str:
    sub, args = (cmd.args[0], cmd.args[1:]) if cmd.args else ("list", ())
    handlers = {
        "list": _list,
        "add": _add,
        "del": _delete,
        "delete": _delete,
        "forget": _forget,
        "history": _history,
        "profile": _profile,
    }
    handler = handlers.get(sub)
    if handler is None:
        return USAGE
    return await handler(cmd, args)


COMMANDS: list[AdminCommand[MemoryAdmin]] = [
    AdminCommand(
        "memory",
        "/pallas memory list|add|del|forget|history|profile …",
        "查看、添加、删除本群记忆，查看被替换的旧记忆",
        memory,
    )
]


def _memory(cmd: Ctx) -> MemoryService:
    """The app's one memory service."""
    return cmd.services.service
