"""The bot as NapCat meets it: connection, recording, resilience."""

from __future__ import annotations

import asyncio
import json

import pytest
from websockets.exceptions import InvalidStatus

from tests.e2e.conftest import BOT_ID, DbView
from tests.harness.bot_process import BotProcess
from tests.harness.onebot_peer import OneBotPeer

pytestmark = pytest.mark.e2e
SHARED_BOT = True  # one bot for the module; each test talks in its own `group`

SUPERUSER = 10001


async def test_wrong_or_missing_token_is_refused(group: int, bot: BotProcess) -> None:
    for token in ("wrong-token", None):
        peer = OneBotPeer(bot.ws_url, self_id=BOT_ID, access_token=token)
        with pytest.raises(InvalidStatus) as info:
            await peer.connect()
        assert info.value.response.status_code == 403


async def test_group_message_is_recorded_with_all_fields(
    group: int, peer: OneBotPeer, db: DbView
) -> None:
    quoted = peer.group_message(group, 20002, "原消息", message_id=-1_234_567_890_123)
    await peer.send_event(quoted)
    event = peer.group_message(
        group,
        20001,
        [
            {"type": "reply", "data": {"id": str(-1_234_567_890_123)}},
            {"type": "at", "data": {"qq": "20002"}},
            {"type": "text", "data": {"text": " 你看这个"}},
            {"type": "image", "data": {"file": "a.jpg", "url": "https://example.com/a.jpg"}},
        ],
        message_id=5_000_000_000,
        card="阿米娅",
        nickname="amiya",
        role="admin",
    )
    await peer.send_event(event)
    await db.wait_for_count(2, group_id=group)

    rows = await db.messages.find_by_message_ids(BOT_ID, group, [5_000_000_000, -1_234_567_890_123])
    row = rows[5_000_000_000]
    assert (row.user_id, row.card, row.nickname, row.role) == (20001, "阿米娅", "amiya", "admin")
    assert row.reply_to == -1_234_567_890_123
    assert row.text == "@20002 你看这个[图片]"
    assert [s["type"] for s in row.segments] == ["reply", "at", "text", "image"]
    assert row.raw_message.startswith("[CQ:reply,id=-1234567890123]")
    assert row.is_bot is False and row.bot_id == BOT_ID
    assert rows[-1_234_567_890_123].text == "原消息"


async def test_bot_sends_are_recorded_with_peer_message_id(
    group: int, peer: OneBotPeer, db: DbView
) -> None:
    await peer.send_event(peer.group_message(group, SUPERUSER, "/pallas status"))
    calls = await peer.wait_for_calls("send_msg", "send_group_msg")
    assert "本群已记录消息" in json.dumps(calls[0].params, ensure_ascii=False)

    sent_ids = [mid for mid, m in peer.messages.items() if m["sender"]["user_id"] == BOT_ID]
    assert sent_ids and (sent_ids[0] < 0 or sent_ids[0] > 2**31)

    async def bot_row_stored() -> bool:
        rows = await db.messages.find_by_message_ids(BOT_ID, group, sent_ids)
        return bool(rows) and all(r.is_bot and r.user_id == BOT_ID for r in rows.values())

    await db.wait_for(bot_row_stored, what="the bot's own message row")


async def test_non_admin_cannot_run_admin_commands(group: int, peer: OneBotPeer) -> None:
    await peer.send_event(peer.group_message(group, 30003, "/pallas status", role="member"))
    calls = await peer.wait_for_calls("send_msg", "send_group_msg")
    text = json.dumps(calls[0].params, ensure_ascii=False)
    assert "只有群主" in text and "已记录" not in text


async def test_dropped_connection_reconnects_and_keeps_recording(
    group: int, bot: BotProcess, peer: OneBotPeer, db: DbView
) -> None:
    await peer.send_event(peer.group_message(group, 20001, "before drop", message_id=1))
    await db.wait_for_count(1, group_id=group)
    await peer.close()
    await asyncio.sleep(0.3)  # the adapter notices the drop and frees the bot id

    again = OneBotPeer(bot.ws_url, self_id=BOT_ID, access_token=bot.access_token)
    await again.connect()
    try:
        await again.send_event(again.group_message(group, 20001, "after reconnect", message_id=2))
        await db.wait_for_count(2, group_id=group)
    finally:
        await again.close()


async def test_burst_of_1000_events_loses_none(group: int, peer: OneBotPeer, db: DbView) -> None:
    ids = list(range(1, 1001))
    for i in ids:
        await peer.send_event(peer.group_message(group, 20000 + i % 7, f"消息 {i}", message_id=i))

    async def all_stored() -> bool:
        return len(await db.messages.find_by_message_ids(BOT_ID, group, ids)) == len(ids)

    await db.wait_for(all_stored, timeout=60, what="1000 recorded messages")
    stored = await db.messages.find_by_message_ids(BOT_ID, group, ids)
    assert {m.text for m in stored.values()} == {f"消息 {i}" for i in ids}


async def test_malformed_input_is_survived_and_logged(
    group: int, bot: BotProcess, peer: OneBotPeer, db: DbView
) -> None:
    broken_segments = peer.group_message(
        group, 20001, [{"type": "text", "data": {"text": "半截"}}, "not-a-segment", {"data": {}}]
    )
    broken_text = "前面[CQ:image,file=abc 后面 [CQ:at,qq=123"
    broken_cq = peer.group_message(group, 20001, "x", raw_message=broken_text)
    broken_cq["message"] = broken_text  # string-format message with an unterminated CQ code
    huge = peer.group_message(group, 20001, "长" * 100_000)
    empty = peer.group_message(group, 20001, [])
    odd_unicode = peer.group_message(group, 20001, "\u200b\u202e零宽\x00控制\ud83d")
    for event in (broken_segments, broken_cq, huge, empty):
        await peer.send_event(event)
    await peer.send_event({"post_type": "message", "message_type": "group"})  # no ids at all
    await peer.send_event({"post_type": "notice", "notice_type": "made_up"})
    await peer.send_raw(json.dumps(odd_unicode).replace("\\ud83d", ""))
    await peer.send_event(peer.group_message(group, 20001, "still alive", message_id=77))

    async def alive_recorded() -> bool:
        return bool(await db.messages.find_by_message_ids(BOT_ID, group, [77]))

    await db.wait_for(alive_recorded, what="a normal message after malformed ones")
    stored = await db.messages.find_by_message_ids(
        BOT_ID, group, [huge["message_id"], broken_cq["message_id"], empty["message_id"]]
    )
    assert len(stored[huge["message_id"]].text) == 100_000
    assert stored[broken_cq["message_id"]].raw_message == broken_text
    assert "后面" in stored[broken_cq["message_id"]].text
    assert empty["message_id"] in stored
    assert bot.proc is not None and bot.proc.poll() is None


async def test_without_api_key_bot_records_and_routes_but_never_calls_llm(
    group: int, tmp_path, fake_llm
) -> None:
    from tests.e2e.conftest import at_bot

    process = BotProcess(
        tmp_path / "nokey",
        env_overrides={"OPENAI_API_KEY": "", "OPENAI_BASE_URL": fake_llm.base_url},
    )
    await process.start()
    try:
        peer = OneBotPeer(process.ws_url, self_id=BOT_ID, access_token=process.access_token)
        await peer.connect()
        for n in range(2):
            await peer.send_event(
                peer.group_message(group, 20001, at_bot(f"在吗{n}"), message_id=n + 1)
            )
        view = DbView(process.database_url)
        await view.wait_for_count(2, group_id=group)
        await asyncio.sleep(2.0)
        await view.engine.dispose()
        await peer.close()
        assert fake_llm.requests == [] and peer.sends(group) == []
        log = process.log_text()
        assert log.count("OPENAI_API_KEY is not set") == 1
        assert '"outcome": "reply"' in log  # routed as usual
    finally:
        await process.stop()
