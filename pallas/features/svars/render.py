"""`$[svars::table]`, `$[svars::list]`, `$[svars::<name>]` and the 【会话变量】 state section.

Visible to a turn: every group-scope variable plus the member-scope variables of the member
being answered. Rendering only ever happens in admin-authored text (persona, prompt overrides).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from pallas.features.svars.config import Scalar, SvarConfig, SvarDef
from pallas.features.svars.ops import VarKey, current_value, var_key

PLACEHOLDER_RE = re.compile(r"\$\[svars::([^\]\s]{1,40})\]")
HEADER_SVARS = "会话变量"


@dataclass(frozen=True, slots=True)
class SvarView:
    """The variables as one turn sees them (read before the pipeline runs)."""

    config: SvarConfig
    values: Mapping[VarKey, Scalar]
    speaker_id: int
    versions: Mapping[VarKey, int] | None = None

    def value(self, var: SvarDef) -> Scalar:
        return current_value(var, self.values, var_key(var, self.speaker_id))

    def visible(self) -> list[tuple[SvarDef, Scalar]]:
        return [(v, self.value(v)) for v in self.config.variables if v.visible]

    # the context's `VariableState`: what the variable processor asks of a turn's variables
    def render_placeholders(self, text: str) -> tuple[str, tuple[str, ...]]:
        return render_placeholders(text, self)

    def state_section(self) -> str:
        return render_state_section(self) if self.config.state_section else ""

    def trace_values(self) -> dict[str, Scalar]:
        return {f"{member}:{name}": value for (member, name), value in self.values.items()}


def format_value(value: Scalar) -> str:
    if isinstance(value, bool):
        return "是" if value else "否"
    if isinstance(value, float):
        return f"{value:.4g}" if not value.is_integer() else str(int(value))
    return str(value)


def render_table(view: SvarView) -> str:
    rows = view.visible()
    if not rows:
        return "（暂无会话变量）"
    lines = ["| 变量 | 当前值 |", "| --- | --- |"]
    lines += [f"| {v.display} | {format_value(x)} |" for v, x in rows]
    return "\n".join(lines)


def render_list(view: SvarView) -> str:
    rows = view.visible()
    if not rows:
        return "（暂无会话变量）"
    return "\n".join(f"- {v.display}：{format_value(x)}" for v, x in rows)


def render_placeholders(text: str, view: SvarView) -> tuple[str, tuple[str, ...]]:
    """`text` with every known `$[svars::…]` replaced; unknown names stay as written."""
    used: list[str] = []

    def repl(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == "table":
            rendered = render_table(view)
        elif name == "list":
            rendered = render_list(view)
        elif (var := view.config.get(name)) is not None:
            rendered = format_value(view.value(var))
        else:
            return match.group(0)
        used.append(name)
        return rendered

    if "$[svars::" not in text:
        return text, ()
    return PLACEHOLDER_RE.sub(repl, text), tuple(used)


def render_state_section(view: SvarView) -> str:
    """The model's view of the variables and how to change them (one short block)."""
    if not view.config.variables:
        return ""
    rows = view.visible()
    member = any(v.scope == "member" for v, _ in rows)
    values = "；".join(
        f"{v.display}（{v.name}{'，每人一份' if v.scope == 'member' else ''}）={format_value(x)}"
        for v, x in rows
    )
    lines = [
        f"【{HEADER_SVARS}】",
        f"- 当前值：{values or '无'}",
        '- 剧情让某个变量变化时，在回复末尾另起一行写 <svar name="变量名" op="+" value="数值" />'
        "（op 可用 = + - * /），这一行不会发到群里；没变化就不写。",
    ]
    if member:
        lines.append("- 标注为每人一份的变量，指的是当前对话者自己的数值。")
    return "\n".join(lines)
