"""`$[svars::…]` rendering and the 【会话变量】 section."""

from __future__ import annotations

from pallas.features.svars.config import SvarConfig, SvarDef
from pallas.features.svars.render import SvarView, render_placeholders, render_state_section

CONFIG = SvarConfig(
    variables=[
        SvarDef(name="hp", label="生命值", default=100, min=0, max=100),
        SvarDef(name="mood", label="心情", default=0, scope="member"),
        SvarDef(name="secret", default=7, visible=False),
    ]
)
VIEW = SvarView(CONFIG, {(0, "hp"): 40, (42, "mood"): 3, (7, "mood"): -9}, speaker_id=42)


def test_table_list_and_single_values() -> None:
    template = "状态：\n$[svars::table]\n$[svars::list]\nHP=$[svars::hp]"
    text, used = render_placeholders(template, VIEW)
    assert "| 生命值 | 40 |" in text and "| 心情 | 3 |" in text
    assert "- 生命值：40" in text and "HP=40" in text
    assert "secret" not in text and "-9" not in text  # hidden, and another member's value
    assert used == ("table", "list", "hp")


def test_unknown_names_stay_as_written_and_hidden_ones_render_by_name() -> None:
    text, used = render_placeholders("$[svars::mana] $[svars::secret]", VIEW)
    assert text == "$[svars::mana] 7"
    assert used == ("secret",)


def test_state_section_names_values_and_syntax() -> None:
    section = render_state_section(VIEW)
    assert section.startswith("【会话变量】")
    assert "生命值（hp）=40" in section and "心情（mood，每人一份）=3" in section
    assert '<svar name="变量名"' in section
