"""Every StateStore key of the bot, built in one place (one function per namespace).

Ephemeral state (pallas/core/state.py) is shared by every service and, on Redis, by every
process; a key's shape is part of that contract. The modules that own a namespace call these
builders instead of formatting keys themselves, so two features cannot collide on a prefix and
an operator can read this file to know what is stored. `NAMESPACES` lists each prefix with its
owner and how long its keys live (the TTL rule, in the owner module's words).

Ids are `bot_id`, `group_id` (0 for private chats), `user_id`, `message_id`, as in TurnInput.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Namespace:
    prefix: str
    owner: str  # the module that reads and writes it
    ttl: str  # how long a key lives


NAMESPACES: tuple[Namespace, ...] = (
    Namespace("route", "product.llm.routing.router", "per-key, from the routing config windows"),
    Namespace("merge", "product.llm.merges", "PARKED_TTL_S"),
    Namespace("lines", "product.llm.merges", "LINE_TIMES_TTL_S"),
    Namespace("fresh", "product.llm.freshness", "max(max_age_s × 2, 60 s) / max(max_age_s, 60 s)"),
    Namespace("botreply", "product.llm.delivery.bot_reply_context", "TTL_SECONDS"),
    Namespace("botreply-index", "product.llm.delivery.bot_reply_context", "TTL_SECONDS"),
    Namespace("upload", "product.llm.attachments.uploads", "UPLOAD_TTL_S"),
    Namespace("sticker:sent", "product.llm.stickers.service", "SENT_TTL_S"),
    Namespace("learning:gen", "product.llm.learning.group_store", "none (a counter)"),
    Namespace("memory:extract", "product.llm.memory.extraction_hook", "STATE_TTL_S / LOCK_TTL_S"),
    Namespace("worldbook:state", "product.llm.memory.worldbook.service", "worldbook timed effects"),
    Namespace("worldbook:turn", "product.llm.memory.worldbook.service", "worldbook timed effects"),
    Namespace("session_summary", "product.llm.session.session_summary", "the hook's own TTLs"),
    Namespace("cost", "product.llm.cost.counters", "until the local day ends (+ margin)"),
)


def member(bot_id: int, group_id: int, user_id: int) -> str:
    return f"{bot_id}:{group_id}:{user_id}"


def merge_parked(bot_id: int, group_id: int, user_id: int) -> str:
    return f"merge:{member(bot_id, group_id, user_id)}"


def merge_lines(bot_id: int, group_id: int, user_id: int) -> str:
    return f"lines:{member(bot_id, group_id, user_id)}"


def freshness(name: str, bot_id: int, group_id: int, user_id: int) -> str:
    """`name`: `addressed` (the member's recent @s with their event times) or `answered`
    (their one short reply)."""
    return f"fresh:{name}:{member(bot_id, group_id, user_id)}"


def bot_reply(bot_id: int, group_id: int, message_id: int) -> str:
    return f"botreply:{bot_id}:{group_id}:{message_id}"


def bot_reply_index(bot_id: int) -> str:
    return f"botreply-index:{bot_id}"


def upload(bot_id: int, group_id: int, user_id: int) -> str:
    return f"upload:{member(bot_id, group_id, user_id)}"


def sticker_sent(bot_id: int, group_id: int, message_id: int) -> str:
    return f"sticker:sent:{bot_id}:{group_id}:{message_id}"


def learning_generation(bot_id: int, group_id: int) -> str:
    return f"learning:gen:{bot_id}:{group_id}"


def memory_extraction(name: str, bot_id: int, group_id: int) -> str:
    """`name`: `pending`, `lock` or `last`."""
    return f"memory:extract:{name}:{bot_id}:{group_id}"


def worldbook_state(bot_id: int, group_id: int) -> str:
    return f"worldbook:state:{bot_id}:{group_id}"


def worldbook_turn(bot_id: int, group_id: int) -> str:
    return f"worldbook:turn:{bot_id}:{group_id}"


def session_summary(suffix: str, bot_id: int, group_id: int, user_id: int) -> str:
    return f"session_summary:{suffix}:{member(bot_id, group_id, user_id)}"


__all__ = [
    "NAMESPACES",
    "Namespace",
    "bot_reply",
    "bot_reply_index",
    "freshness",
    "learning_generation",
    "memory_extraction",
    "merge_lines",
    "merge_parked",
    "session_summary",
    "sticker_sent",
    "upload",
    "worldbook_state",
    "worldbook_turn",
]
