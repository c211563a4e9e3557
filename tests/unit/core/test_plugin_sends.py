"""Another NoneBot plugin's sends from the account are the plugin's, not the persona's words."""

from __future__ import annotations

from pallas.context.group_timeline import build_recent_group_timeline
from pallas.core.records import StoredMessage
from pallas.onebot.convert import stored_message_from_sent

BOT, GROUP, ALICE, T0 = 2_900_000_001, 738_291_046, 41_001, 1_700_000_000.0


def _member(message_id: int, text: str) -> StoredMessage:
    return StoredMessage(BOT, GROUP, message_id, ALICE, T0 + message_id, text, nickname="阿米娅")


def _sent(message_id: int, text: str, sent_by: str = "") -> StoredMessage:
    return stored_message_from_sent(
        bot_id=BOT,
        group_id=GROUP,
        message_id=message_id,
        segments=[{"type": "text", "data": {"text": text}}],
        time=T0 + message_id,
        nickname="牛牛",
        sent_by=sent_by,
    )


def test_a_plugins_send_is_recorded_with_its_name_and_is_not_a_persona_line() -> None:
    plugin_line = _sent(2, "你掷出了 4", "nonebot_plugin_roll")
    assert plugin_line.is_bot and plugin_line.sent_by == "nonebot_plugin_roll"
    assert not plugin_line.persona_line
    assert _sent(3, "好哦").persona_line


def test_the_timeline_names_the_plugin_not_the_persona() -> None:
    rows = [_member(1, "/roll d6"), _sent(2, "你掷出了 4", "nonebot_plugin_roll"), _sent(3, "好哦")]
    text = build_recent_group_timeline(rows, bot_id=BOT, bot_label="牛牛").text
    assert "插件 nonebot_plugin_roll：你掷出了 4" in text
    assert "牛牛：你掷出了 4" not in text
    assert "牛牛：好哦" in text
