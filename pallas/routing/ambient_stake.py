"""ambient_stake: does the bot have anything to add to a message nobody addressed to it?

Pure rules, no LLM. Runs for unaddressed turns that came through a soft trigger (ambient roll,
alias mention, follow-up window) before they can become an ambient REPLY or a PASS phrase.

Never (the turn is skipped with stage `stake` and one of these reasons):
- `announcement` — @全体成员, a 【通知】/【公告】/【群规】 header, or an "各位同学/请大家…" notice;
- `ad_or_post` — contact details (mobile / landline numbers, e-mail, QQ / 微信 ids), links,
  list formatting (two or more numbered or bulleted lines), a 【…】 header, ad wording, or a
  long pasted post (more than `long_post_chars` meaningful characters);
- `member_thread` — quotes or @s another member, or continues a two-person exchange (the
  member who spoke last, within `thread_window_s`, and this speaker alternate: A, B, A);
- `member_follow_on` — (not in the follow-up window) a short line (≤ `short_follow_on_chars`)
  right after another member's line: "哪一关", "几抽了" react to that member, not to the group;
- `member_only_question` — (no persona name in it) a question only the members can answer:
  asked of the group (大家 / 你们 / 有人 / 有没有人 / 谁 / 各位 …: their own schedules, fees,
  "有人…吗" polls — in the follow-up window too: the member turned to the group) or, outside
  the follow-up window, about local logistics (fees, forms, rooms, classes, teachers,
  deliveries);
- `no_stake` — an ambient roll on a plain statement or a closed question: nothing to add.

A stake (the turn goes on to necessity and the turn decision): `follow_up` (the bot was just
talking with this member), `alias` (the persona's name in the text — not when it is only the
subject of a question about its bearer, "帕拉斯有皮肤吗"), `topic` (one of the
group's `topic_keys`, e.g. the persona's game / world), `worldbook` (a key of one of the
group's worldbook entries: the persona's world named), `knowledge` (a key word of the group's
knowledge or group memory), `remembered_topic` (a word of the speaker's earlier conversations
with the bot), `member_memory` (a word of what the bot remembers about the speaker: "日语" for
a member it knows is learning Japanese) — these four as `StakeKeys` — `open_question` (a
knowledge / how / why / recommendation question to nobody in particular), `emotion` (good news,
venting, a surprise). The message's `mood` is returned too: the PASS exit picks its phrase by it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from pallas.routing.config import SocialFitConfig
from pallas.routing.text_signals import (
    SocialAction,
    classify_social_action,
    has_emotion,
    is_question,
    is_spam,
    meaningful_length,
)


class Mood(StrEnum):
    QUESTION = "question"
    GOOD_NEWS = "good_news"
    VENTING = "venting"
    SURPRISE = "surprise"
    WARM = "warm"  # thanks / teasing / praise aimed at the bot (follow-up or mention only)
    STATEMENT = "statement"


_ANNOUNCE_RE = re.compile(
    r"^\s*(?:【\s*(?:通知|公告|群规|重要|提醒|紧急)|通知[:：]|公告[:：])|"
    r"各位(?:同学|群友|老师|家长|成员|同事)|请(?:大家|各位|同学们)|全体(?:同学|成员)"
)
_PHONE_RE = re.compile(r"(?<!\d)1[3-9]\d{9}(?!\d)|(?<!\d)0\d{2,3}-?\d{7,8}(?!\d)")
_EMAIL_RE = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+")
_CONTACT_RE = re.compile(
    r"(?:微信|vx|v信|wx|加v|qq|扣扣)\s*[:：号]?\s*[a-z0-9_-]{5,}|(?<!\d)\d{8,11}(?!\d)",
    re.IGNORECASE,
)
_LINK_RE = re.compile(r"https?://|www\.|\b[a-z0-9-]+\.(?:com|cn|net|tv|cc)\b", re.IGNORECASE)
_LIST_LINE_RE = re.compile(r"^\s*(?:\d{1,2}\s*[.、)）:：]|[-•·*]\s|[①②③④⑤⑥⑦⑧⑨])", re.MULTILINE)
_HEADER_RE = re.compile(r"【[^】]{2,12}】")
_AD_RE = re.compile(
    r"招聘|诚聘|急招|兼职|代练|代打|收号|出售|转让|转租|优惠|薪资|包邮|私聊|有意(?:者|向|请|可)|"
    r"问卷|互填|砍一刀|助力|拼单|团购|原价|现价|加群|进群"
)
_GROUP_ASK_RE = re.compile(
    r"大家|你们|有人|有没有人|有谁|谁[有能会要借去知]|各位|咱们|咱班|我们班|群里|群友|老铁们|"
    r"uu们|姐妹们|兄弟们"
)
_LOCAL_RE = re.compile(
    r"扣款|扣钱|扣了|缴费|交费|班费|学费|住宿费|医保|报销|报名|截止|申请表|签字|盖章|教室|宿舍|"
    r"快递|辅导员|班长|群主|导师|老师|课表|上课|的课|考试|作业|组会|开会|大会|食堂|图书馆|校车|"
    r"打印|体检|奖学金|中期|开题|答辩|热水|门禁|[A-Z]\d{3}\b|\d+号|周[一二三四五六日天]|"
    r"明天|今晚|下午|上午|几点"
)
_KNOW_RE = re.compile(r"(?:有人|有没有人|谁|大家|各位|你们)(?:知道|懂|了解)")
_OPEN_Q_RE = re.compile(
    r"为什么|为啥|怎么[做用写办弄样回]|如何|是什么|什么是|什么意思|啥意思|区别|原理|推荐|"
    r"有什么好|哪个好|哪种|怎么看|科普|讲讲|介绍"
)
_GOOD_NEWS_RE = re.compile(
    # 终于 alone is no news ("土豆终于不是菜鸡了" teases 土豆): only with what was achieved
    r"过了|中了|上岸|录取|offer|到手|通过了|拿到了|出了[！!]|我中|中奖|好耶|太好了|成功了|"
    r"终于(?:下班|放假|考完|写完|做完|搞定|等到|到手|毕业|发了|出了|抽到|修好|好了)|"
    r"三星了|双黄|毕业了|发工资|涨工资|转正|领证|脱单|抽到了|出货",
    re.IGNORECASE,
)
_VENT_EXTRA_RE = re.compile(r"难过|伤心|委屈|倒霉|白跑|失败了|又被|心态|不想活|好惨")
# not venting: 麻烦 (a chore), 好哭 (moving), amusement (绷不住 / 笑哭): silence fits
_NOT_VENTING_RE = re.compile(r"麻烦|不烦|不累|好哭|绷不住|没绷住|蚌埠住|笑哭|哭笑")
_SURPRISE_RE = re.compile(r"卧槽|我靠|居然|竟然|原来|诶|欸|哇|天哪|天呐|震惊|没想到|啊这")


@dataclass(frozen=True, slots=True)
class RecentLine:
    """One earlier member message of the group (kept in the route state, newest last)."""

    t: float
    user: int
    text: str = ""
    reply_to_user: int | None = None  # the member it quoted / @-ed, if any
    to_bot: bool = False  # it addressed the bot (not part of a member-to-member exchange)


@dataclass(frozen=True, slots=True)
class StakeKeys:
    """Words that give the bot a stake in an unaddressed line, by where they come from; the
    first source that matches names the stake (lower-cased words, matched as substrings)."""

    worldbook: frozenset[str] = frozenset()  # keys of the group's worldbook entries
    knowledge: frozenset[str] = frozenset()  # the group's knowledge and group memory
    remembered_topic: frozenset[str] = frozenset()  # the speaker's earlier talks with the bot
    member_memory: frozenset[str] = frozenset()  # what the bot remembers about the speaker

    def match(self, lowered: str) -> str | None:
        for reason in ("worldbook", "knowledge", "remembered_topic", "member_memory"):
            if any(key and key in lowered for key in getattr(self, reason)):
                return reason
        return None


NO_STAKE_KEYS = StakeKeys()


@dataclass(frozen=True, slots=True)
class StakeInput:
    text: str  # the content text (vocative alias / @bot removed)
    raw_text: str  # what the member typed, line breaks kept
    user_id: int
    now: float
    trigger: str = "ambient"  # ambient | alias | follow_up
    mentioned: bool = False  # the persona's name inside the text
    # ...as the subject of a question about its bearer ("帕拉斯有皮肤吗"): members talking
    # about the character, which is no stake by itself
    asked_about: bool = False
    mentions_others: bool = False
    mentions_all: bool = False
    replies_to_member: bool = False  # quotes a message of another member
    recent: Sequence[RecentLine] = ()  # earlier member lines, newest last
    stake_keys: StakeKeys = NO_STAKE_KEYS


@dataclass(frozen=True, slots=True)
class StakeResult:
    allowed: bool
    reason: str  # the stake, or the named reason to stay out
    mood: Mood


_WARM_ACTIONS = frozenset({SocialAction.THANKS, SocialAction.TEASING})


def classify_mood(text: str, *, about_bot: bool = False) -> Mood:
    """The kind of message a PASS phrase would answer (a question is never answered).

    `about_bot`: a follow-up to the bot or a mention of it, where thanks and teasing are `warm`;
    elsewhere they are plain statements."""
    plain = text.strip()
    if is_question(plain):
        return Mood.QUESTION
    if about_bot and classify_social_action(plain) in _WARM_ACTIONS:
        return Mood.WARM
    calm = _NOT_VENTING_RE.sub("", plain)
    if has_emotion(calm) or _VENT_EXTRA_RE.search(calm):
        return Mood.VENTING
    if _GOOD_NEWS_RE.search(plain):
        return Mood.GOOD_NEWS
    if _SURPRISE_RE.search(plain):
        return Mood.SURPRISE
    return Mood.STATEMENT


class ObservedPhrase(str):
    """A group's learned short reply with the mood of the messages it answered (`mood` None:
    mixed or unknown). A plain `str` everywhere else; the PASS exit reads `mood`."""

    mood: Mood | None

    def __new__(cls, text: str, mood: Mood | None = None) -> ObservedPhrase:
        phrase = super().__new__(cls, text)
        phrase.mood = mood
        return phrase


def observed_mood(trigger_texts: Sequence[str], *, majority: float = 0.6) -> Mood | None:
    """The mood most of `trigger_texts` (what the group answered with a phrase) share, if any."""
    moods = [classify_mood(text) for text in trigger_texts if text.strip()]
    if not moods:
        return None
    top = max(set(moods), key=moods.count)
    return top if moods.count(top) >= majority * len(moods) else None


def is_announcement(raw: str, *, mentions_all: bool) -> bool:
    return mentions_all or bool(_ANNOUNCE_RE.search(raw))


def is_ad_or_post(raw: str, *, long_post_chars: int) -> bool:
    """Pasted material: contacts, links, lists, a 【header】, ad wording, or just long."""
    if _PHONE_RE.search(raw) or _EMAIL_RE.search(raw) or _CONTACT_RE.search(raw):
        return True
    if _LINK_RE.search(raw) or is_spam(raw) or _HEADER_RE.search(raw):
        return True
    if len(_LIST_LINE_RE.findall(raw)) >= 2 or _AD_RE.search(raw):
        return True
    return meaningful_length(raw) > long_post_chars


def in_member_thread(inp: StakeInput, config: SocialFitConfig) -> str | None:
    """`member_thread` / `member_follow_on` when the message belongs to other members' talk."""
    if inp.replies_to_member or inp.mentions_others:
        return "member_thread"
    window = [r for r in inp.recent if 0 <= inp.now - r.t <= config.thread_window_s]
    if not window or window[-1].user == inp.user_id or window[-1].to_bot:
        return None
    other = window[-1]
    if other.reply_to_user == inp.user_id:
        return "member_thread"
    if len(window) >= 2 and window[-2].user == inp.user_id and not window[-2].to_bot:
        return "member_thread"  # A, B, A: a two-person exchange
    if meaningful_length(inp.text) <= config.short_follow_on_chars:
        return "member_follow_on"
    return None


def asks_the_group(text: str) -> bool:
    """A question put to the members by name ("有没有人一起", "大家吃了吗"), not for knowledge."""
    if not is_question(text) or (_KNOW_RE.search(text) and _OPEN_Q_RE.search(text)):
        return False
    return bool(_GROUP_ASK_RE.search(text))


def is_member_only_question(text: str) -> bool:
    """Asked of the members (their plans, fees, forms, rooms), not of someone who knows."""
    if not is_question(text):
        return False
    if _KNOW_RE.search(text) and _OPEN_Q_RE.search(text):
        return False  # "有人知道为什么…": asks for knowledge, not for the members' own affairs
    if _GROUP_ASK_RE.search(text):
        return True
    return bool(_LOCAL_RE.search(text)) and not _OPEN_Q_RE.search(text)


def assess_stake(inp: StakeInput, config: SocialFitConfig) -> StakeResult:
    """Whether an unaddressed turn may become an ambient REPLY or a PASS phrase, and why."""
    follow_up = inp.trigger == "follow_up"
    mood = classify_mood(inp.text, about_bot=follow_up or inp.mentioned)
    if not config.enabled:
        return StakeResult(True, "stake_disabled", mood)
    if is_announcement(inp.raw_text, mentions_all=inp.mentions_all):
        return StakeResult(False, "announcement", mood)
    if is_ad_or_post(inp.raw_text, long_post_chars=config.long_post_chars):
        return StakeResult(False, "ad_or_post", mood)
    thread = in_member_thread(inp, config)
    if thread is not None and not (follow_up and thread == "member_follow_on"):
        return StakeResult(False, thread, mood)
    if follow_up and not inp.mentioned and asks_the_group(inp.text):
        # "有没有人一起" / "你们吃了吗" right after the bot answered them: asked of the members
        return StakeResult(False, "member_only_question", mood)
    if follow_up:  # the member is still talking with the bot: its questions are for the bot
        return StakeResult(True, "follow_up", mood)
    if inp.mentioned and not inp.asked_about:  # talk about the bot is the bot's business
        return StakeResult(True, "alias", mood)
    if is_member_only_question(inp.text):
        return StakeResult(False, "member_only_question", mood)
    lowered = inp.text.lower()
    if any(key and key.lower() in lowered for key in config.topic_keys):
        return StakeResult(True, "topic", mood)
    known = inp.stake_keys.match(lowered)
    if known is not None:
        return StakeResult(True, known, mood)
    if mood is Mood.QUESTION:
        if _OPEN_Q_RE.search(inp.text):
            return StakeResult(True, "open_question", mood)
        return StakeResult(False, "no_stake", mood)
    if mood is not Mood.STATEMENT:
        return StakeResult(True, "emotion", mood)
    return StakeResult(False, "no_stake", mood)
