"""Message formatter: provider-specific structure rules, applied last (priority 800, fixed).

Rules, each switchable per model / group (`FormatterConfig`), applied in this order:

1. `merge_system_to_head` — every system message is merged into one at the head.
2. `system_to_user` — system messages become user messages (models without a system role).
3. `merge_consecutive_same_role` — adjacent messages with the same role are merged.
4. `ensure_alternation` — the conversation after the system head starts with a user message
   and alternates user/assistant; a minimal placeholder is inserted where needed.

Merging keeps content-block lists intact (text is wrapped as a text block when one side is a
list) and concatenates plain strings with `separator`. Tool messages are never merged.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

Message = dict[str, Any]


class FormatterConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    merge_system_to_head: bool = True  # all system messages merged into the first
    merge_consecutive_same_role: bool = True  # adjacent messages of one role merged
    system_to_user: bool = False  # system messages sent as user messages
    ensure_alternation: bool = False  # insert placeholders so user / assistant alternate
    user_placeholder: str = Field(default="（继续）", min_length=1)  # the inserted user message
    # the inserted assistant message
    assistant_placeholder: str = Field(default="嗯。", min_length=1)
    separator: str = "\n\n"  # joins merged messages


def _as_blocks(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return [dict(b) if isinstance(b, Mapping) else b for b in content or []]


def merge_content(a: Any, b: Any, separator: str = "\n\n") -> Any:
    """Concatenate two message contents; lists of blocks stay lists."""
    if isinstance(a, str) and isinstance(b, str):
        if not a:
            return b
        if not b:
            return a
        return f"{a}{separator}{b}"
    return _as_blocks(a) + _as_blocks(b)


def _copy(message: Mapping[str, Any]) -> Message:
    out = dict(message)
    if not isinstance(out.get("content"), str) and out.get("content") is not None:
        out["content"] = _as_blocks(out["content"])
    return out


def _merge_system_to_head(
    messages: list[Message], sep: str, pinned: Collection[int] = ()
) -> list[Message]:
    """`pinned` indices (depth injections) keep their place and are not merged."""
    systems = [m for i, m in enumerate(messages) if m.get("role") == "system" and i not in pinned]
    if len(systems) <= 1 and (not systems or messages[0] is systems[0]):
        return messages
    content: Any = ""
    for msg in systems:
        content = merge_content(content, msg.get("content", ""), sep)
    rest = [m for m in messages if all(m is not s for s in systems)]
    return [{"role": "system", "content": content}, *rest]


def _merge_same_role(
    messages: list[Message], sep: str, pinned: Collection[int] = ()
) -> list[Message]:
    """`pinned`: `id()`s of messages that are never merged with a neighbour."""
    out: list[Message] = []
    for msg in messages:
        prev = out[-1] if out else None
        mergeable = (
            prev is not None
            and id(prev) not in pinned
            and id(msg) not in pinned
            and prev.get("role") == msg.get("role")
            and msg.get("role") != "tool"
            and not prev.get("tool_calls")
            and not msg.get("tool_calls")
        )
        if mergeable and prev is not None:
            prev["content"] = merge_content(prev.get("content", ""), msg.get("content", ""), sep)
        else:
            out.append(msg)
    return out


def _ensure_alternation(messages: list[Message], config: FormatterConfig) -> list[Message]:
    head = [m for m in messages[:1] if m.get("role") == "system"]
    body = messages[len(head) :]
    out: list[Message] = []
    expected = "user"
    for msg in body:
        role = msg.get("role")
        if role not in ("user", "assistant"):
            out.append(msg)
            continue
        if role != expected:
            placeholder = (
                config.user_placeholder if expected == "user" else config.assistant_placeholder
            )
            out.append({"role": expected, "content": placeholder})
        out.append(msg)
        expected = "assistant" if role == "user" else "user"
    return head + out


def _user_role(message: Message, kept_apart: set[int]) -> Message:
    """The message as a user message, still kept apart when it was (a pinned one)."""
    out = {**message, "role": "user"}
    if id(message) in kept_apart:
        kept_apart.add(id(out))
    return out


def format_messages(
    messages: Sequence[Mapping[str, Any]],
    config: FormatterConfig | None = None,
    *,
    pinned: Collection[int] = (),
) -> list[Message]:
    """Apply the enabled rules; returns new plain `{"role", "content"}` dicts.

    `pinned`: indices of placed messages (depth injections, the cache layout's per-turn block)
    that keep their place and are never merged with a neighbour.
    """
    config = config or FormatterConfig()
    out = [_copy(m) for m in messages]
    if not out:
        return out
    kept_apart = {id(out[i]) for i in pinned if 0 <= i < len(out)}
    if config.merge_system_to_head:
        out = _merge_system_to_head(out, config.separator, pinned)
    if config.system_to_user:
        out = [m if m.get("role") != "system" else _user_role(m, kept_apart) for m in out]
    if config.merge_consecutive_same_role:
        out = _merge_same_role(out, config.separator, kept_apart)
    if config.ensure_alternation:
        out = _ensure_alternation(out, config)
    return out
