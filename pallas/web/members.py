"""Which member an operator means: a QQ number, or a card / nickname as the group shows it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class MemberMatch:
    user_id: int | None  # None: no filter (empty text) or no single member found
    note: str  # what the page says about the match ("" when nothing needs saying)
    choices: tuple[tuple[int, str], ...] = ()  # (QQ, name) when the text fits several members
    reason: str = ""  # "qq" | "exact" | "only" | "ambiguous" | "none" | "empty"


def _name(card: str, nickname: str) -> str:
    return card or nickname


def match_member(text: str, candidates: Sequence[tuple[int, str, str]]) -> MemberMatch:
    """`text` as a member: digits are a QQ number; otherwise the one member whose card or
    nickname equals it (case-insensitive), else the one whose card or nickname contains it.
    `candidates`: (QQ, card, nickname) of members whose names contain `text`."""
    wanted = text.strip()
    if not wanted:
        return MemberMatch(None, "", reason="empty")
    if wanted.isdigit():
        return MemberMatch(int(wanted), "", reason="qq")
    folded = wanted.casefold()
    exact = {uid for uid, card, nick in candidates if folded in (card.casefold(), nick.casefold())}
    if len(exact) == 1:
        uid = exact.pop()
        return MemberMatch(uid, f"「{wanted}」= QQ {uid}", reason="exact")
    if len(candidates) == 1:
        uid, card, nick = candidates[0]
        return MemberMatch(uid, f"「{wanted}」= {_name(card, nick)}（QQ {uid}）", reason="only")
    if not candidates:
        return MemberMatch(None, f"最近的消息里没有名片或昵称含「{wanted}」的成员", reason="none")
    choices = tuple((uid, _name(card, nick)) for uid, card, nick in candidates[:10])
    note = f"「{wanted}」对应多个成员，请选一个"
    return MemberMatch(None, note, choices, reason="ambiguous")


ORIGIN_ZH = {
    "teach": "群友教的",
    "admin": "管理员加的",
    "extract": "从聊天里记下的",
    "kb_import": "知识库导入",
}


def memory_source_text(origin: str, source: Mapping[str, Any] | None) -> str:
    """Where a memory came from, in words: `群友教的 · 命令「记住」· 来自 51201 · 消息 1004`;
    the JSON itself goes on hover."""
    parts = [ORIGIN_ZH.get(origin, origin)]
    src = source or {}
    if src.get("command"):
        parts.append(f"命令「{src['command']}」")
    if src.get("by"):
        parts.append(f"来自 {src['by']}")
    if src.get("file"):
        parts.append(f"文件 {src['file']}")
    ids = src.get("message_ids") or []
    if ids:
        parts.append(
            "消息 " + "、".join(str(i) for i in list(ids)[:3]) + ("…" if len(ids) > 3 else "")
        )
    if src.get("model"):
        parts.append(f"模型 {src['model']}")
    return " · ".join(p for p in parts if p)
