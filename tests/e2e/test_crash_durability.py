"""What the bot has stored survives kill -9: a burst recorded under load is on disk, not in a
queue, and the restarted bot carries on from it."""

from __future__ import annotations

from tests.e2e.conftest import BOT_ID, DbView, at_bot
from tests.harness.bot_process import BotProcess
from tests.harness.onebot_peer import OneBotPeer

GROUPS = [66_000_201, 66_000_202, 66_000_203]


async def test_a_recorded_burst_survives_kill_9(bot: BotProcess, peer: OneBotPeer) -> None:
    for i in range(300):  # as fast as the socket takes them; every 25th one @s the bot
        text = f"消息 {i}"
        await peer.send_event(
            peer.group_message(
                GROUPS[i % 3], 54_000 + i % 17, at_bot(text) if i % 25 == 0 else text
            )
        )
    view = DbView(bot.database_url)
    try:
        await view.wait_for(
            lambda: _incoming_at_least(view, 300), timeout=30, what="300 stored messages"
        )
    finally:
        await view.engine.dispose()
    assert bot.proc is not None
    bot.proc.kill()  # SIGKILL: no shutdown hook, no final flush
    bot.proc.wait()

    after = DbView(bot.database_url)
    try:
        assert sum([await after.messages.count(group_id=g) for g in GROUPS]) >= 300
    finally:
        await after.engine.dispose()

    restarted = BotProcess(bot.workdir, env_overrides=bot.env_overrides, port=bot.port)
    await restarted.start()
    again = OneBotPeer(restarted.ws_url, self_id=BOT_ID, access_token=restarted.access_token)
    await again.connect()
    view = DbView(restarted.database_url)
    try:
        await again.send_event(
            again.group_message(GROUPS[0], 54_999, "重启之后", message_id=99_999)
        )
        await view.wait_for(
            lambda: _incoming_at_least(view, 301), timeout=30, what="the message after restart"
        )
    finally:
        await again.close()
        await view.engine.dispose()
        await restarted.stop()


async def _incoming_at_least(view: DbView, count: int) -> bool:
    rows = [await view.messages.recent(BOT_ID, g, limit=1000) for g in GROUPS]
    return sum(1 for group in rows for m in group if not m.is_bot) >= count
