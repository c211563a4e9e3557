"""Today's group activity: "今天谁最活跃", "今天谁话最多", "群里今天聊了多少", "今天的发言排行",
"今天的龙王是谁", "who talked the most today".

Fires only when the whole message asks about the group's activity *today* or *in the group*
(今天 / 今日 / 群里 / 本群 must be there, except for the explicit "发言排行(榜)"). Does NOT fire
on "今天好累", "你今天话好多", "他话最多了", "今天谁来上班", "活跃一下气氛", "今天谁最好看" or
"排行榜出来了吗".

Run: the China-time calendar day of `env.now`, read through `env.activity` (None → ok=False,
reason "unavailable"); the bot's own messages are not counted; the top 5 speakers are named
(names sanitised: no newlines or 【】, at most 16 characters).
"""

from __future__ import annotations

import re
from datetime import date, datetime, time

from pallas.core.clock import CHINA, DAY_S, local_day
from pallas.core.records import SpeakerCount
from pallas.core.turn import anonymous_member_label
from pallas.features.tools._text import compact_request
from pallas.features.tools.base import ToolCall, ToolEnv, ToolOutput, failure, success

TOP_SPEAKERS = 5
MAX_NAME_CHARS = 16

_TODAY = r"(?:今天|今日|本日)"
_GROUP = r"(?:群里|群内|本群|这个群|这群|咱们群|咱群|我们群|群)"
_SCOPE = rf"(?P<scope>(?:{_TODAY}|{_GROUP}|的)*)"
_WHO = r"(?:谁|哪个|哪位|哪个人|谁是)"
_MOST = (
    r"(?:最活跃|话最多|发言最多|说话最多|说得最多|聊得最多|聊的最多|最能聊|最能说|最能水|水群最多"
    r"|最水|消息最多|发的消息最多|发消息最多|是龙王|当龙王|龙王)"
)
_MOST_ONE = r"(?:最活跃的|话最多的|发言最多的|的龙王|龙王)"
_RANK = r"(?:发言|活跃|水群|聊天|话痨|消息)(?:排行榜|排行|排名|榜单|榜|统计)"
# A count question needs a verb (聊了 / 发了 / 说了) or a unit (条 / 消息): "今天有多少" is not one.
_COUNT = (
    r"(?:一共|总共|总计)?(?:(?:聊了|发了|说了)(?:多少|几)(?:条|句)?(?:消息|信息|话)?"
    r"|(?:有)?(?:多少|几)(?:条|句)(?:消息|信息|话)?|(?:有)?多少(?:消息|信息))"
)
_ASKING = r"(?:是谁|是什么|怎么样|如何|呢|看看|给我看看)?"

# (pattern, whether 今天 / 群 must appear in the scope)
_PATTERNS: tuple[tuple[re.Pattern[str], bool], ...] = (
    (re.compile(rf"{_SCOPE}{_WHO}{_MOST}{_ASKING}"), True),
    (re.compile(rf"{_SCOPE}{_MOST_ONE}(?:是谁|是哪个|是哪位)"), True),
    (re.compile(rf"(?:看看|查查|查一下|看一下)?{_SCOPE}{_RANK}{_ASKING}"), False),
    (re.compile(rf"{_SCOPE}{_COUNT}"), True),
    (
        re.compile(
            r"(?:who(?:'s|\s+is|\s+was)?\s+(?:the\s+)?most\s+active|who\s+(?:talked|chatted|spoke)"
            r"\s+(?:the\s+)?most|how\s+many\s+messages)(?:\s+(?:in\s+)?(?:the\s+|this\s+)?group)?"
            r"\s+today(?:\s+in\s+(?:the\s+|this\s+)?group)?"
        ),
        False,
    ),
)
_SCOPE_WORD_RE = re.compile(rf"{_TODAY}|{_GROUP}")
_NAME_NOISE_RE = re.compile(r"[\r\n\t【】\[\]]+")


class ActivityTool:
    name = "activity"
    label = "群活跃"

    def match(self, text: str) -> ToolCall | None:
        compact = compact_request(text).replace(" ", "") if _is_cjk(text) else compact_request(text)
        for pattern, needs_scope in _PATTERNS:
            found = pattern.fullmatch(compact)
            if found is None:
                continue
            scope = found.groupdict().get("scope") or ""
            if needs_scope and not _SCOPE_WORD_RE.search(scope):
                continue
            return ToolCall(self.name, (("day", "today"),), found.group(0))
        return None

    async def run(self, call: ToolCall, env: ToolEnv) -> ToolOutput:
        if env.activity is None:
            return failure(self, "unavailable", "现在查不到群里的发言记录")
        day = date.fromisoformat(local_day(env.now))
        since = datetime.combine(day, time(), CHINA).timestamp()
        until = since + DAY_S
        total = await env.activity.message_count(env.bot_id, env.group_id, since=since, until=until)
        speakers = await env.activity.speaker_counts(
            env.bot_id, env.group_id, since=since, until=until, limit=TOP_SPEAKERS + 1
        )
        top = [s for s in speakers if s.user_id != env.bot_id and s.count > 0][:TOP_SPEAKERS]
        return success(self, _describe(day, total, top))


def _is_cjk(text: str) -> bool:
    return any("\u4e00" <= char <= "\u9fff" for char in text)


def _describe(day: date, total: int, top: list[SpeakerCount]) -> str:
    head = f"今天（{day.month}月{day.day}日）"
    if total <= 0 or not top:
        return f"{head}群里还没有人说话"
    ranking = "、".join(f"{sanitize_name(s.name, s.user_id)} {s.count} 条" for s in top)
    return f"{head}群里共 {total} 条消息；发言最多：{ranking}"


def sanitize_name(name: str, user_id: int) -> str:
    """One line, no 【】 or brackets (they would break the prompt block), ≤ 16 characters."""
    cleaned = _NAME_NOISE_RE.sub(" ", name or "").strip()[:MAX_NAME_CHARS].strip()
    return cleaned or anonymous_member_label(user_id)
