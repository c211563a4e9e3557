"""Knowledge placeholders (`kb_placeholders`): `【kb::库名::数量::最低分::模式::参数】`.

They are honoured in admin text only (persona, prompt overrides): the turn builds one
`KnowledgeLookup` per REPLY turn and `KnowledgePlaceholderProcessor` replaces each placeholder
with snippets from its pool. Pools are `pool:<name>` scopes of the memory store's `knowledge`
kind, filled by `pallas kb import DIR --pool NAME` (`chunk_folder`) or
`/pallas memory add knowledge pool:NAME …`.
"""

from pallas.features.kb.config import KnowledgePlaceholderConfig
from pallas.features.kb.importer import Chunk, chunk_folder
from pallas.features.kb.lookup import KnowledgeLookup
from pallas.features.kb.placeholders import PLACEHOLDER_RE
from pallas.features.kb.processor import KnowledgePlaceholderProcessor

__all__ = [
    "PLACEHOLDER_RE",
    "Chunk",
    "KnowledgeLookup",
    "KnowledgePlaceholderConfig",
    "KnowledgePlaceholderProcessor",
    "chunk_folder",
]
