"""【刚才的群聊】: the group's most recent messages, labelled by speaker identity.

Speakers are resolved by user id only — a member whose card says "牛牛" is still a member:
the bot itself → its label (牛牛), other bots of the same deployment → 别的牛, members → card,
then nickname, then `群友#xxxx`. A member name that collides with a bot label is replaced by
the anonymous label. Names and message text are untrusted and sanitised (a typed
`【本轮策略】` becomes `〔本轮策略〕`, never a header).

Content comes from the stored OneBot segments, else from the CQ codes of `raw_message`, else
from the plain text: images show as `[图片]` (their http(s) URLs are collected, at most
`max_images`, the most recent ones, in timeline order), `mface` as its summary text, other
media as short placeholders. A reply to a message inside the window is shown inline as
`（回X的话）`. Each line is capped (240 chars) and the block is capped (2,400 chars) by dropping
the oldest lines. When the user quoted the bot and the quoted text is known, it is appended
as `【牛牛刚才说】…`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pallas.context.prompt_guard import cap_text, sanitize_inline, sanitize_name
from pallas.context.sections import HEADER_GROUP_TIMELINE
from pallas.core.cq import SEGMENT_PLACEHOLDERS, parse_cq
from pallas.core.records import StoredMessage
from pallas.core.turn import anonymous_member_label

DEFAULT_BOT_LABEL = "牛牛"
DEFAULT_OTHER_BOT_LABEL = "别的牛"


def _http_url(data: Mapping[str, Any]) -> str | None:
    for key in ("url", "file"):
        value = str(data.get(key) or "").strip()
        if value.lower().startswith(("http://", "https://")) and " " not in value:
            return value
    return None


def _message_segments(msg: StoredMessage) -> Sequence[Mapping[str, Any]]:
    if msg.segments:
        return msg.segments
    if msg.raw_message:
        return parse_cq(msg.raw_message or "")
    return [{"type": "text", "data": {"text": msg.text}}]


@dataclass(frozen=True, slots=True)
class _Labeler:
    bot_id: int
    other_bot_ids: frozenset[int]
    bot_label: str
    other_label: str

    def anonymous(self, user_id: int) -> str:
        return anonymous_member_label(user_id)

    def is_self(self, msg: StoredMessage) -> bool:
        return msg.user_id == self.bot_id and not msg.sent_by

    def speaker(self, msg: StoredMessage) -> str:
        if msg.sent_by:  # another plugin's send from the account: its words, not the persona's
            return f"插件 {sanitize_name(msg.sent_by)}"
        if self.is_self(msg):
            return self.bot_label
        if msg.user_id in self.other_bot_ids or msg.is_bot:
            return self.other_label
        name = sanitize_name(msg.card) or sanitize_name(msg.nickname)
        if not name or name in (self.bot_label, self.other_label) or name.startswith("群友#"):
            return self.anonymous(msg.user_id)
        return name

    def mention(self, qq: str, names: Mapping[int, str], name_hint: str = "") -> str:
        if qq == "all":
            return "@全体成员"
        try:
            uid = int(qq)
        except ValueError:
            return ""
        if uid == self.bot_id:
            return f"@{self.bot_label}"
        if uid in self.other_bot_ids:
            return f"@{self.other_label}"
        hint = sanitize_name(name_hint.lstrip("@"))
        if hint in (self.bot_label, self.other_label):
            hint = ""
        return f"@{names.get(uid) or hint or self.anonymous(uid)}"


def _render_content(
    segments: Sequence[Mapping[str, Any]], labeler: _Labeler, names: Mapping[int, str]
) -> tuple[str, list[str]]:
    parts: list[str] = []
    urls: list[str] = []
    for seg in segments:
        kind = str(seg.get("type", ""))
        data = seg.get("data") or {}
        if kind == "text":
            parts.append(str(data.get("text", "")))
        elif kind == "at":
            mention = labeler.mention(str(data.get("qq", "")), names, str(data.get("name") or ""))
            parts.append(mention + " ")
        elif kind in ("image", "mface"):
            url = _http_url(data)
            if url:
                urls.append(url)
            summary = sanitize_inline(str(data.get("summary", "")), 16) if kind == "mface" else ""
            if summary and not summary.startswith("["):
                summary = f"[{summary}]"
            parts.append(summary or "[图片]")
        elif kind in SEGMENT_PLACEHOLDERS:
            parts.append(SEGMENT_PLACEHOLDERS[kind])
    return sanitize_inline("".join(parts), 10_000), urls


@dataclass(frozen=True, slots=True)
class TimelineLine:
    message_id: int
    user_id: int
    speaker: str
    text: str  # the rendered line: "speaker（回X的话）：content"
    image_urls: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class GroupTimeline:
    text: str  # the whole 【刚才的群聊】 block, "" when there is nothing to show
    lines: tuple[TimelineLine, ...] = ()
    image_urls: tuple[str, ...] = ()
    quote_label: str = ""  # set when the 【…刚才说】 fallback was appended
    dropped_lines: int = 0  # lines dropped by the block cap

    @property
    def present(self) -> bool:
        return bool(self.text)

    @property
    def message_ids(self) -> tuple[int, ...]:
        return tuple(line.message_id for line in self.lines)

    @property
    def headers(self) -> tuple[str, ...]:
        return (
            (HEADER_GROUP_TIMELINE, self.quote_label)
            if self.quote_label
            else (HEADER_GROUP_TIMELINE,)
        )


ANCHOR_SPAN = 2  # an anchored window shows at most this many times `width` lines


def is_chunk_boundary(message_id: int, width: int) -> bool:
    """Whether a message starts a timeline chunk: its id hashes to 0 modulo `width // 2`
    (content-defined, so every process and every turn agrees; about one message in
    `width // 2`)."""
    step = max(1, width // 2)
    return ((message_id * 0x9E3779B1) & 0xFFFFFFFF) % step == 0


def anchored_window(ordered: Sequence[StoredMessage], width: int) -> list[StoredMessage]:
    """The lines from the newest chunk boundary that still leaves `width` lines, at most
    `ANCHOR_SPAN × width` of them: while the group talks, the start stays put and each turn's
    timeline extends the previous one (a provider's prefix cache serves it again); the last
    `width` lines when no boundary is in reach."""
    if len(ordered) <= width:
        return list(ordered)
    span = list(ordered[-ANCHOR_SPAN * width :])
    for start in range(len(span) - width, -1, -1):
        if is_chunk_boundary(span[start].message_id, width):
            return span[start:]
    return list(ordered[-width:])


def _select(
    messages: Iterable[StoredMessage],
    width: int,
    exclude: frozenset[int],
    group_id: int | None,
    anchored: bool,
) -> list[StoredMessage]:
    ordered = sorted(messages, key=lambda m: (m.time, m.row_id))
    ordered = [
        m
        for m in ordered
        if m.message_id not in exclude and (group_id is None or m.group_id == group_id)
    ]
    if width <= 0:
        return []
    return anchored_window(ordered, width) if anchored else ordered[-width:]


def _fit_block(lines: list[TimelineLine], budget: int) -> tuple[list[TimelineLine], int]:
    """Keep the newest lines whose total length (one newline each) fits `budget`."""
    kept: list[TimelineLine] = []
    used = 0
    for line in reversed(lines):
        if used + len(line.text) + 1 > budget:
            break
        kept.append(line)
        used += len(line.text) + 1
    kept.reverse()
    return kept, len(lines) - len(kept)


def build_recent_group_timeline(
    messages: Sequence[StoredMessage],
    *,
    bot_id: int,
    other_bot_ids: Iterable[int] = (),
    bot_label: str = DEFAULT_BOT_LABEL,
    other_bot_label: str = DEFAULT_OTHER_BOT_LABEL,
    width: int = 8,
    line_cap: int = 240,
    block_cap: int = 2400,
    max_images: int = 3,
    quoted_bot_text: str | None = None,
    quote_label: str | None = None,
    exclude_message_ids: Iterable[int] = (),
    group_id: int | None = None,
    anchored: bool = False,
) -> GroupTimeline:
    """Render the last `width` messages (oldest first) as the 【刚才的群聊】 block.

    `quote_label` defaults to "{bot_label}刚才说". `exclude_message_ids` usually holds the
    current message (it is sent as the user message, not repeated here). With `group_id`,
    rows of any other group are ignored (defence in depth: nothing crosses groups).
    `anchored` (the cache-aware layout): `width` to `ANCHOR_SPAN × width` lines from a
    chunk boundary (`anchored_window`) instead of exactly the last `width`.
    """
    label = sanitize_name(bot_label) or DEFAULT_BOT_LABEL
    labeler = _Labeler(
        bot_id, frozenset(other_bot_ids), label, sanitize_name(other_bot_label) or "别的牛"
    )
    window = _select(messages, width, frozenset(exclude_message_ids), group_id, anchored)
    speakers = {m.message_id: labeler.speaker(m) for m in window}
    names = {m.user_id: speakers[m.message_id] for m in window if not labeler.is_self(m)}
    lines: list[TimelineLine] = []
    for msg in window:
        content, urls = _render_content(_message_segments(msg), labeler, names)
        if not content:
            continue
        speaker = speakers[msg.message_id]
        quoted = speakers.get(msg.reply_to) if msg.reply_to is not None else None
        prefix = f"{speaker}（回{quoted}的话）：" if quoted else f"{speaker}："
        line = prefix + cap_text(content, max(line_cap - len(prefix), 1))
        lines.append(TimelineLine(msg.message_id, msg.user_id, speaker, line, tuple(urls)))

    header = f"【{HEADER_GROUP_TIMELINE}】"
    quote_line = ""
    q_label = ""
    quoted_text = sanitize_inline(quoted_bot_text, 10_000) if quoted_bot_text else ""
    if quoted_text:
        q_label = sanitize_name(quote_label) if quote_label else f"{label}刚才说"
        quote_line = f"【{q_label}】" + cap_text(quoted_text, line_cap)
    budget = block_cap - len(header) - (len(quote_line) + 1 if quote_line else 0)
    kept, dropped = _fit_block(lines, budget)
    if not kept and not quote_line:
        return GroupTimeline(text="", dropped_lines=dropped)
    body = [header, *(line.text for line in kept)]
    if quote_line:
        body.append(quote_line)
    all_urls = [url for line in kept for url in line.image_urls]
    images = tuple(all_urls[-max_images:]) if max_images > 0 else ()
    return GroupTimeline("\n".join(body), tuple(kept), images, q_label, dropped)


def ambient_snapshot_from_timeline(timeline: GroupTimeline, group_id: int) -> tuple[str, ...]:
    """Snapshot source tokens for the timeline lines (`ambient:` prefix, like the excerpt's)."""
    return tuple(f"ambient:timeline:{group_id}:{mid}" for mid in timeline.message_ids)
