"""Stickers on the live paths: collection, the contract's name list, the segment to send, bans.

- `collect` (the `stickers` plugin, after recording; never the reply path): a member's sticker
  is counted in, or added to, this group's pool as pending for the background job;
- `prompt_names`: the short list of names the reply-shape contract offers the model;
- `resolve`: `[表情:名字]` → the best-matching sticker of THIS group's pool as a OneBot segment
  (`image` with `base64://` bytes, flagged as a sticker, or the `mface` it came as), or None;
- `remember_sent` / `ban_on_feedback`: an admin's 不可以 quoting a sticker (the bot's or a
  member's) bans it in this group.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any, Protocol

from pallas.core import state_keys
from pallas.core.clock import DAY_S, Clock
from pallas.core.records import StoredMessage
from pallas.core.state import StateStore
from pallas.core.turn import TurnInput
from pallas.features.stickers.config import StickerConfig
from pallas.features.stickers.matching import StickerMatch, best_sticker, prompt_names
from pallas.features.stickers.repository import Sticker, StickerRepository
from pallas.features.stickers.segments import sticker_sightings

log = logging.getLogger("pallas.stickers")


class CollectConfigView(Protocol):
    """What collecting reads of a group's config (`GroupConfig` is one)."""

    @property
    def stickers(self) -> StickerConfig: ...

    @property
    def record(self) -> bool: ...  # a group that is not recorded has no pool either


SENT_TTL_S = 3 * DAY_S
STICKER_SUMMARY = "[动画表情]"


@dataclass(frozen=True, slots=True)
class ResolvedSticker:
    sticker: Sticker
    segment: dict[str, Any]
    match: StickerMatch


def _sent_key(bot_id: int, group_id: int, message_id: int) -> str:
    return state_keys.sticker_sent(bot_id, group_id, message_id)


class StickerService:
    def __init__(
        self,
        repo: StickerRepository,
        state: StateStore,
        clock: Clock,
        group_config: Callable[[int], CollectConfigView],
    ) -> None:
        self.repo = repo
        self.state = state
        self.clock = clock
        self.group_config = group_config

    async def collect(self, turn: TurnInput) -> int:
        """Count the stickers of a member's message into the group's pool; how many."""
        if turn.is_private or turn.user_id == turn.bot_id:
            return 0
        config = self.group_config(turn.group_id)
        if not config.stickers.collect or not config.record:
            return 0
        sightings = sticker_sightings(s.to_dict() for s in turn.segments)
        for sighting in sightings:
            await self.repo.record_sighting(
                turn.bot_id, turn.group_id, sighting, now=self.clock.now()
            )
        return len(sightings)

    async def prompt_names(
        self, bot_id: int, group_id: int, config: StickerConfig
    ) -> tuple[str, ...]:
        if config.names_in_prompt <= 0:
            return ()
        pool = await self.repo.pool(bot_id, group_id, limit=config.names_in_prompt * 4)
        return prompt_names(pool, config.names_in_prompt)

    async def for_reply(
        self,
        bot_id: int,
        group_id: int,
        wanted: str | None,
        allowed: bool,
        config: StickerConfig,
    ) -> ResolvedSticker | None:
        """The reply path's `resolve`: None when stickers are off or anything fails."""
        if not wanted or not allowed:
            return None
        try:
            return await self.resolve(bot_id, group_id, wanted, config)
        except Exception:
            log.exception("group %s: resolving sticker %r failed", group_id, wanted)
            return None

    async def resolve(
        self, bot_id: int, group_id: int, wanted: str, config: StickerConfig
    ) -> ResolvedSticker | None:
        pool = await self.repo.pool(bot_id, group_id)
        match = best_sticker(wanted, pool, min_match=config.min_match)
        if match.sticker is None:
            log.info("group %s: no sticker for %r (%s)", group_id, wanted, match.reason)
            return None
        segment = await self._segment(match.sticker)
        if segment is None:
            return None
        return ResolvedSticker(match.sticker, segment, match)

    async def _segment(self, sticker: Sticker) -> dict[str, Any] | None:
        if sticker.kind == "mface":
            return {"type": "mface", "data": dict(sticker.face)}
        data = await self.repo.data_of(sticker.bot_id, sticker.group_id, sticker.id)
        if not data:
            return None
        encoded = base64.b64encode(data).decode("ascii")
        return {
            "type": "image",
            "data": {"file": f"base64://{encoded}", "sub_type": 1, "summary": STICKER_SUMMARY},
        }

    async def remember_sent(self, resolved: ResolvedSticker, message_id: int) -> None:
        s = resolved.sticker
        await self.repo.note_sent(s.id, now=self.clock.now())
        await self.state.set(_sent_key(s.bot_id, s.group_id, message_id), s.id, ttl=SENT_TTL_S)

    async def quoted_sticker(self, quoted: StoredMessage) -> Sticker | None:
        """The sticker a quoted message shows: one the bot sent, or one a member sent."""
        sent = await self.state.get(_sent_key(quoted.bot_id, quoted.group_id, quoted.message_id))
        if sent is not None:
            return await self.repo.get(quoted.bot_id, quoted.group_id, int(sent))
        for sighting in sticker_sightings(quoted.segments):
            found = await self.repo.find_by_file_key(
                quoted.bot_id, quoted.group_id, sighting.file_key
            )
            if found is not None:
                return found
        return None

    async def ban_on_feedback(
        self,
        reply: StoredMessage,
        quoted: StoredMessage | None,
        *,
        admin_ids: Collection[int],
        is_negative: bool,
    ) -> Sticker | None:
        """An admin's negative word quoting a sticker bans that sticker in this group."""
        if quoted is None or not is_negative or reply.reply_to != quoted.message_id:
            return None
        if (reply.bot_id, reply.group_id) != (quoted.bot_id, quoted.group_id):
            return None
        if reply.role not in ("owner", "admin") and reply.user_id not in admin_ids:
            return None
        sticker = await self.quoted_sticker(quoted)
        if sticker is None:
            return None
        await self.repo.set_banned(sticker.bot_id, sticker.group_id, sticker.id, True)
        log.info(
            "group %s: sticker %s (%s) banned by %s", sticker.group_id, sticker.id, sticker.name,
            reply.user_id,
        )  # fmt: skip
        return sticker
