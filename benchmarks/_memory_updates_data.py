"""The cases of `benchmarks.memory_updates`: corrections taught with 记住 and lines said in chat.

Each case: what the member taught before (first person), what they say now, which of the old
facts must be retired, a word the new live fact must hold ("" = nothing new stays live: a bare
denial is history only), and the op a model that understood the line answers (None: no fact).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pallas.features.memory_commands.teaching import third_person

UNRELATED = "我对花生过敏"  # every member also has this fact: it must stay
_Group = Literal[
    "issue", "correction", "denial", "meaning", "keep", "dev-correction", "dev-denial", "dev-keep"
]
_Op = Literal["add", "update", "deny"]


@dataclass(frozen=True, slots=True)
class UpdateCase:
    group: _Group
    how: Literal["teach", "chat"]
    old: tuple[str, ...]
    said: str
    retired: tuple[str, ...]
    new_marker: str
    model: _Op | None
    key: str = "fact"

    @property
    def fact(self) -> str:
        """The new fact as stored (and as the scripted model writes it)."""
        return third_person(self.said) or self.said

    @property
    def model_replaces(self) -> tuple[str, ...]:
        return tuple(third_person(o) or o for o in self.retired)


def _c(
    group: _Group,
    how: Literal["teach", "chat"],
    old: tuple[str, ...],
    said: str,
    retired: tuple[str, ...],
    marker: str,
    model: _Op | None,
) -> UpdateCase:
    return UpdateCase(group, how, old, said, retired, marker, model)


CASES: tuple[UpdateCase, ...] = (
    # the six corrections and two denials
    _c("issue", "teach", ("我在腾讯上班",), "我换工作了，现在在做产品经理", ("我在腾讯上班",),
       "产品经理", "update"),
    _c("issue", "teach", ("我读高二",), "我升高三了", ("我读高二",), "高三", "update"),
    _c("issue", "teach", ("我用的是华为手机",), "我换手机了，现在用的是小米14",
       ("我用的是华为手机",), "小米14", "update"),
    _c("issue", "teach", ("我最喜欢的水果是草莓",), "我现在最喜欢的水果变成芒果了",
       ("我最喜欢的水果是草莓",), "芒果", "update"),
    _c("issue", "teach", ("我住在海淀区",), "我上个月搬到朝阳了", ("我住在海淀区",), "朝阳",
       "update"),
    _c("issue", "teach", ("我是做程序员的",), "我换工作了，现在在做设计", ("我是做程序员的",),
       "设计", "update"),
    _c("issue", "chat", ("我养了一只猫",), "我已经不养猫了", ("我养了一只猫",), "", "deny"),
    _c("issue", "chat", ("我在腾讯上班",), "我已经从腾讯辞职了", ("我在腾讯上班",), "", "deny"),
    # more corrections
    _c("correction", "teach", ("我住在西城区",), "我搬到了通州", ("我住在西城区",), "通州",
       "update"),
    _c("correction", "teach", ("我最喜欢的歌手是周杰伦",), "我现在最喜欢的歌手变成林俊杰了",
       ("我最喜欢的歌手是周杰伦",), "林俊杰", "update"),
    _c("correction", "teach", ("我在读大二",), "我读大三了", ("我在读大二",), "大三", "update"),
    _c("correction", "teach", ("我的手机是小米",), "我换了新手机，用的是华为Mate60",
       ("我的手机是小米",), "华为", "update"),
    # more denials
    _c("denial", "chat", ("我抽烟",), "我戒烟了", ("我抽烟",), "戒烟", "update"),
    _c("denial", "chat", ("我每天喝咖啡",), "我早就不喝咖啡了", ("我每天喝咖啡",), "", "deny"),
    _c("denial", "chat", ("我在玩原神",), "我不再玩原神了", ("我在玩原神",), "", "deny"),
    _c("denial", "chat", ("我住在海淀区",), "我现在不住海淀了", ("我住在海淀区",), "", "deny"),
    # meaning only: no rule knows these on purpose
    _c("meaning", "teach", ("我在腾讯上班",), "我现在是自由职业者了", ("我在腾讯上班",),
       "自由职业者", "update"),
    _c("meaning", "chat", ("我养了一只猫",), "我把猫送给我妈养了", ("我养了一只猫",), "", "deny"),
    _c("meaning", "teach", ("我单身",), "我有女朋友了", ("我单身",), "女朋友", "update"),
    # not a denial of the member's own fact: nothing retires
    _c("keep", "chat", ("我养狗",), "我不养猫，但是我养狗", (), "", None),
    _c("keep", "chat", ("我养了一只猫",), "我朋友不养猫了", (), "", None),
    _c("keep", "chat", ("我养了一只猫",), "你不养猫了吗？", (), "", None),
    _c("keep", "teach", ("我养了一只猫",), "我又养了一只狗", (), "狗", "add"),
)  # fmt: skip
