"""`/pallas svar …`: admins read and change the group's session variables.

    /pallas svar list [QQ号]              declared variables with their current values
    /pallas svar set <变量> <值> [QQ号]    set a value (clamped to min / max like any change)
    /pallas svar reset [变量] [QQ号]       back to the default (all variables when none named)

Member-scope variables need the member's QQ number for `set`; `list` / `reset` without one
show / reset the group-scope values (and, for reset, every member's values too). Changes are
logged in `session_variable_event` with actor `admin:<QQ>`.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from pallas.core.admin_commands import AdminCommand, AdminContext
from pallas.features.svars.config import SvarConfig
from pallas.features.svars.ops import SvarOp, coerce
from pallas.features.svars.render import format_value
from pallas.features.svars.service import SvarService


@dataclass(frozen=True, slots=True)
class SvarAdmin:
    """What `/pallas svar` reads (bound to the app's services by `pallas.admin`)."""

    service: SvarService
    config: Callable[[int], SvarConfig]  # a group's `[svars]`


Ctx: TypeAlias = AdminContext[SvarAdmin]

USAGE = (
    "用法：\n"
    "/pallas svar list [QQ号]\n"
    "/pallas svar set <变量> <值> [QQ号]\n"
    "/pallas svar reset [变量] [QQ号]"
)
_USER = re.compile(r"^@?(\d{5,12})$")


def _service(cmd: Ctx) -> SvarService:
    return cmd.services.service


def _config(cmd: Ctx) -> SvarConfig:
    return cmd.services.config(cmd.group_id)


def _split_user(args: Sequence[str], min_len: int = 0) -> tuple[list[str], int | None]:
    """A trailing QQ number (only past the first `min_len` arguments)."""
    rest = list(args)
    if len(rest) > min_len and (match := _USER.match(rest[-1])) is not None:
        return rest[:-1], int(match.group(1))
    return rest, None


async def _list(cmd: Ctx, args: Sequence[str]) -> str:
    config = _config(cmd)
    if not config.variables:
        return "本群没有声明会话变量（[svars] variables）"
    _, user = _split_user(args)
    stored = await _service(cmd).repo.load(cmd.bot_id, cmd.group_id, [user] if user else [])
    lines = []
    for var in config.variables:
        if var.scope == "member" and user is None:
            lines.append(f"{var.display}（{var.name}，每人一份）：默认 {format_value(var.default)}")
            continue
        key = (0 if var.scope == "group" else user or 0, var.name)
        row = stored.get(key)
        value = coerce(var, row.value) if row else coerce(var, var.default)
        bounds = ""
        if var.min is not None or var.max is not None:
            bounds = f"（{format_value(var.min) if var.min is not None else '-∞'}～"
            bounds += f"{format_value(var.max) if var.max is not None else '∞'}）"
        who = f" [{user}]" if var.scope == "member" else ""
        version = f" v{row.version}" if row else " 默认"
        lines.append(f"{var.display}（{var.name}）{who}= {format_value(value)}{bounds}{version}")
    return "\n".join(lines)


async def _set(cmd: Ctx, args: Sequence[str]) -> str:
    rest, user = _split_user(args, min_len=2)
    if len(rest) < 2:
        return USAGE
    name, value = rest[0], " ".join(rest[1:])
    config = _config(cmd)
    var = config.get(name)
    if var is None:
        return f"没有声明变量 {name}"
    if var.scope == "member" and user is None:
        return f"{name} 是每人一份的变量，请在最后写上成员 QQ 号"
    op = SvarOp(name, "set", value, user_id=user, raw=f"/pallas svar set {name} {value}")
    result = await _service(cmd).apply(
        cmd.bot_id,
        cmd.group_id,
        user or cmd.user_id,
        config,
        [op],
        turn_id=f"admin-{uuid.uuid4().hex[:12]}",
        actor=f"admin:{cmd.user_id}",
    )
    if not result.changes:
        reason = result.rejected[0].reason if result.rejected else result.reason
        return f"没改成：{reason}"
    change = result.changes[0]
    clamped = "（已按上下限截断）" if change.clamped else ""
    return f"{var.display}：{format_value(change.old)} → {format_value(change.new)}{clamped}"


async def _reset(cmd: Ctx, args: Sequence[str]) -> str:
    rest, user = _split_user(args)
    name = rest[0] if rest else None
    if name is not None and _config(cmd).get(name) is None:
        return f"没有声明变量 {name}"
    gone = await _service(cmd).reset(
        cmd.bot_id,
        cmd.group_id,
        name=name,
        member_id=user,
        actor=f"admin:{cmd.user_id}",
        turn_id=f"admin-{uuid.uuid4().hex[:12]}",
    )
    what = name or "全部变量"
    return f"已重置{what}（{gone} 个存储值回到默认）"


async def svar(cmd: Ctx) -> str:
    sub, args = (cmd.args[0], cmd.args[1:]) if cmd.args else ("list", ())
    handler = {"list": _list, "set": _set, "reset": _reset}.get(sub)
    if handler is None:
        return USAGE
    return await handler(cmd, args)


COMMANDS: list[AdminCommand[SvarAdmin]] = [
    AdminCommand("svar", "/pallas svar list|set|reset …", "查看、设置、重置本群会话变量", svar)
]
