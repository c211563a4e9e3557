"""Step 6, answer: what the model said, made safe to send.

Session-variable tags come out first (they never reach the group), then the output rules
(regex), the parse into one to three bubbles (or PASS: silence, or a sticker marker) and the
output guard (a leaked prompt, a `<think>` block, a role marker → refused before delivery and
history). Pure: nothing is sent or stored here.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from pallas.context.processor_inputs import ChatTurnContext
from pallas.context.turn_rules import apply_output_rules
from pallas.features.persona import PersonaPack
from pallas.features.svars import SvarOp, split_svar_tags
from pallas.turn.contracts import AnswerRecord
from pallas.turn.parts.bubbles import ParsedReply, parse_reply
from pallas.turn.parts.output_guard import guard_parsed_reply

log = logging.getLogger("pallas.chat")


@dataclass(frozen=True, slots=True)
class Answer:
    parsed: ParsedReply
    record: AnswerRecord  # for the snapshot: output rules, bubbles, the parse
    svar_ops: tuple[SvarOp, ...]  # the answer's <svar> operations (applied once delivered)


def read_answer(
    text: str, ctx: ChatTurnContext, persona: PersonaPack, *, bot_id: int, group_id: int
) -> Answer:
    shape = ctx.reply_shape
    answer, svar_ops = split_svar_tags(text)  # tags never reach the group
    answer, output_regex = apply_output_rules(answer, ctx.rules)
    parsed = parse_reply(
        answer,
        max_segments=shape.max_segments,
        max_chars=shape.max_chars,
        speaker_names=(persona.name, persona.bot_label, persona.assistant_label),
        bot_id=bot_id,
    )
    parsed, guard = guard_parsed_reply(parsed, persona)  # before delivery and history
    if guard != "ok":
        log.warning("group %s: model answer guarded (%s)", group_id, guard)
    record = AnswerRecord(
        output_regex=output_regex,
        bubbles=list(parsed.bubbles),
        parse={"reason": parsed.reason, "notes": list(parsed.notes)},
    )
    return Answer(parsed, record, svar_ops)
