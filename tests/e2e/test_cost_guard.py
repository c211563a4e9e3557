"""Cost guard through the real protocol: member rate limit, daily budget, next China day."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import BOT_ID, at_bot, sent_texts, write_group_config
from tests.harness.bot_process import REPO, BotProcess
from tests.harness.fake_openai import FakeOpenAI
from tests.harness.onebot_peer import OneBotPeer

pytestmark = pytest.mark.e2e

GROUP_SPAM, GROUP_BUDGET, GROUP_TALK = 65_000_001, 65_000_002, 65_000_003
SUPERUSER, SPAMMER, TALKER, OTHER = 10001, 52_001, 52_002, 52_003
MEMBERS = (52_011, 52_012, 52_013, 52_014)
DAY = 86_400

NO_COOLDOWN = """
[routing.cooldown]
chat_cooldown_s = 0
[chat]
merge_window_s = 0
"""


def reply_requests(fake_llm: FakeOpenAI) -> list:
    """Reply-path calls only (background work has no reply-shape section)."""
    return [r for r in fake_llm.chat_requests() if "【回复形状与输出契约】" in r.system_prompt]


async def admin(peer: OneBotPeer, group: int, command: str) -> str:
    before = len(peer.calls_of("send_msg", "send_group_msg"))
    await peer.send_event(peer.group_message(group, SUPERUSER, command))
    sends = await peer.wait_for_calls("send_msg", "send_group_msg", count=before + 1)
    return sent_texts(sends)[-1]


async def test_member_spamming_ats_gets_at_most_the_burst_and_one_rest_phrase(
    bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    member_limit = "[cost.member]\nenabled = true\nturns = 6\nwindow_s = 600\nburst = 3\n"
    write_group_config(bot, GROUP_SPAM, NO_COOLDOWN + member_limit)
    for i in range(20):  # 20 @s in well under a minute
        await peer.send_event(
            peer.group_message(GROUP_SPAM, SPAMMER, at_bot(f"第{i}个问题"), message_id=7000 + i)
        )
        await asyncio.sleep(0.6)
    await asyncio.sleep(1.5)
    assert 1 <= len(reply_requests(fake_llm)) <= 3
    texts = sent_texts(peer.sends(GROUP_SPAM))
    assert sum("歇会儿" in t for t in texts) == 1, texts

    why = await admin(peer, GROUP_SPAM, "/pallas why 20")
    assert "member_rate_limited" in why and "刷屏限流" in why
    status = await admin(peer, GROUP_SPAM, "/pallas status")
    assert "限流" in status and str(SPAMMER) in status
    log = bot.log_text()
    assert "refused by the cost guard (member_rate_limited" in log


CONVERSATION = [
    "那你喜欢爬山吗", "我上次爬的是泰山", "日出特别好看", "就是人太多了", "凌晨三点就开始排队",
    "下次想去黄山", "你去过黄山吗", "听说迎客松很有名", "索道要排好久", "我打算秋天去",
    "到时候给你带照片", "你喜欢什么季节", "我最喜欢秋天", "不冷不热的", "还能吃螃蟹",
    "你吃过大闸蟹吗", "阳澄湖的最有名", "不过好贵啊", "好啦我去做饭了",
]  # fmt: skip


async def test_a_paced_conversation_is_answered_line_by_line(
    bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    # Time scaled 25:1 — a line 1 s after the previous (default 25 s apart against a gap of
    # 8 s); the bucket is today's default (burst 4, 6 turns / 600 s): unscaled, it would
    # refuse most of these lines if it were the only rule.
    pacing = "[cost.member]\nenabled = true\nconversation_gap_s = 0.8\n"
    write_group_config(bot, GROUP_TALK, NO_COOLDOWN + pacing)
    answered = 0
    for i, line in enumerate(CONVERSATION):
        await peer.send_event(
            peer.group_message(GROUP_TALK, TALKER, at_bot(line), message_id=8000 + i)
        )
        if i % 6 == 5:  # someone else asks meanwhile, and is answered too
            await peer.send_event(
                peer.group_message(GROUP_TALK, OTHER, at_bot(f"我也问一句{i}"), message_id=8100 + i)
            )
            answered += 1
        answered += 1
        await peer.wait_for_calls("send_group_msg", count=answered, timeout=15)
        await asyncio.sleep(1.0)
    assert len(reply_requests(fake_llm)) == len(CONVERSATION) + 3
    texts = sent_texts(peer.sends(GROUP_TALK))
    assert not any("歇会儿" in t for t in texts), texts
    why = await admin(peer, GROUP_TALK, "/pallas why 20")
    assert "限流" not in why, why
    assert "cost guard" not in bot.log_text()


async def test_group_at_its_daily_budget_gets_phrases_then_answers_the_next_china_day(
    bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    write_group_config(
        bot, GROUP_BUDGET, NO_COOLDOWN + "[cost.budget]\nchat_calls = 2\nstep_pct = 0\n"
    )
    fake_llm.enqueue("第一句", "第二句")
    for n, member in enumerate(MEMBERS):
        await peer.send_event(peer.group_message(GROUP_BUDGET, member, at_bot("在吗？")))
        await peer.wait_for_calls("send_group_msg", count=n + 1, timeout=15)
    assert len(reply_requests(fake_llm)) == 2
    texts = sent_texts(peer.sends(GROUP_BUDGET))
    assert texts[:2] == ["第一句", "第二句"]
    assert all("明天" in t for t in texts[2:]) and len(texts) == 4, texts

    status = await admin(peer, GROUP_BUDGET, "/pallas status")
    assert "回复 2/2 次" in status and "已达上限" in status
    env = {**os.environ, "DATABASE_URL": bot.database_url}
    usage = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "pallas.cli", "usage", "--group", str(GROUP_BUDGET)],
        cwd=REPO,
        env={**env, "PALLAS_CONFIG_DIR": str(bot.config_dir)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert usage.returncode == 0, usage.stderr
    assert f"group {GROUP_BUDGET}" in usage.stdout and "2/2" in usage.stdout
    await peer.close()
    await bot.stop()

    # a restart the same day still knows today's usage (counters seeded from the ledger)
    restarted = BotProcess(bot.workdir, env_overrides=dict(bot.env_overrides))
    await restarted.start()
    client = OneBotPeer(restarted.ws_url, self_id=BOT_ID, access_token=restarted.access_token)
    await client.connect()
    try:
        await client.send_event(client.group_message(GROUP_BUDGET, MEMBERS[1], at_bot("还在吗")))
        sends = await client.wait_for_calls("send_group_msg", timeout=15)
        assert "明天" in sent_texts(sends)[0]
        assert len(reply_requests(fake_llm)) == 2
    finally:
        await client.close()
        await restarted.stop()

    tomorrow = BotProcess(
        bot.workdir,
        env_overrides={**bot.env_overrides, "PALLAS_CLOCK_OFFSET_SECONDS": str(DAY)},
    )
    await tomorrow.start()
    client = OneBotPeer(
        tomorrow.ws_url, self_id=BOT_ID, access_token=tomorrow.access_token, clock_offset_s=DAY
    )
    await client.connect()
    try:
        fake_llm.enqueue("新的一天")
        await client.send_event(client.group_message(GROUP_BUDGET, MEMBERS[0], at_bot("早")))
        sends = await client.wait_for_calls("send_group_msg", timeout=15)
        assert sent_texts(sends) == ["新的一天"]
        assert len(reply_requests(fake_llm)) == 3
    finally:
        await client.close()
        await tomorrow.stop()
        print(f"--- next-day bot log (tail) ---\n{tomorrow.tail_log(60)}")


async def test_ladder_shortens_context_then_uses_the_cheap_model_then_phrases(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    process = BotProcess(
        tmp_path / "ladder",
        env_overrides={
            "OPENAI_BASE_URL": fake_llm.base_url,
            "PALLAS_LLM_TIMEOUT_SECONDS": "3",
            "PALLAS_LLM_MAX_RETRIES": "0",
            "PALLAS_CHAT_MODEL": "chat-model",
            "PALLAS_CHEAP_MODEL": "cheap-model",
        },
    )
    process.prepare()
    write_group_config(
        process,
        GROUP_BUDGET,
        NO_COOLDOWN
        + "[cost.budget]\nchat_calls = 2\nstep_pct = 50\n"
        + 'ladder = ["shorten_context", "cheap_model"]\n',
    )
    await process.start()
    client = OneBotPeer(process.ws_url, self_id=BOT_ID, access_token=process.access_token)
    await client.connect()
    try:
        for i in range(12):  # chatter for the timeline
            await client.send_event(
                client.group_message(GROUP_BUDGET, 52_100 + i % 3, f"闲聊{i}号")
            )
        await asyncio.sleep(0.5)
        for n, member in enumerate((*MEMBERS, 52_015)):
            await client.send_event(client.group_message(GROUP_BUDGET, member, at_bot("在吗？")))
            await client.wait_for_calls("send_group_msg", count=n + 1, timeout=15)
        requests = reply_requests(fake_llm)
        assert [r.body["model"] for r in requests] == [
            "chat-model",  # 0 %
            "chat-model",  # 50 %
            "chat-model",  # 100 %: shorter context
            "cheap-model",  # 150 %: the cheap model, @s only
        ]
        widths = [timeline_lines(r.system_prompt) for r in requests]
        assert widths[2] < widths[1] and widths[3] < widths[1], widths
        assert "明天" in sent_texts(client.sends(GROUP_BUDGET))[-1]  # 200 %: a phrase
        why = await admin(client, GROUP_BUDGET, "/pallas why 10")
        assert "group_budget:shorten_context+cheap_model" in why
        assert "group_budget:phrase" in why
    finally:
        await client.close()
        await process.stop()
        print(f"--- ladder bot log (tail) ---\n{process.tail_log(60)}")


def timeline_lines(system_prompt: str) -> int:
    block = system_prompt.split("【刚才的群聊】")[1].split("【")[0]
    return sum(1 for line in block.splitlines() if "：" in line)


async def test_deployment_cap_trips_with_a_phrase_a_log_line_and_a_superuser_notice(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    process = BotProcess(
        tmp_path / "cap",
        env_overrides={
            "OPENAI_BASE_URL": fake_llm.base_url,
            "PALLAS_LLM_TIMEOUT_SECONDS": "3",
            "PALLAS_LLM_MAX_RETRIES": "0",
            "PALLAS_DAILY_CALL_CAP": "1",
        },
    )
    process.prepare()
    for group in (GROUP_BUDGET, GROUP_SPAM):  # the cap's ladder is each group's own
        write_group_config(process, group, NO_COOLDOWN + "[cost.budget]\nstep_pct = 0\n")
    await process.start()
    client = OneBotPeer(process.ws_url, self_id=BOT_ID, access_token=process.access_token)
    client.handlers["send_private_msg"] = lambda params: {"message_id": 1}
    await client.connect()
    try:
        fake_llm.enqueue("好的")
        await client.send_event(client.group_message(GROUP_BUDGET, MEMBERS[0], at_bot("在吗")))
        await client.wait_for_calls("send_group_msg", timeout=15)
        await client.send_event(client.group_message(GROUP_SPAM, MEMBERS[1], at_bot("在吗")))
        sends = await client.wait_for_calls("send_group_msg", count=2, timeout=15)
        assert "明天" in sent_texts(sends)[-1]  # another group: the cap is deployment-wide
        assert len(reply_requests(fake_llm)) == 1
        [notice] = await client.wait_for_calls("send_private_msg")
        assert int(notice.params["user_id"]) == SUPERUSER
        assert "部署上限" in str(notice.params["message"])
        status = await admin(client, GROUP_SPAM, "/pallas status")
        assert "部署上限" in status and "全部群今日回复 1/1 次" in status
        assert "deployment-wide daily cap reached" in process.log_text()
        why = await admin(client, GROUP_SPAM, "/pallas why 3")
        assert "deployment_budget:phrase" in why
    finally:
        await client.close()
        await process.stop()
        print(f"--- cap bot log (tail) ---\n{process.tail_log(60)}")
