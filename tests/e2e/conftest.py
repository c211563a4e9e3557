"""End-to-end fixtures: the real bot process, a OneBot peer, and the fake OpenAI server."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from pallas.core.db.engine import create_engine, session_factory
from pallas.core.db.repositories.chat_sessions import ChatSessionRepository
from pallas.core.db.repositories.messages import MessageRepository
from tests.harness.bot_process import BotProcess
from tests.harness.fake_openai import FakeOpenAI
from tests.harness.onebot_peer import OneBotPeer

BOT_ID = 2_900_000_001
MODULE_START_S = 120.0  # the start timeout of a bot a module's tests share (`SHARED_BOT`)
_GROUP_IDS = itertools.count(880_000_001)  # `group_ids`: unused by any test
# `member_ids`: unused by any test, 1,000 apart (a test may use id + 1 … id + 999 too)
_MEMBER_IDS = itertools.count(77_000_001, 1_000)


def shares_bot(request: pytest.FixtureRequest) -> bool:
    """A module with `SHARED_BOT = True` runs its tests on one bot and one fake model server
    (a bot start costs ~5 s of CPU, and `make test` starts ~140). Its tests must not depend
    on each other: each uses its own groups and members (see `group_ids`), so no per-group
    state (config file, cooldowns, sessions, extraction counters, budgets) carries over; the
    fake model is `reset` before each test. A test that restarts the bot, sets its env or
    reads its whole log takes `tmp_path` and `running_bot` instead; a test marked `own_bot`
    gets a bot of its own (e.g. one whose process caches what the test changes behind it)."""
    if request.node.get_closest_marker("own_bot") is not None:
        return False
    return bool(getattr(request.module, "SHARED_BOT", False))


@pytest.fixture
async def own_llm() -> AsyncIterator[FakeOpenAI]:
    server = FakeOpenAI()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture(scope="module")
async def module_llm() -> AsyncIterator[FakeOpenAI]:
    server = FakeOpenAI()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
def fake_llm(request: pytest.FixtureRequest) -> FakeOpenAI:
    """The test's fake model server: its own, or its module's (`SHARED_BOT`) as new."""
    if shares_bot(request):
        server: FakeOpenAI = request.getfixturevalue("module_llm")
        server.reset()
        return server
    own: FakeOpenAI = request.getfixturevalue("own_llm")
    return own


@contextlib.asynccontextmanager
async def running_bot(
    workdir: Path,
    fake_llm: FakeOpenAI,
    *,
    prepare: Callable[[BotProcess], None] | None = None,
    start_timeout: float = 60.0,
    **env: str,
) -> AsyncIterator[BotProcess]:
    """The bot process on the fake model (3 s timeout, no retries) plus `env`; `prepare` runs
    on its prepared work dir before the start (config files). Its log tail is printed after."""
    process = BotProcess(
        workdir,
        env_overrides={
            "OPENAI_BASE_URL": fake_llm.base_url,
            "PALLAS_LLM_TIMEOUT_SECONDS": "3",
            "PALLAS_LLM_MAX_RETRIES": "0",
            **env,
        },
    )
    if prepare is not None:
        process.prepare()
        prepare(process)
    await process.start(start_timeout)
    try:
        yield process
    finally:
        await process.stop()
        print(f"--- bot log (tail) ---\n{process.tail_log(80)}")  # shown by pytest on failure


@pytest.fixture
async def own_bot(tmp_path: Path, fake_llm: FakeOpenAI) -> AsyncIterator[BotProcess]:
    async with running_bot(tmp_path / "bot", fake_llm) as process:
        yield process


@pytest.fixture(scope="module")
async def module_bot(
    tmp_path_factory: pytest.TempPathFactory, module_llm: FakeOpenAI
) -> AsyncIterator[BotProcess]:
    # a module's tests all wait on this start: a slow one (a loaded machine) is not a failure
    async with running_bot(
        tmp_path_factory.mktemp("bot"), module_llm, start_timeout=MODULE_START_S
    ) as process:
        yield process


@pytest.fixture
def bot(request: pytest.FixtureRequest, fake_llm: FakeOpenAI) -> Iterator[BotProcess]:
    """The bot process: the test's own, or its module's (`SHARED_BOT`; the log lines written
    during the test are printed after it, shown by pytest on failure)."""
    if not shares_bot(request):
        yield request.getfixturevalue("own_bot")
        return
    yield from this_test(request.getfixturevalue("module_bot"))


def this_test(process: BotProcess) -> Iterator[BotProcess]:
    """A module's shared bot for one test: its `log_text` / `tail_log` read only the lines
    written since the test began, and those are printed after it (shown on failure)."""
    if process.proc is None or process.proc.poll() is not None:
        pytest.fail(f"the module's bot is not running:\n{process.tail_log()}")
    process.log_offset = len(process.whole_log())
    yield process
    print(f"--- bot log (this test) ---\n{process.log_text()}")


@pytest.fixture
def group() -> int:
    """A group id no other test of the process uses: a test on a shared bot (`SHARED_BOT`)
    talks in its own groups (`group_ids` for more than one)."""
    return next(_GROUP_IDS)


@pytest.fixture
def group_ids() -> Iterator[int]:
    return _GROUP_IDS


@pytest.fixture
def member_ids() -> Iterator[int]:
    """Member (QQ) ids no other test of the process uses: on a shared bot, a test whose
    assertions read a member's facts across groups takes its members from here."""
    return _MEMBER_IDS


@pytest.fixture
async def peer(bot: BotProcess) -> AsyncIterator[OneBotPeer]:
    client = OneBotPeer(bot.ws_url, self_id=BOT_ID, access_token=bot.access_token)
    await client.connect()
    yield client
    await client.close()


class DbView:
    """Read the bot's database from the test process (SQLite WAL allows concurrent readers)."""

    def __init__(self, url: str) -> None:
        self.engine = create_engine(url)
        sessions = session_factory(self.engine)
        self.messages = MessageRepository(sessions)
        self.chat_sessions = ChatSessionRepository(sessions)

    async def wait_for(
        self, check: Callable[[], Awaitable[bool]], timeout: float = 10.0, what: str = "condition"
    ) -> None:
        deadline = time.monotonic() + timeout
        while not await check():
            if time.monotonic() > deadline:
                raise TimeoutError(f"timed out waiting for {what}")
            await asyncio.sleep(0.05)

    async def wait_for_replies(
        self, group_id: int, user_id: int, count: int, *, bot_id: int = BOT_ID
    ) -> None:
        """Until the member's session holds `count` bot replies: the turn that sent the last of
        them has also saved its snapshot and committed its session variables (both come before
        the session append, the last step of a delivered reply)."""

        async def enough() -> bool:
            return await self.reply_count(group_id, user_id, bot_id=bot_id) >= count

        await self.wait_for(enough, what=f"{count} replies to {user_id} in the session")

    async def reply_count(self, group_id: int, user_id: int, *, bot_id: int = BOT_ID) -> int:
        """Bot replies in the member's session (its newest 200 turns)."""
        turns = await self.chat_sessions.recent_for_user(bot_id, group_id, user_id, limit=200)
        return sum(1 for t in turns if t.role == "assistant")

    async def wait_for_count(self, count: int, *, group_id: int | None = None) -> None:
        async def enough() -> bool:
            return await self.messages.count(group_id=group_id) >= count

        await self.wait_for(enough, what=f"{count} stored messages")


@pytest.fixture
async def db(bot: BotProcess) -> AsyncIterator[DbView]:
    view = DbView(bot.database_url)
    yield view
    await view.engine.dispose()


def at_bot(text: str) -> list[dict]:
    """Segments of a message that @-mentions the bot, as QQ sends it."""
    return [
        {"type": "at", "data": {"qq": str(BOT_ID)}},
        {"type": "text", "data": {"text": " " + text}},
    ]


def write_group_config(bot: BotProcess, group_id: int, toml: str) -> None:
    """Write config/groups/<group>.toml in the bot's config dir (hot-reloaded on next message)."""
    path = bot.config_dir / "groups" / f"{group_id}.toml"
    path.write_text(toml, encoding="utf-8")


def sent_texts(calls: list) -> list[str]:
    """Plain text of each send_group_msg / send_msg call."""
    texts = []
    for call in calls:
        message = call.params.get("message")
        if isinstance(message, str):
            texts.append(message)
        else:
            texts.append("".join(s.get("data", {}).get("text", "") for s in message or []))
    return texts
