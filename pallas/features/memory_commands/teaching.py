"""Member memory commands, detected from what a member says to the bot (pure).

    @帕拉斯 记住 我喜欢猫        teach: a fact about the speaker ("TA喜欢猫"), subject = speaker
    帕拉斯，记住：叫我小明就行     teach
    @帕拉斯 忘记我 / 忘掉关于我的事 / 把我忘了吧     forget: drop what the bot knows about them
    @帕拉斯 忘掉我的血型 / 把我养猫这件事忘了        forget_one: one fact, chosen by meaning
    @帕拉斯 撤销 / 恢复                              undo: the last forgetting, within minutes
    @帕拉斯 你记得我什么 / 你记得我什么 2 / 下一页     recall: what is stored about them, by page
    @帕拉斯 你记得我是做哪行的吗 / 还记得我养的啥吗   recall with a question: answered from memory

Only messages addressed to the bot are considered (the plugin checks `to_me`). What a teaching
says is read by `read_teaching`: a statement with no subject ("记住 对芒果过敏") or in the first
person is the speaker's own fact; "小王是我表哥" is a relationship note about the speaker; a
line about the group needs an admin; a line about somebody else is not stored (that person
must say it). A teaching-looking line that is a question is a recall request, never a fact.
Anything that merely mentions forgetting ("你忘了我吗") is not a command.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from pallas.features.memory_commands.about_others import NO_NAMES, GroupNames, subject_of
from pallas.routing.triggers import command_text

TEACH_MAX_CHARS = 120

_LEAD = r"^(?:请|麻烦)?(?:你)?(?:帮我|给我)?"
_TEACH = re.compile(
    _LEAD
    + r"(?P<verb>还记得|记住|记下|记一下|记着|记好|记得)(?:了)?(?:哦|喔|啊|呀|哈)?"
    + r"[\s:：,，、]*(?P<body>.+)$",
    re.DOTALL,
)
# "记得提醒我…" / "记得叫我…" asks for a reminder, not to store a fact: never stored (the
# reminders plugin, before the memory commands, answers it).
_REMINDER = re.compile(r"^(?:提醒|叫|喊|告诉|通知|帮|给)")
_FORGET = re.compile(
    _LEAD + r"(?:把)?(?:忘记|忘掉|忘了|删掉|删除|清除|清空)(?:掉)?"
    r"(?:我|关于我的(?:事情?|一切|所有(?:事情?|记忆|信息)?|记忆|信息|资料)?"
    r"|我的(?:事情?|记忆|信息|资料|一切))"
    r"(?:吧|啦|了|哦|呀|好吗|好不好)?[\s。！!~～.]*$"
)
_FORGET_BA = re.compile(
    _LEAD
    + r"把我(?:的事情?|的记忆)?(?:都|全)?(?:忘了|忘掉|忘记|删了|删掉)"
    + r"(?:吧|啦|哦|呀)?[\s。！!~～.]*$"
)
_RECALL = re.compile(
    r"^(?:(?:你)?(?:还|都)?(?:记得|记住了|知道|记着)(?:关于)?我(?:的)?(?:什么|啥|哪些|些什么|多少)"
    r"(?:事情?|东西|信息)?(?:了|呢|吗|呀|啊)?"
    r"|关于我(?:的事)?你(?:都|还)?(?:记得|知道|记住了)(?:些)?(?:什么|啥|哪些))"
    r"[\s?？。！!~～.]*(?:第?(?P<page>\d{1,3})页?)?[\s?？。！!~～.]*$"
)
# "下一页" / "上一页" after a listing (answered only while the member's listing is fresh)
_PAGE_STEP = re.compile(
    r"^(?:(?P<next>下一页|下页|再来一页|后一页)|(?P<prev>上一页|上页|前一页))[\s。！!~～.]*$"
)
# One thing forgotten: "忘掉我的血型", "把我养猫这件事忘了吧" (after the whole-forget forms).
_ONE_TAIL = r"(?:这件事情?|这事|这条|那件事|那条|的事情?)?"
_END = r"(?:吧|啦|了|哦|呀|好吗|好不好)?[\s。！!~～.]*$"
# Imperatives only: "忘了我的伞" / "忘记我的生日了" tell of forgetting, they ask nothing.
_FORGET_ONE = re.compile(
    _LEAD + r"(?:忘记|忘掉|删掉|删除|别再记着?|不要再?记着?)(?:关于)?我(?:的)?"
    r"(?P<what>.+?)" + _ONE_TAIL + r"(?:吧|哦|呀|好吗|好不好)?[\s。！!~～.]*$"
)
_FORGET_ONE_BA = re.compile(
    _LEAD
    + r"把(?:关于)?我(?:的)?(?P<what>.+?)"
    + _ONE_TAIL
    + r"(?:都|也)?(?:忘了|忘掉|忘记|删了|删掉)"
    + _END
)
# Undo the last forgetting (within `member_commands.UNDO_WINDOW_S`): "撤销", "恢复刚才那条".
_UNDO = re.compile(
    r"^(?:撤销|撤回|恢复|找回来?|还原)(?:一下)?(?:刚才|刚刚|上一步|上一条)?(?:的)?"
    r"(?:那条|遗忘|忘记|操作|记忆)?(?:吧|啦|哦|呀)?[\s。！!~～.]*$"
    r"|^(?:别忘|不要忘)(?:了|掉)?(?:刚才|刚刚)?(?:那条)?[\s。！!~～.]*$"
)
_PUNCT_EDGES = " \t\n,，。.!！~～:：、"
_QUESTION_MARK = re.compile(r"[?？]")
# A final particle that makes a question ("…的吗", "…了没", "…是不是"); 什么 is not 么.
_QUESTION_TAIL = re.compile(r"(?:吗|嘛|(?<!什)么|呢|了没|没有|是不是|对不对|对吧)$")
_ASKING = re.compile(r"哪|啥|什么|谁|几[个岁点号月天年]|多少|怎么|为什么|为啥|多大|多久")
_GROUP_WORDS = ("我们", "咱们", "大家", "群里", "本群", "你们", "咱群", "这个群")
_FIRST_PERSON = re.compile(r"我(?!们)|俺(?!们)|本人")

TeachingKind = Literal["self", "relation", "group", "other", "question"]


CommandAction = Literal["teach", "forget", "forget_one", "undo", "recall", "page"]


@dataclass(frozen=True, slots=True)
class MemberCommand:
    action: CommandAction
    text: str = ""
    page: int = 0  # recall: the page asked for (0: the first); page: +1 next, -1 previous


@dataclass(frozen=True, slots=True)
class Teaching:
    """What a "记住 …" line says, and the fact as stored (about "TA", the speaker)."""

    kind: TeachingKind
    fact: str = ""
    reason: str = ""


def strip_address(text: str, aliases: Iterable[str] = ()) -> str:
    """Drop the call of the bot's name ("帕拉斯，…", "Pallas 记住…", "…，牛牛"; see
    `routing.triggers.command_text`) and edge punctuation."""
    return command_text(text, aliases).strip(_PUNCT_EDGES)


def detect_member_command(text: str, aliases: Iterable[str] = ()) -> MemberCommand | None:
    """forget / recall / teach, or None when the line is no memory command (the chat answers).

    A teaching-looking line that asks something ("你记得我是做哪行的吗", "还记得我养的啥")
    is a recall with the question as its text, answered from memory and never stored.
    """
    body = strip_address(text, aliases)
    if not body:
        return None
    if _FORGET.match(body) or _FORGET_BA.match(body):
        return MemberCommand("forget")
    one = _FORGET_ONE.match(body) or _FORGET_ONE_BA.match(body)
    if one is not None and not is_question(body, asked=True):
        what = one.group("what").strip(_PUNCT_EDGES)
        told = what.endswith(("了", "啦"))  # "忘记我的生日了": it happened, nobody asks
        return MemberCommand("forget_one", what) if len(what) >= 2 and not told else None
    if _UNDO.match(body):
        return MemberCommand("undo")
    recall = _RECALL.match(body)
    if recall is not None:
        return MemberCommand("recall", page=int(recall.group("page") or 0))
    step = _PAGE_STEP.match(body)
    if step is not None:
        return MemberCommand("page", page=1 if step.group("next") else -1)
    match = _TEACH.match(body)
    if match is None:
        return None
    content = match.group("body").strip(_PUNCT_EDGES)
    verb = match.group("verb")
    if verb == "记得" and _REMINDER.match(content):
        return None
    if verb == "还记得" or is_question(content, asked=verb == "记得"):
        return MemberCommand("recall", content) if len(content) >= 2 else None
    if len(content) < 2 or content in ("了", "了吗"):
        return None
    return MemberCommand("teach", content)


def is_question(text: str, *, asked: bool = False) -> bool:
    """A question mark, a question particle at the end, or (after 记得) a question word."""
    body = text.strip(_PUNCT_EDGES)
    if _QUESTION_MARK.search(text) or _QUESTION_TAIL.search(body):
        return True
    return asked and bool(_ASKING.search(body))


# Kin and social ties a member names ("小王是我表哥", "我表哥叫小王"). Partners stay person
# facts ("TA女朋友叫小美"): they fill the partner slot that a later statement replaces.
_TIES = (
    "表哥", "表姐", "表弟", "表妹", "堂哥", "堂姐", "堂弟", "堂妹", "哥哥", "姐姐", "弟弟",
    "妹妹", "大哥", "二哥", "大姐", "二姐", "哥", "姐", "弟", "妹", "爸爸", "妈妈", "老爸",
    "老妈", "爸", "妈", "父亲", "母亲", "爷爷", "奶奶", "外公", "外婆", "姥姥", "姥爷", "叔叔",
    "阿姨", "舅舅", "舅妈", "姑姑", "姨妈", "儿子", "女儿", "侄子", "侄女", "外甥", "外甥女",
    "同学", "大学同学", "高中同学", "初中同学", "同事", "室友", "舍友", "朋友", "好朋友", "好友",
    "闺蜜", "死党", "兄弟", "发小", "邻居", "老板", "领导", "上司", "师父", "师傅", "徒弟",
    "老师", "学生", "偶像", "队友", "网友",
)  # fmt: skip
_TIE = "|".join(sorted(_TIES, key=len, reverse=True))
_NAME = r"(?P<name>[^我你他她它们，,。.！!?？\s]{1,8}?)"
_TIE_NAMED_FIRST = re.compile(rf"^{_NAME}(?:是|就是)(?:我|俺)(?:的)?(?P<tie>{_TIE})(?:了|啦|哦)?$")
_TIE_FIRST = re.compile(rf"^(?:我|俺)(?:的)?(?P<tie>{_TIE})(?:叫|是|就是){_NAME}(?:了|啦|哦)?$")
# Somebody else as the subject: a pronoun, a group role, "@…", a nickname (小王 / 阿强 /
# 老张), or a surname with a title (王老师). Their facts come from them, not from a member.
_SURNAMES = (
    "王李张刘陈杨赵黄周吴徐孙胡朱高林何郭马罗梁宋郑谢韩唐冯于董萧程曹袁邓许傅沈曾彭吕苏卢"
    "蒋蔡贾丁魏薛叶阎余潘杜戴夏钟汪田任姜范方石姚谭廖邹熊金陆郝孔白崔康毛邱秦江史顾侯邵孟"
    "龙万段雷钱汤尹黎易常武乔贺赖龚文"
)
_OTHER_SUBJECT = re.compile(
    r"^(?:@|他|她|它|ta(?![a-z])|TA|群主|管理员?|群管|某人|有人"
    rf"|[{_SURNAMES}](?:老师|老板|总|哥|姐|叔|姨|工|医生|同学|先生|女士|经理|师傅)"
    rf"|老[{_SURNAMES}]|小[{_SURNAMES}]|阿[\u4e00-\u9fff](?=是|喜欢|爱|在|住|养|有|会|要|想|不))"
)


def read_teaching(text: str, names: GroupNames = NO_NAMES) -> Teaching:
    """What a teaching says and the fact to store ("TA…" is the speaker), by rules.

    Order matters: a question is never a fact; the group comes before the speaker ("我们周五
    开黑" is the group's); a tie ("小王是我表哥") before anything else about a person; a line
    whose subject is somebody else (`about_others.subject_of`: a group card, a QQ id, a bare
    name; or 他 / 小王 / 老张 …) before a first-person fact ("老王欠我钱" is about 老王), unless
    it is the speaker's opinion or opens with their own name; a line with no subject at all
    ("对芒果过敏", "家里狗子是只萨摩耶") is the speaker's own.
    """
    body = text.strip(_PUNCT_EDGES)
    if is_question(body):
        return Teaching("question", reason="question")
    if any(word in body for word in _GROUP_WORDS):
        return Teaching("group", body, "about_group")
    tie = _TIE_NAMED_FIRST.match(body) or _TIE_FIRST.match(body)
    if tie is not None:
        name, role = tie.group("name"), tie.group("tie")
        return Teaching("relation", f"{name}是TA的{role}", f"tie:{role}")
    subject = subject_of(body, names)
    if subject.reason in ("own_name", "own_id") and len(subject.rest) >= 2:
        return Teaching("self", "TA" + _FIRST_PERSON.sub("TA", subject.rest), subject.reason)
    if subject.kind != "self" and _OTHER_SUBJECT.match(body):
        return Teaching("other", reason="about_someone_else")
    if subject.kind == "other":
        return Teaching("other", reason=f"about_someone_else:{subject.reason}")
    if _FIRST_PERSON.search(body):
        reason = subject.reason if subject.reason in ("opinion", "with_me") else "first_person"
        return Teaching("self", _FIRST_PERSON.sub("TA", body).strip(), reason)
    return Teaching("self", f"TA{body}", "no_subject")


def third_person(text: str, names: GroupNames = NO_NAMES) -> str | None:
    """The teaching rewritten about the speaker ("我喜欢猫" → "TA喜欢猫"; "对芒果过敏" →
    "TA对芒果过敏"), or None when it is not the speaker's own fact."""
    teaching = read_teaching(text, names)
    return teaching.fact if teaching.kind == "self" else None
