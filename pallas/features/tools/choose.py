"""Pick one of several options: "帮我选一下：火锅还是烧烤", "A还是B，选一个", "选一个：a、b、c",
"从猫和狗里挑一个", "pick one: tea or coffee".

Needs an explicit choosing verb (选 / 挑 / 决定 / 抽, or 帮我定 / 给我定) that is a clause of
its own, before or after the options; the options are split on 还是 / 或者 / 或是 / 、 / , / ，
/ or (and on spaces when nothing else separates them and the verb comes first; 和 / 跟 / and only
inside 从…里 / 在…之间 / between).
Does NOT fire on a bare question ("火锅还是烧烤？"), on the verb used in a sentence
("你选的那个不错", "我选了火锅", "选择困难症", "决定了去吃火锅还是烧烤") or without two distinct
options ("帮我选个名字").
Run: 2–10 options of at most 30 characters each (deduplicated); the pick uses `env.rng` only.
"""

from __future__ import annotations

import re

from pallas.features.tools._text import compact_request
from pallas.features.tools.base import ToolCall, ToolEnv, ToolOutput, failure, success

MIN_OPTIONS = 2
MAX_OPTIONS = 10
MAX_OPTION_CHARS = 30

_WHO = r"(?:你|请|麻烦|麻烦你|你来|你就)?(?:帮我|给我|替我|帮忙|帮)?(?:随机|随便|直接)?"
_AMOUNT = r"(?:一下|一个|一样|一项|个|下|一下吧)?"
_VERB_CORE = r"(?:选|挑|抽|决定|(?:帮我|给我|替我)定)"
# The verb clause on its own: 帮我选一下 / 选一个 / 你决定 / 帮我定一下 / 选哪个 / 挑哪个好.
_VERB_CLAUSE = (
    rf"{_WHO}{_VERB_CORE}{_AMOUNT}(?:吧|呗)?"
    r"|(?:你|你说|你觉得)?(?:该)?(?:选|挑)哪(?:个|一个|样)(?:好|比较好)?"
)
_EN_VERB = (
    r"(?:please\s+)?(?:help\s+me\s+|you\s+)?(?:pick|choose|decide)(?:\s+one|\s+for\s+me)*"
    r"(?:\s+please)?"
)
_EN_VERB_LEAD = (
    r"(?:please\s+)?(?:help\s+me\s+)?(?:pick|choose|decide)"
    r"(?:(?:\s+one|\s+for\s+me)+\s*:?|\s*:)"
)
_SEP = r"[\s:,?!.;]"

# (pattern, whether the options may be separated by spaces alone). Options that come *before*
# the verb need a real separator: "今天 好累 你决定吧" or "i can't decide" are not lists.
_PATTERNS: tuple[tuple[re.Pattern[str], bool], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), spaces)
    for pattern, spaces in (
        # 帮我选一下：火锅还是烧烤 — the verb clause, then a separator (or a quantity word) and the
        # options; "决定了去吃火锅还是烧烤" has neither, so it does not fire.
        (
            rf"(?:{_WHO}{_VERB_CORE}(?:一下|一个|个){_SEP}*|(?:{_VERB_CLAUSE}){_SEP}+)"
            r"(?P<options>.+)",
            True,
        ),
        # 火锅还是烧烤，帮我挑一个 — the options, then the verb clause closing the message.
        (rf"(?P<options>.+?){_SEP}*(?:{_VERB_CLAUSE})", False),
        # 从猫和狗里挑一个 / 在猫和狗之间选一个.
        (rf"{_WHO}(?:从|在)(?P<between>.+?)(?:里面|里|中间|中|之间|之中)(?:{_VERB_CLAUSE})", False),
        # pick one: tea or coffee / tea or coffee? pick one / choose between tea and coffee.
        (rf"{_EN_VERB_LEAD}\s*(?P<options>.+)", True),
        (rf"(?P<options>.+?){_SEP}+{_EN_VERB}", False),
        (
            r"(?:please\s+)?(?:help\s+me\s+)?(?:pick|choose|decide)(?:\s+one)?\s+between\s+"
            r"(?P<between>.+)",
            False,
        ),
    )
)

_STRONG_SPLIT_RE = re.compile(r"还是|或者|或是|、|,|;|/|\|")
_EN_OR_RE = re.compile(r"\s+or\s+", re.IGNORECASE)
_BETWEEN_SPLIT_RE = re.compile(r"和|跟|与|\s+and\s+", re.IGNORECASE)
_OPTION_EDGE = " ?!.:;'\"()[]"


class ChooseTool:
    name = "choose"
    label = "帮忙选"

    def match(self, text: str) -> ToolCall | None:
        compact = compact_request(text, lower=False)
        for pattern, spaces in _PATTERNS:
            found = pattern.fullmatch(compact)
            if found is None:
                continue
            options = _options(found, spaces=spaces)
            if len(options) >= MIN_OPTIONS:
                return ToolCall(self.name, tuple(("option", o) for o in options), found.group(0))
        return None

    async def run(self, call: ToolCall, env: ToolEnv) -> ToolOutput:
        options = _dedupe(call.arg_values("option"))
        if len(options) < MIN_OPTIONS:
            return failure(self, "too_few_options", "至少要给两个选项才能帮你选")
        if len(options) > MAX_OPTIONS:
            return failure(self, "too_many_options", f"选项太多了，最多 {MAX_OPTIONS} 个")
        if any(len(o) > MAX_OPTION_CHARS for o in options):
            too_long = f"有选项太长了，每个最多 {MAX_OPTION_CHARS} 个字"
            return failure(self, "option_too_long", too_long)
        picked = env.rng.choice(options)
        return success(self, f"从 {' / '.join(options)} 里选中了：{picked}")


def _options(found: re.Match[str], *, spaces: bool) -> tuple[str, ...]:
    groups = found.groupdict()
    if groups.get("between"):
        return _split(groups["between"], extra=_BETWEEN_SPLIT_RE, spaces=False)
    return _split(groups.get("options") or "", extra=None, spaces=spaces)


def _split(text: str, *, extra: re.Pattern[str] | None, spaces: bool) -> tuple[str, ...]:
    """Strong separators first; then " or " / 和; spaces only when allowed and nothing else."""
    parts = _STRONG_SPLIT_RE.split(text)
    for fallback in (_EN_OR_RE, extra):
        if len(parts) == 1 and fallback is not None:
            parts = fallback.split(text)
    if len(parts) == 1 and spaces:
        parts = text.split(" ")
    return _dedupe(parts)


def _dedupe(parts: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Trimmed, non-empty, first spelling kept ("Tea" and "tea" are one option)."""
    seen: dict[str, str] = {}
    for part in parts:
        option = part.strip(_OPTION_EDGE)
        if option:
            seen.setdefault(option.casefold(), option)
    return tuple(seen.values())
