"""What a member's "记住 …" / "忘记我" / "你记得我什么" does, and the short reply.

"你记得我什么" is answered locally (no LLM call): a short list of the live person facts and
relationship notes about *the speaker* in this group — selected by their user id, never another
member's. A teaching that updates a slot ("记住 我搬到朝阳了" after "住在海淀区") retires the
old fact (see `slots`) and says so.

Called by the `memory_commands` plugin for messages addressed to the bot; returns the text to
send, or None when the message is not a memory command the bot acts on (the chat then handles
it as usual — e.g. "记一下我们的暗号" is about the group, not the speaker, so nothing is stored
and the chat replies).
Facts are keyed on the speaker's user id; the display name is stored for listings only.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from pallas.core.turn import TurnInput
from pallas.features.memory.fact_guard import DEFAULT_BOT_NAMES, classify_fact
from pallas.features.memory.isolation import own_scope
from pallas.features.memory.kinds import PERSON_FACTS, RELATIONSHIP
from pallas.features.memory.service import MemoryService
from pallas.features.memory.teaching import detect_member_command, third_person

log = logging.getLogger("pallas.memory")

MAX_TAUGHT_PER_USER = 50

REPLY_TAUGHT = "记住啦～"
REPLY_DUPLICATE = "这个我早就记着啦"
REPLY_REFUSED = "这个我可记不了哦"
REPLY_TOO_MANY = "关于你的事我已经记了好多啦，先忘掉一些再教我吧"
REPLY_FORGOTTEN = "好，关于你的事我都忘掉啦"
REPLY_NOTHING_TO_FORGET = "我这里本来就没记着你的什么事哦"
REPLY_UPDATED = "好，记下新的啦，旧的那条我划掉了～"
REPLY_NOTHING_KNOWN = "我还没记住关于你的事哦，可以跟我说“记住 …”"
RECALL_HEADER = "我记得你："
RECALL_MAX_ITEMS = 8
RECALL_ITEM_CHARS = 40


async def handle_member_message(
    service: MemoryService, turn: TurnInput, *, aliases: Iterable[str] = ()
) -> str | None:
    if turn.group_id == 0 or turn.user_id == turn.bot_id:
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
    if command.action == "recall":
        return await recall_reply(service, turn.user_id, scope)
    return await _teach(service, turn, command.text, scope, tuple(aliases))


def _second_person(text: str) -> str:
    """A stored fact as said to its subject: "TA喜欢猫" → "喜欢猫"."""
    body = text.strip()
    if body.upper().startswith("TA"):
        body = body[2:]
    body = body.replace("TA", "你").strip(" ，,。")
    return body[:RECALL_ITEM_CHARS]


async def recall_reply(service: MemoryService, user_id: int, scope: str) -> str:
    """The short list of what is stored about `user_id` in `scope` (theirs only)."""
    items = []
    for kind in (PERSON_FACTS, RELATIONSHIP):
        items.extend(
            await service.repo.list_items(
                scopes=[scope], kind=kind, subject_user_id=user_id, limit=RECALL_MAX_ITEMS
            )
        )
    mine = [i for i in items if i.subject_user_id == user_id and i.scope == scope]
    if not mine:
        return REPLY_NOTHING_KNOWN
    lines = [f"· {_second_person(i.text)}" for i in mine[:RECALL_MAX_ITEMS]]
    return "\n".join([RECALL_HEADER, *lines])


async def _teach(
    service: MemoryService, turn: TurnInput, text: str, scope: str, names: tuple[str, ...]
) -> str | None:
    verdict = classify_fact(text, (*DEFAULT_BOT_NAMES, *names))
    if not verdict.allowed:
        # About the bot (its persona, rules, obedience, authority) or injection-like: refused,
        # whoever asks, so it can never reach a system prompt as "a fact about the speaker".
        log.warning(
            "group %s: refused teaching from %s (%s)", turn.group_id, turn.user_id, verdict.reason
        )
        return REPLY_REFUSED
    fact = third_person(text)
    if fact is None:
        # Not about the speaker ("记一下我们的暗号"): nothing is stored, and the chat answers
        # the message as usual instead of a canned refusal.
        log.info("group %s: teaching by %s is not about them", turn.group_id, turn.user_id)
        return None
    existing = await service.repo.list_items(
        scopes=[scope],
        kind=PERSON_FACTS,
        subject_user_id=turn.user_id,
        limit=MAX_TAUGHT_PER_USER + 1,
    )
    if len([i for i in existing if i.origin == "teach"]) >= MAX_TAUGHT_PER_USER:
        return REPLY_TOO_MANY
    try:
        outcome = await service.remember(
            bot_id=turn.bot_id,
            scope=scope,
            kind=PERSON_FACTS,
            text=fact,
            origin="teach",
            subject_user_id=turn.user_id,
            author_user_id=turn.user_id,
            subject_name=turn.speaker.display_name,
            source={"message_ids": [turn.message_id], "command": "记住", "by": turn.user_id},
        )
    except ValueError:
        return REPLY_REFUSED
    log.info(
        "group %s: user %s taught %s (%s)",
        turn.group_id,
        turn.user_id,
        outcome.item.ref,
        outcome.action,
    )
    if outcome.action == "duplicate":
        return REPLY_DUPLICATE
    if outcome.action in ("replaced", "contradicted"):
        return REPLY_UPDATED
    return REPLY_TAUGHT
