"""What a member's "记住 …" / "忘记我" / "你记得我什么" does, and the short reply.

"你记得我什么" is answered locally (no LLM call): a short list of the live person facts and
relationship notes about *the speaker* in this group — selected by their user id, never another
member's. "你记得我是做哪行的吗" is answered locally when one stored fact of theirs matches
the question; otherwise the chat answers it (with their facts in its context). A question is
never stored. A teaching that updates or denies a stored fact ("记住 我搬到朝阳了" after "住在
海淀区", "记住 我换工作了，现在在做产品经理", "记住 我已经不养猫了") retires the old fact —
decided by the cheap model when it answers in time (`update_judge`), else by the rules
(`denials.rule_update`) — and the reply names what was crossed out.

Every teaching gets an answer: stored (the speaker's fact, or "小王是TA的表哥" as a
relationship note), stored for the group (admins only), or a short reply saying why not (about
somebody else, about the group from a member, too long, about the bot itself).
Facts are keyed on the speaker's user id; the display name is stored for listings only.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable

from pallas.core.turn import TurnInput
from pallas.features.memory import (
    DEFAULT_BOT_NAMES,
    GROUP_MEMORY,
    PERSON_FACTS,
    RELATIONSHIP,
    Judgement,
    MemoryService,
    WriteOutcome,
    classify_fact,
    group_scope,
    own_scope,
)
from pallas.features.memory_commands.about_others import NO_NAMES, GroupNames
from pallas.features.memory_commands.correction_judge import offline_judgement
from pallas.features.memory_commands.corrections import Correction, read_correction
from pallas.features.memory_commands.member_forget import (
    REPLY_CAP_DROPPED,
    drop_oldest_unused,
    forget_one,
    undo,
)
from pallas.features.memory_commands.recall_pages import recall_page, step_page
from pallas.features.memory_commands.teaching import (
    TEACH_MAX_CHARS,
    Teaching,
    detect_member_command,
    read_teaching,
)
from pallas.features.memory_prompt import MAX_LISTED_FACTS, answer_question, said_to_subject
from pallas.providers.sentence_encoder import SentenceEncoder

log = logging.getLogger("pallas.memory")

MAX_TAUGHT_PER_USER = 50

REPLY_TAUGHT = "记住啦～"
REPLY_DUPLICATE = "这个我早就记着啦"
REPLY_REFUSED = "这个我可记不了哦"
REPLY_FORGOTTEN = "好，关于你的事我都忘掉啦"
REPLY_NOTHING_TO_FORGET = "我这里本来就没记着你的什么事哦"
REPLY_CROSSED_OUT = "之前记的{old}我划掉了"
REPLY_DENIED = "好～"
REPLY_UNDO_HINT = "（划错了就说“撤销”）"
REPLY_ABOUT_OTHERS = "别人的事要本人来跟我说哦，我只记你自己的事～"
REPLY_GROUP_NEEDS_ADMIN = "群里的事要管理员来教我哦，我先只记你自己的事～"
REPLY_GROUP_TAUGHT = "好，群里的这件事我记下啦～"
REPLY_GROUP_IN_PRIVATE = "群里的事要在群里教我哦，私聊里我只记你自己的事～"
REPLY_TOO_LONG = f"太长啦，挑最要紧的一句（{TEACH_MAX_CHARS} 字以内）再跟我说吧"


async def handle_member_message(
    service: MemoryService,
    turn: TurnInput,
    *,
    aliases: Iterable[str] = (),
    admins: Collection[int] = (),
    names: GroupNames = NO_NAMES,
    encoder: SentenceEncoder | None = None,
) -> str | None:
    """The reply to a memory command, or None when the chat should answer the message.

    `names`: the names the group's members go by (`about_others.GroupNames`), so a teaching
    about one of them by their card or id is not stored as the speaker's fact. `encoder`: the
    offline sentence encoder, where one is loaded — which fact a correction replaces and which
    one "忘掉我…" means are then chosen by meaning (else by words and concepts)."""
    if turn.user_id == turn.bot_id:
        return None
    command = detect_member_command(turn.text, aliases)
    if command is None:
        return None
    scope = own_scope(turn.bot_id, turn.group_id, turn.user_id)
    if command.action == "forget":
        gone = await service.forget_user(turn.user_id, [scope])
        log.info(
            "group %s: user %s asked to be forgotten; %d items soft-deleted (%s)",
            turn.group_id,
            turn.user_id,
            len(gone),
            ", ".join(i.ref for i in gone),
        )
        return REPLY_FORGOTTEN if gone else REPLY_NOTHING_TO_FORGET
    if command.action == "forget_one":
        return await forget_one(service, encoder, turn.user_id, scope, command.text)
    if command.action == "undo":
        return await undo(service, turn.user_id, scope, service.now())
    if command.action == "page":
        return await step_page(service, turn.user_id, scope, command.page)
    if command.action == "recall" and command.text:
        return await answer_question(service, turn.user_id, scope, command.text)
    if command.action == "recall":
        return await recall_page(service, turn.user_id, scope, command.page)
    is_admin = turn.speaker.is_admin or turn.user_id in admins
    return await _teach(
        service, turn, command.text, scope, tuple(aliases),
        names=names, is_admin=is_admin, encoder=encoder,
    )  # fmt: skip


async def recall_reply(service: MemoryService, user_id: int, scope: str) -> str:
    """The first page of what is stored about `user_id` in `scope` (theirs only)."""
    return await recall_page(service, user_id, scope, 1)


async def _teach(
    service: MemoryService,
    turn: TurnInput,
    text: str,
    scope: str,
    aliases: tuple[str, ...],
    *,
    names: GroupNames,
    is_admin: bool,
    encoder: SentenceEncoder | None,
) -> str | None:
    verdict = classify_fact(text, (*DEFAULT_BOT_NAMES, *aliases))
    if not verdict.allowed:
        # About the bot (its persona, rules, obedience, authority) or injection-like: refused,
        # whoever asks, so it can never reach a system prompt as "a fact about the speaker".
        log.warning(
            "group %s: refused teaching from %s (%s)", turn.group_id, turn.user_id, verdict.reason
        )
        return REPLY_REFUSED
    if len(text) > TEACH_MAX_CHARS:
        return REPLY_TOO_LONG
    correction = read_correction(text)  # "不对，…" / "…作废了，…": the marker is not stored
    teaching = read_teaching(correction.body, names)
    log.info(
        "group %s: teaching by %s read as %s (%s%s)",
        turn.group_id, turn.user_id, teaching.kind, teaching.reason,
        f", correction:{correction.marker}" if correction.explicit else "",
    )  # fmt: skip
    if teaching.kind == "question":
        return await answer_question(service, turn.user_id, scope, text)
    if teaching.kind == "other":
        return REPLY_ABOUT_OTHERS
    if teaching.kind == "group":
        if turn.is_private:  # a private chat is no group: its scope is the user's own
            return REPLY_GROUP_IN_PRIVATE
        if not is_admin:
            return REPLY_GROUP_NEEDS_ADMIN
        return await _teach_group(service, turn, teaching)
    return await _teach_personal(service, turn, teaching, scope, correction, encoder)


async def _teach_group(service: MemoryService, turn: TurnInput, teaching: Teaching) -> str:
    """An admin's "记住 我们周五开黑": a group memory, like `/pallas memory add group …`."""
    try:
        outcome = await service.remember(
            bot_id=turn.bot_id,
            scope=group_scope(turn.bot_id, turn.group_id),
            kind=GROUP_MEMORY,
            text=teaching.fact,
            origin="teach",
            author_user_id=turn.user_id,
            source={"message_ids": [turn.message_id], "command": "记住", "by": turn.user_id},
        )
    except ValueError:
        return REPLY_REFUSED
    _log_taught(turn, outcome)
    return REPLY_DUPLICATE if outcome.action == "duplicate" else REPLY_GROUP_TAUGHT


async def _teach_personal(
    service: MemoryService,
    turn: TurnInput,
    teaching: Teaching,
    scope: str,
    correction: Correction,
    encoder: SentenceEncoder | None,
) -> str:
    """The speaker's own fact (person facts) or a tie of theirs (a relationship note).

    A correction or a denial is never refused at the cap: it replaces what it corrects. A new
    fact at the cap is stored and the oldest unused taught fact is dropped, and named
    (`member_forget.drop_oldest_unused`)."""
    kind = RELATIONSHIP if teaching.kind == "relation" else PERSON_FACTS
    existing = await service.repo.list_items(
        scopes=[scope], kind=kind, subject_user_id=turn.user_id, limit=MAX_LISTED_FACTS
    )
    mine = [i for i in existing if i.subject_user_id == turn.user_id and i.scope == scope]
    judged = None
    if kind == PERSON_FACTS:
        judged = await _judge(service, turn, teaching.fact, scope)
        if judged is None:  # no model answered: the rules, then the meaning step
            judged = await offline_judgement(encoder, teaching.fact, correction, mine)
    try:
        outcome = await service.remember(
            bot_id=turn.bot_id,
            scope=scope,
            kind=kind,
            text=teaching.fact,
            origin="teach",
            subject_user_id=turn.user_id,
            author_user_id=turn.user_id,
            subject_name=turn.speaker.display_name,
            source={"message_ids": [turn.message_id], "command": "记住", "by": turn.user_id},
            judged=judged,
        )
    except ValueError:
        return REPLY_REFUSED
    _log_taught(turn, outcome)
    if outcome.action == "duplicate":
        return REPLY_DUPLICATE
    reply = taught_reply(outcome)
    if outcome.action in ("replaced", "contradicted") and judged is not None:
        return reply + (REPLY_UNDO_HINT if judged.by == "meaning" else "")
    taught = [i for i in mine if i.origin == "teach"]
    if len(taught) < MAX_TAUGHT_PER_USER:
        return reply
    dropped = await drop_oldest_unused(service, scope, taught, keep=outcome.item.id)
    if dropped is None:
        return reply
    log.info(
        "group %s: user %s at the teaching cap; dropped %s %r", turn.group_id, turn.user_id,
        dropped.ref, dropped.text,
    )  # fmt: skip
    return REPLY_CAP_DROPPED.format(
        lead=reply, cap=MAX_TAUGHT_PER_USER, old=said_to_subject(dropped.text)
    )


async def _judge(
    service: MemoryService, turn: TurnInput, fact: str, scope: str
) -> Judgement | None:
    """The model's judgement of what `fact` replaces (None: the rules decide)."""
    if service.judge is None:
        return None
    live = await service.repo.candidates(
        [scope], PERSON_FACTS, subject_user_id=turn.user_id, limit=MAX_TAUGHT_PER_USER
    )
    verdict = await service.judge.judge(
        fact, live, bot_id=turn.bot_id, group_id=turn.group_id, scope=scope,
        subject_user_id=turn.user_id,
    )  # fmt: skip
    return verdict.judgement


def taught_reply(outcome: WriteOutcome) -> str:
    """ "记住啦～", and what it crossed out: "记住啦～ 之前记的「你住在海淀区」我划掉了"."""
    if outcome.action not in ("replaced", "contradicted") or not outcome.retired_texts:
        return REPLY_TAUGHT if outcome.action != "contradicted" else REPLY_DENIED
    shown = "".join(f"「{said_to_subject(t)}」" for t in outcome.retired_texts[:2])
    if len(outcome.retired_texts) > 2:
        shown += f"等{len(outcome.retired_texts)}条"
    lead = REPLY_DENIED if outcome.action == "contradicted" else REPLY_TAUGHT
    return f"{lead} {REPLY_CROSSED_OUT.format(old=shown)}"


def _log_taught(turn: TurnInput, outcome: WriteOutcome) -> None:
    log.info(
        "group %s: user %s taught %s %s (%s)",
        turn.group_id, turn.user_id, outcome.item.kind, outcome.item.ref, outcome.action,
    )  # fmt: skip
