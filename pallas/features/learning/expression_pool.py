"""A group's recallable expression pairs, filtered once and indexed by character.

`resolve_group_expression` scores every pair against the current text; over a pool of a few
thousand pairs that is ~10–20 ms of pure Python per turn. The eligibility filter (this group,
observed, transferable, not blamed by feedback) only changes when the group's data or its
feedback blocks change, so it runs once per change here; per turn only the pairs whose trigger
shares at least one content character with the text are scored — every other pair scores 0
and could never pass a positive `min_similarity`, so the result is the same.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from pallas.core.learning_records import ReplyPair
from pallas.core.text import match_key

from .group_store import FeedbackBlocks, GroupLearningData
from .semantic_style import eligible_pairs


@dataclass(frozen=True, slots=True)
class ExpressionPool:
    pairs: tuple[ReplyPair, ...]
    by_char: Mapping[str, tuple[int, ...]]
    filtered: tuple[tuple[str, int], ...]  # (reason, count) of pairs left out of the pool

    @classmethod
    def build(cls, data: GroupLearningData, blocks: FeedbackBlocks) -> ExpressionPool:
        pairs, filtered = eligible_pairs(
            data.observed_pairs,
            bot_id=data.bot_id,
            group_id=data.group_id,
            labels=data.labels,
            blocked_phrases=blocks.phrases,
            blocked_tokens=blocks.tokens,
        )
        index: dict[str, list[int]] = defaultdict(list)
        for position, pair in enumerate(pairs):
            for char in set(match_key(pair.trigger_text)):
                index[char].append(position)
        return cls(pairs, {char: tuple(ids) for char, ids in index.items()}, filtered)

    def candidates(self, text: str, *, min_similarity: float) -> tuple[ReplyPair, ...]:
        """The pairs worth scoring for `text` (all of them when any score may pass)."""
        if min_similarity <= 0:
            return self.pairs
        hits = {i for char in set(match_key(text)) for i in self.by_char.get(char, ())}
        return tuple(self.pairs[i] for i in sorted(hits))
