"""One bot process or two on the same burst: ingest throughput, @ latency, model calls.

Both set-ups run on one throwaway PostgreSQL and one Redis (tests/harness/postgres.py,
tests/harness/redis_server.py) with two QQ accounts in the same groups, every group line
delivered to both accounts (each with its own message id, as QQ does):

- `one process`: both accounts' OneBot peers connect to one `bot.py`;
- `two processes`: each account has its own `bot.py` (the `--profile cluster` layout).

The burst: `--lines` group lines (default 300) from 20 members over 3 groups, sent as fast as
the peers can, one line in ten an @ of one of the two accounts (alternating) with a unique
question. Printed per set-up: messages/s ingested (first line sent → every line stored once in
PostgreSQL), @ → model request p50 / p95 / p99 (the reply's delivery after it is paced like a
human, so it is not part of the number; an @ queued behind its group's earlier @s waits for
their paced delivery, which is most of the tail), reply model calls and the @s whose question
reached the model exactly once; then the two-process / one-process ratios.

    python -m benchmarks.processes [--lines 300] [--rounds 1]

Needs the PostgreSQL server binaries and redis-server (as the tests do). On a 2-core machine
two processes compete for the same cores as the database, Redis and the load generator: read
the ratio as "what a second process costs here", not as scaling on a bigger host.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.stats import percentile
from tests.harness import postgres as pg
from tests.harness import redis_server
from tests.harness.bot_process import BotProcess
from tests.harness.fake_openai import FakeOpenAI, RecordedRequest
from tests.harness.onebot_peer import OneBotPeer

ACCOUNT_A, ACCOUNT_B = 2_900_000_001, 2_900_000_008
B_IDS = 5_000_000  # account B's message ids: A's id + this
GROUPS = (69_000_001, 69_000_002, 69_000_003)
MEMBERS = tuple(range(57_001, 57_021))
CHATTER = ("今天好热啊", "有人打游戏吗", "哈哈哈哈", "午饭吃什么", "刚下班", "+1", "确实")
REPLY_SHAPE = "【回复形状与输出契约】"
CURRENT_HEADER = "【用户消息"
GROUP_TOML = f"""
other_bot_ids = [{ACCOUNT_A}, {ACCOUNT_B}]
[routing.cooldown]
chat_cooldown_s = 0
[chat]
merge_window_s = 0
"""


@dataclass
class Result:
    name: str
    lines: int
    ingest_s: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)
    calls: int = 0
    answered_once: int = 0
    questions: int = 0

    @property
    def rate(self) -> float:
        return self.lines / self.ingest_s if self.ingest_s else 0.0


def burst(lines: int) -> list[tuple[int, int, list[dict[str, Any]], str | None]]:
    """(group, member, segments, question or None) per line; one in ten an @."""
    out: list[tuple[int, int, list[dict[str, Any]], str | None]] = []
    for i in range(lines):
        group, member = GROUPS[i % len(GROUPS)], MEMBERS[(i * 7) % len(MEMBERS)]
        if i % 10 == 5:  # each @ from the next member: one member's quick @s would fold
            member = MEMBERS[(i // 10) % len(MEMBERS)]  # into their in-flight turn
            account = (ACCOUNT_A, ACCOUNT_B)[(i // 10) % 2]
            question = f"第{i}号问题：周末几点集合？"
            segments = [
                {"type": "at", "data": {"qq": str(account)}},
                {"type": "text", "data": {"text": " " + question}},
            ]
            out.append((group, member, segments, question))
        else:
            text = f"{CHATTER[i % len(CHATTER)]}（{i}）"
            out.append((group, member, [{"type": "text", "data": {"text": text}}], None))
    return out


def _process(
    workdir: Path, llm: FakeOpenAI, database_url: str, state_url: str, prefix: str
) -> BotProcess:
    process = BotProcess(
        workdir,
        env_overrides={
            "OPENAI_BASE_URL": llm.base_url,
            "DATABASE_URL": database_url,
            "PALLAS_STATE_URL": state_url,
            "PALLAS_STATE_PREFIX": prefix,  # each run its own deployment in the one Redis
        },
    )
    process.prepare()
    for group in GROUPS:
        path = process.config_dir / "groups" / f"{group}.toml"
        path.write_text(GROUP_TOML, encoding="utf-8")
    return process


async def run(
    name: str, processes: int, lines: int, database: pg.PostgresServer, state_url: str
) -> Result:
    db_name = f"bench_{processes}_{int(time.time() * 1000) % 1_000_000}"
    url = database.create_database(db_name)
    llm = FakeOpenAI(default_reply="好呀")
    await llm.start()
    workdir = Path(tempfile.mkdtemp(prefix="pallas-bench-processes-"))
    bots = [_process(workdir / f"bot{n}", llm, url, state_url, db_name) for n in range(processes)]
    peers: list[OneBotPeer] = []
    try:
        await asyncio.gather(*(b.start(timeout=120) for b in bots))
        for account, bot in zip((ACCOUNT_A, ACCOUNT_B), (bots[0], bots[-1]), strict=True):
            peer = OneBotPeer(bot.ws_url, self_id=account, access_token=bot.access_token)
            await peer.connect()
            peers.append(peer)
        await asyncio.sleep(1.0)
        return await _play(name, lines, peers, llm, database, db_name)
    finally:
        for peer in peers:
            await peer.close()
        for bot in bots:
            await bot.stop()
        await llm.stop()
        database.drop_database(db_name)
        shutil.rmtree(workdir, ignore_errors=True)


async def _play(
    name: str,
    lines: int,
    peers: list[OneBotPeer],
    llm: FakeOpenAI,
    database: pg.PostgresServer,
    db_name: str,
) -> Result:
    result = Result(name, lines)
    sent_at: dict[str, float] = {}
    start = time.monotonic()
    for i, (group, member, segments, question) in enumerate(burst(lines)):
        now = peers[0].now()
        events = [
            peer.group_message(group, member, segments, message_id=10_000 + i + shift, time_=now)
            for peer, shift in zip(peers, (0, B_IDS), strict=True)
        ]
        await asyncio.gather(*(p.send_event(e) for p, e in zip(peers, events, strict=True)))
        if question is not None:
            sent_at[question] = time.monotonic()
    stored_sql = "SELECT count(*) FROM message WHERE NOT is_bot"
    deadline = time.monotonic() + 120
    while int(database.sql(stored_sql, database=db_name).strip()) < lines:
        if time.monotonic() > deadline:
            break
        await asyncio.sleep(0.05)
    result.ingest_s = time.monotonic() - start
    replies = await _settled(llm)
    result.calls = len(replies)
    for question, at in sent_at.items():
        carrying = [r for r in replies if question in _current(r)]
        result.questions += 1
        result.answered_once += len(carrying) == 1
        if carrying:
            result.latencies_ms.append((carrying[0].at - at) * 1000)
    return result


def _replies(llm: FakeOpenAI) -> list[RecordedRequest]:
    return [r for r in llm.chat_requests() if REPLY_SHAPE in r.system_prompt]


async def _settled(llm: FakeOpenAI, quiet_s: float = 6.0, limit_s: float = 90.0) -> list[Any]:
    """The reply requests once none came for `quiet_s` (the queued @s are delivered at a
    human pace, each holding its group's slot)."""
    deadline, seen, since = time.monotonic() + limit_s, -1, time.monotonic()
    while time.monotonic() < deadline:
        count = len(_replies(llm))
        if count != seen:
            seen, since = count, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            break
        await asyncio.sleep(0.2)
    return _replies(llm)


def _current(request: RecordedRequest) -> str:
    """The turn's own message: the last user message after its 【用户消息…】 header (the
    timeline before it may quote other members' questions)."""
    last = request.messages[-1] if request.messages else {}
    content = str(last.get("content", "")) if last.get("role") == "user" else ""
    return content.rsplit(CURRENT_HEADER, 1)[-1] if CURRENT_HEADER in content else ""


def row(r: Result) -> str:
    lat = r.latencies_ms
    return (
        f"{r.name:<14} {r.rate:>9.1f} {percentile(lat, 50):>9.0f} {percentile(lat, 95):>9.0f} "
        f"{percentile(lat, 99):>9.0f} {r.calls:>6} {r.answered_once:>4}/{r.questions:<4}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args(argv or [])
    for reason in (pg.unavailable_reason(), redis_server.unavailable_reason()):
        if reason:
            print(f"skipped: {reason}")
            return
    results: list[Result] = []
    with pg.running_postgres() as database, redis_server.running_redis() as state:
        for _ in range(args.rounds):
            for name, count in (("one process", 1), ("two processes", 2)):
                results.append(asyncio.run(run(name, count, args.lines, database, state.url)))
    print(f"{args.lines} group lines (each to both accounts), {args.lines // 10} @s, 3 groups")
    print(f"{'set-up':<14} {'msgs/s':>9} {'@ p50 ms':>9} {'@ p95 ms':>9} {'@ p99 ms':>9} "
          f"{'calls':>6} {'once':>9}")  # fmt: skip
    for r in results:
        print(row(r))
    ones = [r for r in results if r.name == "one process"]
    twos = [r for r in results if r.name == "two processes"]
    for one, two in zip(ones, twos, strict=True):
        p50 = percentile(two.latencies_ms, 50) / max(percentile(one.latencies_ms, 50), 1e-9)
        p95 = percentile(two.latencies_ms, 95) / max(percentile(one.latencies_ms, 95), 1e-9)
        print(
            f"two / one: ingest {two.rate / max(one.rate, 1e-9):.2f}x, "
            f"@ p50 {p50:.2f}x, @ p95 {p95:.2f}x, calls {two.calls}/{one.calls}"
        )


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
