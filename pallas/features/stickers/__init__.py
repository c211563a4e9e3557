"""Real stickers: the pool of stickers a group's members send, named once, sent back on demand.

`StickerService` collects a message's stickers into the group's pool, offers the names to the
reply-shape contract and resolves the model's `[表情:名字]` to the segment to send;
`StickerDescriber` is the background job that downloads (SSRF-safe), dedupes and names new
ones with the vision model; `/pallas sticker …` lists, bans and deletes them.
"""

from pallas.features.stickers.admin import COMMANDS as STICKER_COMMANDS
from pallas.features.stickers.admin import StickerAdmin
from pallas.features.stickers.config import StickerConfig
from pallas.features.stickers.describe import DescribeConfigView, StickerDescriber
from pallas.features.stickers.repository import StickerRepository
from pallas.features.stickers.service import CollectConfigView, StickerService

__all__ = [
    "STICKER_COMMANDS",
    "CollectConfigView",
    "DescribeConfigView",
    "StickerAdmin",
    "StickerConfig",
    "StickerDescriber",
    "StickerRepository",
    "StickerService",
]
