"""Sticker pool admin: `/pallas sticker list|ban|unban|delete|describe`.

Everything is scoped to the group the command is typed in: an id of another group's sticker
is "not found" here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from pallas.core.admin_commands import AdminCommand, AdminContext
from pallas.features.stickers.describe import StickerDescriber
from pallas.features.stickers.repository import Sticker, StickerRepository


@dataclass(frozen=True, slots=True)
class StickerAdmin:
    """What `/pallas sticker` reads (bound to the app's services by `pallas.admin`)."""

    stickers: StickerRepository
    describer: StickerDescriber
    allow_sticker: Callable[[int], bool]  # a group's `[chat] allow_sticker`


Ctx: TypeAlias = AdminContext[StickerAdmin]

USAGE = (
    "/pallas sticker list — 本群表情池\n"
    "/pallas sticker ban <编号> / unban <编号> — 禁用 / 恢复\n"
    "/pallas sticker delete <编号> — 删除\n"
    "/pallas sticker describe — 立即下载并命名待处理的表情"
)
LIST_LIMIT = 20
_STATUS_ZH = {"pending": "待命名", "described": "可用", "failed": "失败"}


def format_sticker(s: Sticker) -> str:
    kind = "商城" if s.kind == "mface" else "图片"
    state = "已禁用" if s.banned else _STATUS_ZH.get(s.status, s.status)
    name = s.name or "（未命名）"
    return f"#{s.id} {name}（{kind}，{state}，群友发 {s.seen_count} 次，牛牛发 {s.sent_count} 次）"


async def _list(cmd: Ctx) -> str:
    repo = cmd.services.stickers
    stickers = await repo.for_group(cmd.bot_id, cmd.group_id, limit=LIST_LIMIT)
    if not stickers:
        return "本群还没有收集到表情"
    allowed = cmd.services.allow_sticker(cmd.group_id)
    head = f"本群表情池（发送{'开' if allowed else '关'}，[chat] allow_sticker）："
    return "\n".join([head, *(format_sticker(s) for s in stickers)])


def _parse_id(args: Sequence[str]) -> int | None:
    if len(args) != 1:
        return None
    text = args[0].removeprefix("#")
    return int(text) if text.isdigit() else None


async def _set_banned(cmd: Ctx, args: Sequence[str], banned: bool) -> str:
    sticker_id = _parse_id(args)
    if sticker_id is None:
        return USAGE
    repo = cmd.services.stickers
    sticker = await repo.get(cmd.bot_id, cmd.group_id, sticker_id)
    if sticker is None:
        return f"本群没有表情 #{sticker_id}"
    await repo.set_banned(cmd.bot_id, cmd.group_id, sticker_id, banned)
    return f"{'已禁用' if banned else '已恢复'}表情 #{sticker_id} {sticker.name}".rstrip()


async def _delete(cmd: Ctx, args: Sequence[str]) -> str:
    sticker_id = _parse_id(args)
    if sticker_id is None:
        return USAGE
    repo = cmd.services.stickers
    if not await repo.delete(cmd.bot_id, cmd.group_id, sticker_id):
        return f"本群没有表情 #{sticker_id}"
    return f"已删除表情 #{sticker_id}（群友再发时会重新收集，可用 ban 永久禁用）"


async def _describe(cmd: Ctx) -> str:
    report = await cmd.services.describer.run()
    return f"表情任务：{report.summary_zh()}"


async def sticker(cmd: Ctx) -> str:
    sub, rest = (cmd.args[0] if cmd.args else "list"), cmd.args[1:]
    if sub == "list":
        return await _list(cmd)
    if sub in ("ban", "unban"):
        return await _set_banned(cmd, rest, sub == "ban")
    if sub in ("delete", "del"):
        return await _delete(cmd, rest)
    if sub == "describe":
        return await _describe(cmd)
    return USAGE


COMMANDS: list[AdminCommand[StickerAdmin]] = [
    AdminCommand(
        "sticker",
        "/pallas sticker list|ban|unban|delete|describe",
        "本群表情池：查看、禁用、删除、立即命名",
        sticker,
    ),
]
