"""Worldbooks (SillyTavern world info): the `[worldbook]` group config, the JSON books of
`config/worldbooks/` kept loaded (`WorldbookLibrary`) and their activation for one group turn
(`activate_for_turn`: keys matched against the recent timeline, sticky / cooldown timers kept
in the StateStore). The memory slice's knowledge source places the activated entries.
"""

from pallas.features.worldbook.loader import WorldbookLoadResult, parse_worldbook_json
from pallas.features.worldbook.model import WorldbookConfig
from pallas.features.worldbook.result import ActivatedEntry
from pallas.features.worldbook.service import (
    WorldbookLibrary,
    WorldbookTurn,
    activate_for_turn,
    book_file_name,
)

__all__ = [
    "ActivatedEntry",
    "WorldbookConfig",
    "WorldbookLibrary",
    "WorldbookLoadResult",
    "WorldbookTurn",
    "activate_for_turn",
    "book_file_name",
    "parse_worldbook_json",
]
