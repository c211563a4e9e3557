"""Images in the token budget at the model's configured cost (spec processor 9 / 11).

The turn's own images are attached after the pipeline (as data URLs, for vision models), so the
budget reserves `turn_image_count × image_tokens` for them; image blocks already in the draft
(timeline images) are counted at the model's cost instead of the generic default.
"""

from __future__ import annotations

from pallas.context.pipeline import PromptDraft
from pallas.context.processor_inputs import ChatTurnContext
from pallas.core.tokens import IMAGE_BLOCK_TOKENS

_IMAGE_TYPES = ("image_url", "image", "input_image")


def draft_image_blocks(draft: PromptDraft) -> int:
    return sum(
        1
        for m in draft.messages
        if not isinstance(m.content, str)
        for b in m.content
        if b.get("type") in _IMAGE_TYPES
    )


def image_budget(draft: PromptDraft, ctx: ChatTurnContext, token_budget: int | None) -> int | None:
    """`token_budget` minus what this turn's images cost beyond what the draft already counts."""
    if token_budget is None:
        return None
    cost = ctx.image_token_cost
    pending = ctx.turn_image_count * cost
    in_draft = draft_image_blocks(draft) * (cost - IMAGE_BLOCK_TOKENS)
    return max(token_budget - pending - in_draft, 256)
