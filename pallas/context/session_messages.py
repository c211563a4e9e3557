"""The messages sequence of a REPLY request (excerpt, history, current message), pure.

Order: 【群环境摘录】 ambient excerpt (one user message) → the user's own session window (a pinned
【此前对话摘要】 first, then the newest rows) → the current message. Every user-authored text is
wrapped with the user-message prefix (and the injection warning when it looks like one); the
session rows are read for *this* group and user only, so nothing crosses groups.

The ambient excerpt is skipped in private chats, when the group timeline is present (same
recent chat, rendered twice otherwise), for short social turns, when the recent pair is
included, and when it would be empty. With `can_read_runtime_state=False` only the current
message is sent.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pallas.context.pipeline import AMBIENT, CURRENT, HISTORY, SUMMARY, DraftMessage
from pallas.context.prompt_guard import (
    DEFAULT_PERSONA_NAME,
    INJECTION_WARNING,
    cap_text,
    looks_like_injection,
    sanitize_inline,
    sanitize_name,
    sanitize_prompt_block,
    unwrap_user_message,
    user_message_prefix,
    wrap_user_message,
)
from pallas.context.sections import HEADER_AMBIENT, HEADER_SESSION_SUMMARY
from pallas.core.records import SessionTurn

MEMBER_LABEL = "群友"
_IMAGE_PLACEHOLDER_RE = re.compile(r"\[图片\]:url=\S+")
_SUMMARY_HEADER = f"【{HEADER_SESSION_SUMMARY}】"


@dataclass(frozen=True, slots=True)
class SessionMessages:
    messages: tuple[DraftMessage, ...]
    ambient_included: bool = False
    ambient_skip_reason: str = ""  # why the excerpt is absent ("" when included)
    ambient_filtered: int = 0  # rows dropped by the negative-feedback blocklist
    history_count: int = 0  # session rows included (summary excluded)
    summary_pinned: bool = False
    current_warned: bool = False

    @property
    def source_tokens(self) -> tuple[str, ...]:
        return tuple(m.source_token for m in self.messages if m.source_token)


def _chronological(turns: Iterable[SessionTurn]) -> list[SessionTurn]:
    return sorted(turns, key=lambda t: (t.created_at, t.row_id))


def _plain(content: str) -> str:
    return _IMAGE_PLACEHOLDER_RE.sub("[图片]", unwrap_user_message(content))


def _ambient_message(
    rows: Sequence[SessionTurn],
    *,
    group_id: int,
    persona_name: str,
    assistant_label: str,
    line_cap: int,
    block_cap: int,
) -> DraftMessage | None:
    lines: list[str] = []
    used = 0
    flagged = False
    for row in reversed(rows):  # newest first, so the block cap drops the oldest
        label = assistant_label if row.role == "assistant" else MEMBER_LABEL
        text = sanitize_inline(_plain(row.content), 10_000)
        if not text:
            continue
        line = f"{label}：{cap_text(text, max(line_cap - len(label) - 1, 1))}"
        if used + len(line) + 1 > block_cap:
            break
        flagged = flagged or (row.role == "user" and looks_like_injection(row.content))
        lines.append(line)
        used += len(line) + 1
    if not lines:
        return None
    lines.reverse()
    parts = [user_message_prefix(persona_name), f"【{HEADER_AMBIENT}】", *lines]
    if flagged:
        parts.append(INJECTION_WARNING)
    ids = tuple(str(r.row_id) for r in rows)
    return DraftMessage(
        role="user",
        content="\n".join(parts),
        source="session_store.ambient",
        source_token=f"ambient:{group_id}:{'-'.join(ids)}",
        kind=AMBIENT,
        ref_ids=ids,
    )


def _ambient_rows(
    group_turns: Sequence[SessionTurn],
    *,
    group_id: int,
    current_user_id: int,
    window: int,
    blocklist: Sequence[str],
) -> tuple[list[SessionTurn], int]:
    rows = [t for t in _chronological(group_turns) if t.group_id == group_id and not t.is_summary]
    rows = rows[-window:] if window > 0 else []
    rows = [t for t in rows if t.user_id != current_user_id]
    kept = [t for t in rows if not any(p in t.content.casefold() for p in blocklist)]
    return kept, len(rows) - len(kept)


def _history_rows(
    user_turns: Sequence[SessionTurn], *, group_id: int, user_id: int, window: int
) -> tuple[SessionTurn | None, list[SessionTurn]]:
    rows = [
        t for t in _chronological(user_turns) if t.group_id == group_id and t.user_id == user_id
    ]
    summaries = [t for t in rows if t.is_summary]
    plain = [t for t in rows if not t.is_summary]
    summary = summaries[-1] if summaries and window > 0 else None
    keep = window - 1 if summary else window
    return summary, (plain[-keep:] if keep > 0 else [])


def _summary_message(row: SessionTurn) -> DraftMessage | None:
    body = row.content.strip()
    if body.startswith(_SUMMARY_HEADER):
        body = body[len(_SUMMARY_HEADER) :]
    body = sanitize_prompt_block(body)
    if not body:
        return None
    return DraftMessage(
        role="user",
        content=f"{_SUMMARY_HEADER}\n{body}",
        source="session_store.summary",
        source_token=f"session:{row.row_id}",
        kind=SUMMARY,
        ref_ids=(str(row.row_id),),
    )


def _history_message(row: SessionTurn, persona_name: str, max_chars: int) -> DraftMessage | None:
    if row.role == "assistant":
        content = row.content.strip()
        role = "assistant"
    else:
        content = wrap_user_message(_plain(row.content), persona_name, max_chars=max_chars)
        role = "user"
    if not content:
        return None
    return DraftMessage(
        role=role,
        content=content,
        source="session_store.history",
        source_token=f"session:{row.row_id}",
        kind=HISTORY,
        ref_ids=(str(row.row_id),),
    )


def _ambient_skip_reason(
    *, is_group: bool, timeline_present: bool, short_social: bool, include_recent_pair: bool
) -> str:
    if not is_group:
        return "private"
    if timeline_present:
        return "timeline_present"
    if short_social:
        return "short_social"
    if include_recent_pair:
        return "recent_pair"
    return ""


def build_llm_chat_messages(
    current_text: str,
    *,
    group_id: int,
    current_user_id: int,
    user_turns: Sequence[SessionTurn] = (),
    group_turns: Sequence[SessionTurn] = (),
    persona_name: str = DEFAULT_PERSONA_NAME,
    assistant_label: str | None = None,
    can_read_runtime_state: bool = True,
    timeline_present: bool = False,
    short_social: bool = False,
    include_recent_pair: bool = False,
    user_window: int = 18,
    group_window: int = 8,
    ambient_line_cap: int = 120,
    ambient_block_cap: int = 1200,
    user_message_max_chars: int = 2000,
    feedback_blocklist: Iterable[str] = (),
    current_message_id: int | None = None,
) -> SessionMessages:
    """Ambient excerpt → the user's session window → the current message, with provenance."""
    current = DraftMessage(
        role="user",
        content=wrap_user_message(current_text, persona_name, max_chars=user_message_max_chars),
        source="turn.current",
        source_token=f"current:{current_message_id}" if current_message_id is not None else "",
        kind=CURRENT,
        protected=True,
    )
    warned = looks_like_injection(current_text)
    if not can_read_runtime_state:
        return SessionMessages((current,), False, "no_runtime_state", current_warned=warned)

    out: list[DraftMessage] = []
    reason = _ambient_skip_reason(
        is_group=group_id != 0,
        timeline_present=timeline_present,
        short_social=short_social,
        include_recent_pair=include_recent_pair,
    )
    filtered = 0
    if not reason:
        blocklist = [p.casefold() for p in feedback_blocklist if p.strip()]
        rows, filtered = _ambient_rows(
            group_turns,
            group_id=group_id,
            current_user_id=current_user_id,
            window=group_window,
            blocklist=blocklist,
        )
        ambient = _ambient_message(
            rows,
            group_id=group_id,
            persona_name=persona_name,
            assistant_label=sanitize_name(assistant_label or persona_name) or DEFAULT_PERSONA_NAME,
            line_cap=ambient_line_cap,
            block_cap=ambient_block_cap,
        )
        if ambient is None:
            reason = "empty"
        else:
            out.append(ambient)

    summary_row, rows = _history_rows(
        user_turns, group_id=group_id, user_id=current_user_id, window=user_window
    )
    summary = _summary_message(summary_row) if summary_row else None
    if summary:
        out.append(summary)
    history = [_history_message(r, persona_name, user_message_max_chars) for r in rows]
    out.extend(m for m in history if m is not None)
    out.append(current)
    return SessionMessages(
        messages=tuple(out),
        ambient_included=not reason,
        ambient_skip_reason=reason,
        ambient_filtered=filtered,
        history_count=sum(1 for m in history if m is not None),
        summary_pinned=summary is not None,
        current_warned=warned,
    )
