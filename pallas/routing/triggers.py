"""Which trigger (if any) invites the bot to speak on a turn.

Kinds, strongest first: `private` (private chat), `at` (@bot), `reply_to_bot` (quotes a bot
message), `alias` (the persona name / NICKNAME used as a vocative: at the start or the end of
the text, or the adapter's own `to_me` verdict), `follow_up` (the bot answered this same user
within `follow_up_window_s`), `alias` with `mentioned=True` (the name inside a sentence,
"今天牛牛好可爱": a mention, not an address), `ambient` (a rolled perception), `none`.

Third-person mentions are not addresses. The name at the start is vocative when a separator
follows ("牛牛，…", "牛牛 …"), nothing follows, or what follows speaks to the bot (a question,
a request, a greeting, "你 / 帮 / 给我 / 在吗 …"); it is talked about when what follows opens a
statement about it ("也 / 都 / 是 / 的 / 今天 / 背后 …": "牛牛也是干员吧") or only repeats it
("牛牛牛"); anything else ("牛牛掷个骰子") stays an address. The
name at the end is vocative unless a verb or preposition takes it as its object ("问牛牛",
"让牛牛", "和牛牛"). A message that @s another member never addresses the bot by name without a
separator ("@张三 牛牛看看" talks to 张三). Such mentions are soft triggers (`alias_mention`),
also when the adapter's nickname check said `to_me`. An @bot or a quote of the bot always
addresses it.

`addressed` means spoken to: private / at / reply_to_bot / vocative alias. Follow-ups and
inside mentions are soft triggers: they raise the necessity score and widen the timeline but are
not exempt from the gate or the threshold.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pallas.core.turn import TurnInput
from pallas.routing.config import AmbientConfig, TriggerConfig
from pallas.routing.text_signals import clean_text, is_question, is_request, meaningful_length

_LEAD_SEP = " ,，、:：~～!！。"
_TAIL_PARTICLES = " ~～!！。.…?？呀啊哦喔呢哇啦"
# What follows a leading name when the member speaks to the bot without a comma.
_ADDRESS_CUES = (
    "你", "您", "我", "帮", "给我", "来", "在吗", "在不在", "在么", "在嘛", "请", "快", "陪",
    "讲", "唱", "告诉", "教", "查", "算", "写", "翻译", "推荐", "别", "不要", "能不能", "可不可以",
    "早", "晚安", "晚上好", "午安", "你好", "谢", "辛苦", "生日快乐", "看看", "过来", "出来",
    "说个", "说说", "说一下",
)  # fmt: skip
# What follows a leading name when the member talks about the bot ("牛牛也是干员吧").
_THIRD_PERSON_CUES = (
    "也", "都", "还", "就", "又", "的", "是", "和", "跟", "与", "被", "把", "让", "说", "这", "那",
    "今天", "昨天", "最近", "以前", "之前", "刚才", "刚刚", "背后", "居然", "竟然", "好像", "应该",
    "肯定", "估计", "大概", "其实", "真是", "不是", "没", "一直", "已经", "每次", "总是", "老是",
)  # fmt: skip
# A question that opens with one of these is asked about the name, not of the bot
# ("帕拉斯有皮肤吗", "帕拉斯强不强", "帕拉斯是几星"): the persona's name is also its character's.
_ABOUT_QUESTION_CUES = (
    "有", "是", "强", "厉害", "好用", "值得", "值不值", "怎么样", "几星", "多少", "能打", "适合",
    "配队", "技能", "天赋", "精二", "专精", "立绘", "皮肤", "出了", "复刻",
)  # fmt: skip
_ABOUT_EXCEPTIONS = ("有空", "有时间", "有什么", "有没有", "在")
# A trailing name taken as the object of these is talked about, not to: 问牛牛 / 让牛牛.
_OBJECT_VERBS = (
    "问", "找", "叫", "让", "给", "和", "跟", "对", "被", "把", "像", "是", "的", "有", "喊",
    "求", "等", "替", "比", "用", "教", "夸", "骂", "带", "请", "靠", "看", "关于", "这个", "那个",
)  # fmt: skip


class TriggerKind(StrEnum):
    PRIVATE = "private"
    AT = "at"
    REPLY_TO_BOT = "reply_to_bot"
    ALIAS = "alias"
    FOLLOW_UP = "follow_up"
    AMBIENT = "ambient"
    NONE = "none"


@dataclass(frozen=True, slots=True)
class AliasMatch:
    alias: str
    position: str  # "start" | "end" | "whole" | "inside" | "about"
    content: str  # the text without a vocative alias (unchanged for "inside" / "about")

    @property
    def vocative(self) -> bool:
        return self.position not in ("inside", "about")

    @property
    def asked_about(self) -> bool:
        """ "帕拉斯有皮肤吗": a question about the name's bearer (the character), not to the bot."""
        return self.position == "about"


@dataclass(frozen=True, slots=True)
class AmbientRoll:
    fired: bool
    reason: str  # ambient_fired | ambient_disabled | ambient_cooldown | ambient_budget | ...
    roll: float | None = None


@dataclass(frozen=True, slots=True)
class TriggerResult:
    kind: TriggerKind
    addressed: bool
    timeline_width: int
    content_text: str  # what the member said, vocative alias and @others removed
    reason: str
    alias: str | None = None
    alias_position: str | None = None  # start | end | whole | inside | about | adapter
    mentioned: bool = False  # alias inside the sentence
    follow_up: bool = False  # within the follow-up window for this user
    ambient: AmbientRoll | None = None

    @property
    def alias_only(self) -> bool:
        """The member only called the bot (bare @ or only the name), nothing else typed."""
        return self.addressed and not self.content_text.strip()

    @property
    def is_ambient(self) -> bool:
        return self.kind is TriggerKind.AMBIENT


def _asked_about(rest: str) -> bool:
    """ "帕拉斯有皮肤吗": a question about the name's bearer, with no "你" asking the bot."""
    return (
        rest.startswith(_ABOUT_QUESTION_CUES)
        and not rest.startswith(_ABOUT_EXCEPTIONS)
        and "你" not in rest
        and is_question(rest)
    )


def _leading(text: str, key: str, offset: int, talks_to_other: bool) -> str | None:
    """The position ("start" / "whole") of a vocative leading name, None when talked about.

    In order: a separator or nothing → vocative; an @ of another member or a repeat of the name
    → talked about; an address cue, a question or a request → vocative; a third-person cue →
    talked about; otherwise (a greeting, teasing, "闭嘴", "掷个骰子" …) → vocative. A question
    about the name's bearer ("帕拉斯有皮肤吗") is caught before, by `match_alias`."""
    after = text[offset + len(key) :]
    rest = after.lstrip(_LEAD_SEP).strip()
    if not rest:
        return "whole"
    if after[:1] in _LEAD_SEP:
        return "start"  # "牛牛，…" / "牛牛 …" always
    if talks_to_other or set(rest.lower()) <= set(key):  # "@张三 牛牛看看", "牛牛牛"
        return None
    if rest.startswith(_ADDRESS_CUES) or is_question(rest) or is_request(rest):
        return "start"
    return None if rest.startswith(_THIRD_PERSON_CUES) else "start"


def match_alias(
    text: str, aliases: Iterable[str], *, anywhere: bool = True, talks_to_other: bool = False
) -> AliasMatch | None:
    """Find the persona name in `text`: vocative (start / end / whole) first, then inside.

    A leading or trailing name that is talked about rather than to (see the module docstring)
    is returned as "inside"; `talks_to_other`: the message @s another member."""
    names = sorted({a.strip() for a in aliases if a and a.strip()}, key=len, reverse=True)
    lowered = text.lower()
    body = lowered[1:] if lowered.startswith("@") else lowered
    offset = len(lowered) - len(body)
    for name in names:
        key = name.lower()
        if body.startswith(key):
            after = text[offset + len(key) :]
            if after[:1] not in _LEAD_SEP and _asked_about(after.strip()):
                return AliasMatch(name, "about", text.strip())
            position = _leading(text, key, offset, talks_to_other)
            if position is None:
                return AliasMatch(name, "inside", text.strip())
            rest = text[offset + len(key) :].lstrip(_LEAD_SEP)
            return AliasMatch(name, position, rest.strip())
    trimmed = lowered.rstrip(_TAIL_PARTICLES)
    for name in names:
        key = name.lower()
        if trimmed.endswith(key) and len(trimmed) > len(key):
            head = text[: len(trimmed) - len(key)].rstrip(" ,，、@")
            separated = text[len(trimmed) - len(key) - 1 : len(trimmed) - len(key)] in _LEAD_SEP
            if not separated and (talks_to_other or head.strip().endswith(_OBJECT_VERBS)):
                return AliasMatch(name, "inside", text.strip())
            return AliasMatch(name, "end", head.strip())
    if anywhere:
        for name in names:
            if len(name) >= 2 and name.lower() in lowered:
                return AliasMatch(name, "inside", text.strip())
    return None


def without_call(text: str, aliases: Iterable[str]) -> str:
    """`text` without the calls of the bot's name, line by line (a merged turn has several):
    "帕拉斯，我家猫叫什么" → "我家猫叫什么", "我家猫叫什么 牛牛" → "我家猫叫什么". What
    retrieval searches with: a vocative name is no part of the question (encoded on its own
    it is a vector of the bot's name, and it matches every row that names the bot). A name
    talked about stays ("帕拉斯有皮肤吗", "我昨天跟牛牛说过"); a line that was only the name is
    left out, so a bare call asks nothing."""
    kept = []
    for line in text.split("\n"):
        found = match_alias(line, aliases, anywhere=False)
        kept.append(found.content if found is not None and found.vocative else line)
    return "\n".join(line for line in kept if line.strip())


def command_text(line: str, aliases: Iterable[str]) -> str:
    """One line said to the bot, without the call of its name, for a command that keeps what
    it says (a fact taught with 记住, a reminder's text): a leading call as routing reads it, in
    any case ("帕拉斯，…", "pallas 记住…", "牛牛帮我…"), or a trailing one set off by a comma or a
    space ("记住我喜欢猫，帕拉斯", "十分钟后提醒我关火 牛牛"). Unlike `without_call` (a search),
    a name joined to the end stays: "记住我最喜欢帕拉斯" is about the bot, and dropping it would
    store "我最喜欢"; so does one after a verb that takes it as its object, set off or not
    ("记住我最喜欢的角色是 帕拉斯"). A name asked or talked about stays too ("帕拉斯有皮肤吗")."""
    line = line.strip()
    found = match_alias(line, aliases, anywhere=False)
    if found is None or not found.vocative:
        return line
    if found.position == "end":
        name_at = len(line.lower().rstrip(_TAIL_PARTICLES)) - len(found.alias)
        head = line[:name_at].rstrip(_LEAD_SEP)
        # 的 ends a statement ("我是做设计的，牛牛") as often as it takes the name
        takes_it = head.endswith(_OBJECT_VERBS) and not head.endswith("的")
        if line[name_at - 1 : name_at] not in _LEAD_SEP or takes_it:
            return line  # joined, or the object of the line ("我最喜欢的角色是 帕拉斯")
    return found.content


def roll_ambient(
    config: AmbientConfig, *, now: float, ambient_times: Sequence[float], rng: random.Random
) -> AmbientRoll:
    """Cooldown since the last ambient engagement, budget per window, then the rate roll."""
    if not config.enabled or config.rate <= 0 or config.budget <= 0:
        return AmbientRoll(False, "ambient_disabled")
    if ambient_times and now - max(ambient_times) < config.cooldown_s:
        return AmbientRoll(False, "ambient_cooldown")
    in_window = sum(1 for t in ambient_times if now - t < config.budget_window_s)
    if in_window >= config.budget:
        return AmbientRoll(False, "ambient_budget")
    roll = rng.random()
    if roll < config.rate:
        return AmbientRoll(True, "ambient_fired", roll)
    return AmbientRoll(False, "ambient_roll_miss", roll)


def _direct_kind(turn: TurnInput, bot_message_ids: Collection[int]) -> TriggerKind | None:
    if turn.is_private:
        return TriggerKind.PRIVATE
    if turn.mentions_bot:
        return TriggerKind.AT
    if turn.quotes_bot or (turn.reply_to is not None and turn.reply_to in bot_message_ids):
        return TriggerKind.REPLY_TO_BOT
    return None


def detect_trigger(
    turn: TurnInput,
    *,
    aliases: Iterable[str],
    triggers: TriggerConfig,
    ambient: AmbientConfig,
    now: float,
    rng: random.Random,
    bot_message_ids: Collection[int] = (),
    last_bot_reply_to_user_at: float | None = None,
    ambient_times: Sequence[float] = (),
) -> TriggerResult:
    """Classify the trigger of `turn`. Consumes one `rng` draw only when ambient is rolled."""
    text = clean_text(turn.text, strip_mentions=bool(turn.mentions or turn.mentions_all))
    match = match_alias(
        text,
        (*aliases, *triggers.extra_aliases),
        anywhere=triggers.alias_anywhere,
        talks_to_other=turn.mentions_others,
    )
    vocative = match is not None and match.vocative
    content = match.content if vocative and match is not None else text
    wide = triggers.timeline_width_addressed
    alias_fields: dict[str, Any] = {
        "alias": match.alias if match else None,
        "alias_position": match.position if match else None,
    }
    direct = _direct_kind(turn, bot_message_ids)
    if direct is not None:
        width = 0 if direct is TriggerKind.PRIVATE else wide
        return TriggerResult(direct, True, width, content, direct.value, **alias_fields)
    # the adapter's to_me without @ or quote is its nickname check: not when talked about
    adapter_to_me = turn.to_me and (match is None or vocative)
    if vocative or adapter_to_me:
        fields: dict[str, Any] = (
            alias_fields if vocative else {"alias": None, "alias_position": "adapter"}
        )
        return TriggerResult(TriggerKind.ALIAS, True, wide, content, "alias_vocative", **fields)
    mentioned = match is not None and not vocative
    follow_up = (
        last_bot_reply_to_user_at is not None
        and 0 <= now - last_bot_reply_to_user_at <= triggers.follow_up_window_s
    )
    if follow_up or mentioned:
        kind = TriggerKind.FOLLOW_UP if follow_up else TriggerKind.ALIAS
        reason = "follow_up_window" if follow_up else "alias_mention"
        return TriggerResult(
            kind,
            False,
            wide,
            content,
            reason,
            mentioned=mentioned,
            follow_up=follow_up,
            **alias_fields,
        )
    if turn.mentions_others or meaningful_length(content) == 0:
        roll = AmbientRoll(False, "ambient_not_eligible")
    else:
        roll = roll_ambient(ambient, now=now, ambient_times=ambient_times, rng=rng)
    if roll.fired:
        width = triggers.timeline_width_ambient
        return TriggerResult(TriggerKind.AMBIENT, False, width, content, roll.reason, ambient=roll)
    return TriggerResult(TriggerKind.NONE, False, 0, content, roll.reason, ambient=roll)
