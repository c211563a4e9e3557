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
from pallas.features.memory_commands.teaching import (
    TEACH_MAX_CHARS,
    Teaching,
    detect_member_command,
    read_teaching,
)
from pallas.features.memory_prompt import (
    RECALL_HEADER,
    RECALL_MAX_ITEMS,
    answer_question,
    own_facts,
    said_to_subject,
    second_person,
)

log = logging.getLogger("pallas.memory")

MAX_TAUGHT_PER_USER = 50

REPLY_TAUGHT = "记住啦～"
REPLY_DUPLICATE = "这个我早就记着啦"
REPLY_REFUSED = "这个我可记不了哦"
REPLY_TOO_MANY = "关于你的事我已经记了好多啦，先忘掉一些再教我吧"
REPLY_FORGOTTEN = "好，关于你的事我都忘掉啦"
REPLY_NOTHING_TO_FORGET = "我这里本来就没记着你的什么事哦"
REPLY_CROSSED_OUT = "之前记的{old}我划掉了"
REPLY_DENIED = "好～"
REPLY_NOTHING_KNOWN = "我还没记住关于你的事哦，可以跟我说“记住 …”"
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
) -> str | None:
    """The reply to a memory command, or None when the chat should answer the message."""
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
    if command.action == "recall" and command.text:
        return await answer_question(service, turn.user_id, scope, command.text)
    if command.action == "recall":
        return await recall_reply(service, turn.user_id, scope)
    is_admin = turn.speaker.is_admin or turn.user_id in admins
    return await _teach(service, turn, command.text, scope, tuple(aliases), is_admin=is_admin)


async def recall_reply(service: MemoryService, user_id: int, scope: str) -> str:
    """The short list of what is stored about `user_id` in `scope` (theirs only)."""
    mine = await own_facts(service, user_id, scope, RECALL_MAX_ITEMS)
    if not mine:
        return REPLY_NOTHING_KNOWN
    lines = [f"· {second_person(i.text)}" for i in mine[:RECALL_MAX_ITEMS]]
    return "\n".join([RECALL_HEADER, *lines])


async def _teach(
    service: MemoryService,
    turn: TurnInput,
    text: str,
    scope: str,
    names: tuple[str, ...],
    *,
    is_admin: bool,
) -> str | None:
    verdict = classify_fact(text, (*DEFAULT_BOT_NAMES, *names))
    if not verdict.allowed:
        # About the bot (its persona, rules, obedience, authority) or injection-like: refused,
        # whoever asks, so it can never reach a system prompt as "a fact about the speaker".
        log.warning(
            "group %s: refused teaching from %s (%s)", turn.group_id, turn.user_id, verdict.reason
        )
        return REPLY_REFUSED
    if len(text) > TEACH_MAX_CHARS:
        return REPLY_TOO_LONG
    teaching = read_teaching(text)
    log.info(
        "group %s: teaching by %s read as %s (%s)",
        turn.group_id, turn.user_id, teaching.kind, teaching.reason,
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
    return await _teach_personal(service, turn, teaching, scope)


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
    service: MemoryService, turn: TurnInput, teaching: Teaching, scope: str
) -> str:
    """The speaker's own fact (person facts) or a tie of theirs (a relationship note)."""
    kind = RELATIONSHIP if teaching.kind == "relation" else PERSON_FACTS
    existing = await service.repo.list_items(
        scopes=[scope],
        kind=kind,
        subject_user_id=turn.user_id,
        limit=MAX_TAUGHT_PER_USER + 1,
    )
    if len([i for i in existing if i.origin == "teach"]) >= MAX_TAUGHT_PER_USER:
        return REPLY_TOO_MANY
    judged = await _judge(service, turn, teaching.fact, scope) if kind == PERSON_FACTS else None
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
    return taught_reply(outcome)


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
