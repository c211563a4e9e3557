"""Which member an operator means: a QQ number, or a card / nickname as the group shows it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


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
