"""What a taught fact replaces when no model answered: the slot rules, then the meaning step.

`offline_judgement` is what the teaching path uses when the teaching judge gave no judgement
(no cheap model, a timeout, an over-budget day, an unusable answer): the slot rules and the
denial rules first (`denials.rule_update`: they know residence, job, pets … and denials), then,
when they retire nothing, `corrections.choose_replaced` — an explicit marker or a new value for a
known thing retires the ONE live fact it replaces, chosen with the offline sentence encoder where
one is loaded (the member's live facts are encoded with the query, on the encoder's own thread),
else by the words. The result is a `Judgement` (``meaning:update``) checked again by
`updates.retire_superseded` like the model's.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from pallas.features.memory import Judgement, MemoryItem, meaning_text, rule_update
from pallas.features.memory_commands.corrections import Correction, choose_replaced, needs_vectors
from pallas.providers.encoder_process import EncoderUnavailable
from pallas.providers.sentence_encoder import SentenceEncoder

log = logging.getLogger("pallas.memory")


async def offline_judgement(
    encoder: SentenceEncoder | None,
    new_fact: str,
    correction: Correction,
    live: Sequence[MemoryItem],
) -> Judgement:
    """The rules' judgement, or the meaning step's when the rules retire nothing."""
    pairs = [(i.id, i.text) for i in live]
    ruled = rule_update(new_fact, pairs)
    if ruled.op != "add" or not pairs:
        return ruled
    cosines: list[float] | None = None
    if encoder is not None and needs_vectors(correction, new_fact, pairs):
        query = meaning_text(correction.query if correction.explicit else new_fact)
        try:
            vectors = await encoder.encode([query, *(meaning_text(t) for _, t in pairs)])
        except EncoderUnavailable as exc:  # down or restarting: already logged once there
            log.info("sentence encoder unavailable for a correction (%s); deciding by words", exc)
        except Exception:  # the words decide; the teaching is never lost to the encoder
            log.exception("sentence encoder failed on a correction; deciding by words")
        else:
            cosines = [float(v) for v in vectors[1:] @ vectors[0]]
    chosen = choose_replaced(correction, new_fact, pairs, cosines)
    if chosen is None:
        return ruled
    return Judgement("update", (chosen.item_id,), "meaning", chosen.reason)
