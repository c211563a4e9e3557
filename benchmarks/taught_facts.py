"""How many of a member's taught facts reach the request, at 5, 11, 20 and 100 facts each.

A member teaches N facts through the real member-command path (`@牛牛 记住 …`, one a day;
past the 50-teaching cap the rest are stored as the background extraction stores them),
then asks three things: about the OLDEST fact in words it does not share ("帮我挑个彩票号码吧"
for "我的幸运数字是7"), something unrelated, and about the newest. For each question the real
memory sources and request assembly run in-process; printed: how many of the member's facts
the request carries, whether the oldest is among them, and the request's tokens. The same run
with the old limits (`personal_fallback_k = 2`, person_facts top_k 5 / 300 chars) and with a
line per fact (`[memory.profile] enabled = false`: top_k 16 / 360 chars) are printed beside it,
and the profile once the cheap model consolidated the member's facts (a scripted model that
merges facts of one shape into one statement: `_consolidation_script`), with the tokens the
consolidation call itself cost.

    python -m benchmarks.taught_facts
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from benchmarks._consolidation_script import ScriptedConsolidator
from pallas.app_wiring import memory_service_for, memory_sources_for
from pallas.context.context import GatherRequest, assemble_direct_chat_context
from pallas.context.processor_inputs import ChatTurnContext
from pallas.core.clock import FakeClock
from pallas.core.settings import PallasSettings
from pallas.core.state import MemoryStateStore
from pallas.core.tokens import count_message_tokens
from pallas.core.turn import Sender, TurnInput
from pallas.features.memory.isolation import group_scope
from pallas.features.memory.kinds import PERSON_FACTS
from pallas.features.memory.service import MemoryService
from pallas.features.memory_commands.member_commands import (
    MAX_TAUGHT_PER_USER,
    handle_member_message,
)
from pallas.ranking.text import warm_up
from pallas.runtime import PallasRuntime
from pallas.turn.parts.chat_pipeline import assemble_chat_request

BOT, GROUP = 2_900_000_001, 779_000_001
USER0 = 40_001
REPO = Path(__file__).resolve().parents[1]
T0 = 1_765_000_000.0
DAY = 86_400.0
COUNTS = (5, 11, 20, 100)
OLDEST = "我的幸运数字是7"
QUESTIONS = {
    "about the oldest, no shared word": "帮我挑个彩票号码吧",
    "unrelated": "今天天气怎么样",
    "about the newest": "我最近去过哪里来着",
}
BEFORE_TOML = (
    "[memory]\npersonal_fallback_k = 2\n"
    "[memory.profile]\nenabled = false\n"
    "[memory.person_facts]\ntop_k = 5\nmax_chars = 300\n"
    "[memory.relationship]\ntop_k = 3\n"
)
LIST_TOML = "[memory.profile]\nenabled = false\n"  # a line per fact, person_facts 16 / 360
PROFILE_TOML = "[memory.profile]\nconsolidate = false\n"  # the rule-built profile
CONSOLIDATED_TOML = "[memory.profile]\nconsolidate_delay_s = 0.5\n"
_THINGS = (
    "火锅", "寿司", "拉面", "螺蛳粉", "榴莲", "芒果", "奶茶", "咖啡", "乌龙茶", "可乐", "羽毛球",
    "游泳", "篮球", "跑步", "围棋", "象棋", "吉他", "钢琴", "尤克里里", "摄影", "登山", "钓鱼",
    "露营", "滑雪", "拼图", "乐高", "手办", "黑胶", "漫画", "科幻小说", "推理小说", "纪录片",
    "恐怖片", "爵士乐", "摇滚", "民谣", "说唱", "古典乐", "油画", "书法", "剪纸", "陶艺", "烘焙",
    "编织", "园艺", "多肉", "金鱼", "仓鼠",
)  # fmt: skip
_PLACES = (
    "成都", "大理", "厦门", "青岛", "西安", "桂林", "拉萨", "哈尔滨", "三亚", "苏州", "杭州",
    "重庆", "长沙", "洛阳", "敦煌",
)  # fmt: skip


def facts(n: int) -> list[str]:
    """N distinct first-person facts, the oldest first; none replaces another."""
    pool = [f"我喜欢{t}" for t in _THINGS] + [f"我去过{p}" for p in _PLACES]
    pool += [f"我收藏了{i}张{t}的照片" for i, t in enumerate(_THINGS, 2)]
    return [OLDEST, *pool[: n - 2], f"我去过{_PLACES[-1]}附近的鸣沙山"][:n]


CONSOLIDATION_TOKENS: dict[int, int] = {}  # facts per member → tokens of the last call


async def measure(toml: str) -> dict[int, dict[str, tuple[int, bool, int]]]:
    workdir = Path(tempfile.mkdtemp(prefix="pallas-taught-"))
    shutil.copytree(REPO / "config", workdir / "config")
    if toml:
        (workdir / "config" / "groups" / f"{GROUP}.toml").write_text(toml, encoding="utf-8")
    clock = FakeClock(T0)
    server = ScriptedConsolidator() if toml == CONSOLIDATED_TOML else None
    if server is not None:
        await server.start()
    llm = {"openai_api_key": "sk-bench", "openai_base_url": server.base_url} if server else {}
    settings = PallasSettings(
        database_url=f"sqlite+aiosqlite:///{workdir / 't.db'}",
        pallas_config_dir=workdir / "config",
        **llm,
    )
    rt = await PallasRuntime.start(settings, clock=clock, state=MemoryStateStore(clock))
    warm_up()
    try:
        return {n: await one_member(rt, clock, USER0 + n, facts(n)) for n in COUNTS}
    finally:
        await rt.stop()
        if server is not None:
            await server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


async def _settled(rt: PallasRuntime, service: MemoryService, user: int, n: int) -> None:
    """Wait for the background consolidation of the member's facts (when one runs)."""
    await service.drain()
    stored = await service.profiles.get(group_scope(BOT, GROUP), user) if service.profiles else None
    if stored is not None:
        CONSOLIDATION_TOKENS[n] = stored.tokens


async def one_member(
    rt: PallasRuntime, clock: FakeClock, user: int, taught: list[str]
) -> dict[str, tuple[int, bool, int]]:
    service = memory_service_for(rt)
    sender = Sender(user, card=f"成员{user}")
    start = clock.now()
    for i, text in enumerate(taught):
        clock.set(start + i * DAY)
        turn = TurnInput(BOT, GROUP, user, user * 1000 + i, clock.now(), f"牛牛 记住 {text}",
                         sender=sender, to_me=True)  # fmt: skip
        if i < MAX_TAUGHT_PER_USER:
            reply = await handle_member_message(service, turn, aliases=("牛牛",))
            assert reply == "记住啦～", (text, reply)
        else:  # past the teaching cap, facts come from the background extraction
            await service.remember(
                bot_id=BOT, scope=group_scope(BOT, GROUP), kind=PERSON_FACTS,
                text="TA" + text[1:], origin="extract", subject_user_id=user,
            )  # fmt: skip
    await _settled(rt, service, user, len(taught))
    mine = {
        i.ref: i.text
        for i in await service.repo.list_items(
            scopes=[group_scope(BOT, GROUP)], subject_user_id=user, limit=1000
        )
    }
    oldest_ref = next(ref for ref, text in mine.items() if text == "TA的幸运数字是7")
    clock.set(start + len(taught) * DAY + 3600)
    out: dict[str, tuple[int, bool, int]] = {}
    for label, question in QUESTIONS.items():
        turn = TurnInput(BOT, GROUP, user, user * 1000 + 999, clock.now(), question,
                         sender=sender, to_me=True)  # fmt: skip
        config = rt.group_configs.get(GROUP)
        bundle = await assemble_direct_chat_context(
            memory_sources_for(rt, memory_service_for(rt)),
            GatherRequest(turn, question, clock.now(), config, "帕拉斯", True, False, True),
        )
        ctx = ChatTurnContext(
            bot_id=BOT, group_id=GROUP, user_id=user, now=datetime.fromtimestamp(clock.now(), UTC),
            current_text=question, config=config.context, message_id=turn.message_id,
            timeline_messages=(), blocks=bundle.blocks, token_budget=31_200,
        )  # fmt: skip
        request = await assemble_chat_request(ctx)
        ids = {i for b in bundle.blocks.values() for i in b.memory_ids}
        out[label] = (len(ids & mine.keys()), oldest_ref in ids, count_message_tokens(
            request.messages))  # fmt: skip
    clock.set(start)
    return out


def main() -> None:
    tomls = (BEFORE_TOML, LIST_TOML, PROFILE_TOML, CONSOLIDATED_TOML)
    runs = [asyncio.run(measure(toml)) for toml in tomls]
    print("facts of the member in the request (oldest there?) [request tokens]:")
    print("  old limits (top 5 / 300 chars) → a line per fact (16 / 360) → profile (600 chars)")
    print("  → profile consolidated by the cheap model (scripted)")
    for label in QUESTIONS:
        print(f"\n  {label} — “{QUESTIONS[label]}”")
        for n in COUNTS:
            cells = [
                f"{r[n][label][0]:>2} ({'yes' if r[n][label][1] else 'no '}) [{r[n][label][2]:>4}]"
                for r in runs
            ]
            print(f"    {n:>3} facts: " + "  →  ".join(cells))
    print("\n  the consolidation call (prompt + answer tokens, once per change of the facts):")
    for n in COUNTS:
        print(f"    {n:>3} facts: {CONSOLIDATION_TOKENS.get(n, 0):>5} tokens")


if __name__ == "__main__":
    main()
