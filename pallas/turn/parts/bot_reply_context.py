"""What the bot just said, by message id — for when a member quotes the bot.

Written by delivery after each bubble is sent; read by the timeline builder to add
`【牛牛刚才说】…` when a member replies to a bot message. Entries live 600 s and at most 512
per bot are kept (the StateStore holds them, so several processes can share them).
"""

from __future__ import annotations

from pallas.core import state_keys
from pallas.core.state import StateStore

TTL_SECONDS = 600.0
MAX_ENTRIES = 512


def _key(bot_id: int, group_id: int, message_id: int) -> str:
    return state_keys.bot_reply(bot_id, group_id, message_id)


def _index_key(bot_id: int) -> str:
    return state_keys.bot_reply_index(bot_id)


async def remember_bot_reply(
    state: StateStore, bot_id: int, group_id: int, message_id: int, text: str
) -> None:
    await state.set(_key(bot_id, group_id, message_id), text, ttl=TTL_SECONDS)
    await state.push(
        _index_key(bot_id), [group_id, message_id], maxlen=MAX_ENTRIES, ttl=TTL_SECONDS
    )


async def lookup_bot_reply(
    state: StateStore, bot_id: int, group_id: int, message_id: int
) -> str | None:
    """The bot's text for `message_id`, if it is among the newest 512 and younger than 600 s."""
    if [group_id, message_id] not in await state.items(_index_key(bot_id)):
        return None
    value = await state.get(_key(bot_id, group_id, message_id))
    return value if isinstance(value, str) else None
