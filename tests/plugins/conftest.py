"""nonebug fixtures for the thin plugins under `packages/`.

How NoneBot comes up here, and why it does not leak into the other test folders:

- nonebug is a pytest plugin (entry point): in *every* pytest session it calls `nonebot.init()`
  and runs the driver's lifespan (start-up now, shut-down at the end of the session), before any
  Pallas plugin exists. That part is harmless for tests/unit and tests/integration: no plugin,
  no runtime, no scheduler.
- The first test under tests/plugins loads the plugins exactly as bot.py does (OneBot V11 adapter,
  `nonebot.load_from_toml("pyproject.toml")`), records the start-up / shut-down hooks they
  register and runs the start-up ones (the driver started before the plugins were loaded).
  The fixture is package-scoped: after the last test of this folder the runtime is stopped and the
  scheduler shut down, so nothing of it runs during the tests collected after this folder. The
  plugins' matchers stay registered (NoneBot cannot unload a plugin); no other test dispatches
  NoneBot events.
- Every test gets its own Pallas runtime: a fresh SQLite file and a copy of `config/` in its
  `tmp_path`, started and stopped through the plugins' real lifecycle hook
  (`pallas.onebot.lifespan.install`, as bot.py does), which reads the settings from the NoneBot
  config like in production. The LLM is the in-process fake OpenAI server; without an API key
  the runtime has replies disabled.
- Events are built from OneBot v11 JSON frames and pre-processed like the adapter's
  `Bot.handle_event` does (reply lookup through `get_msg`, @bot / nickname detection) before
  nonebug hands them to the matchers.
"""

from __future__ import annotations

import contextlib
import itertools
import shutil
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import nonebot
import pytest
from nonebot.adapters.onebot.v11 import Adapter, Bot, GroupMessageEvent, Message, MessageSegment
from nonebot.adapters.onebot.v11.bot import _check_at_me, _check_nickname, _check_reply
from nonebot.dependencies import Dependent
from nonebot.message import EVENT_PCS_PARAMS as EVENT_PARAMS
from nonebot.message import _event_postprocessors

from pallas.core.cq import to_cq
from pallas.onebot import lifespan
from pallas.runtime import PallasRuntime
from tests.harness.fake_openai import FakeOpenAI
from tests.harness.group_defaults import write_group_defaults

REPO = Path(__file__).resolve().parents[2]
BOT_ID = 2_900_000_001
SUPERUSER = 10_001
NICKNAMES = ("帕拉斯", "牛牛", "小帕")  # NICKNAME=…; 小帕 is not a persona alias
STARTUP_SWEEP_INTERVAL = 1800  # [learning] sweep_interval_seconds of the start-up config

LIFECYCLE_MODULE = lifespan.__name__

Hook = Callable[[], Any]


class LifespanHooks:
    """The start-up / shut-down hooks the plugins register while they are imported."""

    def __init__(self) -> None:
        self.startup: list[Hook] = []
        self.shutdown: list[Hook] = []

    @contextlib.contextmanager
    def capture(self, driver: Any) -> Iterator[None]:
        register_startup, register_shutdown = driver.on_startup, driver.on_shutdown

        def on_startup(func: Hook) -> Hook:
            self.startup.append(func)
            return register_startup(func)

        def on_shutdown(func: Hook) -> Hook:
            self.shutdown.append(func)
            return register_shutdown(func)

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(driver, "on_startup", on_startup)
            patch.setattr(driver, "on_shutdown", on_shutdown)
            yield

    @staticmethod
    async def _run(hooks: list[Hook]) -> None:
        for hook in hooks:
            result = hook()
            if isinstance(result, Awaitable):
                await result

    async def start(self, module: str | None = None) -> None:
        await self._run([h for h in self.startup if module in (None, h.__module__)])

    async def stop(self, module: str | None = None) -> None:
        await self._run([h for h in reversed(self.shutdown) if module in (None, h.__module__)])


def _no_dice_defaults(config_dir: Path, **extra: dict[str, Any]) -> None:
    """No random actions and no merge wait, so a test's API-call expectations are exact."""
    write_group_defaults(config_dir, chat={"merge_window_s": 0.0}, **extra)


def _point_runtime_at(
    workdir: Path, *, api_key: str, base_url: str, **extra: dict[str, Any]
) -> None:
    """The NoneBot config the lifecycle hook builds `PallasSettings` from (env in production)."""
    config_dir = workdir / "config"
    if not config_dir.exists():
        shutil.copytree(REPO / "config", config_dir)
        _no_dice_defaults(config_dir, **extra)
    config = nonebot.get_driver().config
    values = {
        "database_url": f"sqlite+aiosqlite:///{workdir / 'pallas.db'}",
        "pallas_config_dir": str(config_dir),
        "pallas_data_dir": str(workdir),
        "pallas_state_url": "",
        "pallas_clock_offset_seconds": 0.0,
        "openai_api_key": api_key,
        "openai_base_url": base_url,
        "pallas_embedding_model": "",
        "pallas_llm_timeout_seconds": 3.0,
        "pallas_llm_max_retries": 0,
    }
    for key, value in values.items():
        setattr(config, key, value)


@pytest.fixture(scope="package")
async def fake_llm() -> AsyncIterator[FakeOpenAI]:
    server = FakeOpenAI()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture(scope="package", autouse=True)
async def nonebot_plugins(
    nonebug_init: None, fake_llm: FakeOpenAI, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[LifespanHooks]:
    """Load the plugins like bot.py and run their start-up hooks once for this folder."""
    driver = nonebot.get_driver()
    config = driver.config
    # what .env sets in production (.env.example); must be in place before the plugins load
    config.superusers = {str(SUPERUSER)}
    config.nickname = set(NICKNAMES)
    config.command_start = {"/"}
    config.command_sep = {"."}
    _point_runtime_at(
        tmp_path_factory.mktemp("startup"),
        api_key="",
        base_url=fake_llm.base_url,
        learning={"sweep_interval_seconds": STARTUP_SWEEP_INTERVAL},
    )
    try:
        nonebot.get_adapter(Adapter)
    except ValueError:
        driver.register_adapter(Adapter)
    hooks = LifespanHooks()
    # as bot.py: Pallas's lifespan first, then the plugins (plugin_dirs in [tool.nonebot] are
    # relative to the working directory, as in `make run`)
    with hooks.capture(driver), contextlib.chdir(REPO):
        lifespan.install(driver)
        nonebot.load_from_toml("pyproject.toml")
    if not any(h.__module__ == LIFECYCLE_MODULE for h in hooks.startup):
        pytest.fail("Pallas's lifespan was installed before tests/plugins could capture it")
    await hooks.start()
    # The chat turn runs detached from NoneBot's dispatch (packages/llm_chat); nonebug checks
    # the expected API calls when the dispatch ends, so here the dispatch ends once the turns
    # it started are done (an event postprocessor, removed after this folder).
    _event_postprocessors.add(Dependent[Any].parse(call=_turns_done, allow_types=EVENT_PARAMS))
    yield hooks
    _event_postprocessors.difference_update(
        {d for d in _event_postprocessors if d.call is _turns_done}
    )
    await hooks.stop()


async def _turns_done() -> None:
    installed = lifespan._installed
    edge = installed.edge if installed is not None else None
    if edge is not None:
        await edge.detached.idle()


class Pallas:
    """This test's runtime: started through the lifecycle hook, stopped after the test."""

    def __init__(self, workdir: Path, hooks: LifespanHooks, fake_llm: FakeOpenAI) -> None:
        self.workdir = workdir
        self.hooks = hooks
        self.fake_llm = fake_llm
        self.pauses: list[float] = []  # delays the chat asked for between bubbles
        self._running = False

    @property
    def config_dir(self) -> Path:
        return self.workdir / "config"

    async def start(
        self,
        *,
        llm: bool = False,
        groups: dict[int, str] | None = None,
        **default_tables: dict[str, Any],
    ) -> PallasRuntime:
        """`llm`: an API key for the fake LLM server (else replies are disabled);
        `groups`: `config/groups/<id>.toml` contents; `default_tables`: more default.toml keys."""
        _point_runtime_at(
            self.workdir,
            api_key="sk-test" if llm else "",
            base_url=self.fake_llm.base_url,
            **default_tables,
        )
        for group_id, text in (groups or {}).items():
            (self.config_dir / "groups" / f"{group_id}.toml").write_text(text, encoding="utf-8")
        await self.hooks.stop(LIFECYCLE_MODULE)  # the start-up runtime, or the last test's
        await self.hooks.start(LIFECYCLE_MODULE)
        self._running = True
        # Bubble pacing (0.5–3.5 s per bubble) is delivery logic with its own unit tests.
        service = lifespan.get_app().chat

        async def no_pause(seconds: float) -> None:
            self.pauses.append(seconds)

        service.pause.sleep = no_pause
        return lifespan.get_app().runtime

    async def stop(self) -> None:
        if not self._running:
            return
        app = lifespan.app_or_none()
        if app is not None:
            await app.chat.drain_background()  # after-turn work (memory extraction, summaries)
        await self.hooks.stop(LIFECYCLE_MODULE)
        self._running = False


@pytest.fixture
async def pallas(
    nonebot_plugins: LifespanHooks, fake_llm: FakeOpenAI, tmp_path: Path
) -> AsyncIterator[Pallas]:
    fake_llm.script.clear()
    fake_llm.requests.clear()
    env = Pallas(tmp_path, nonebot_plugins, fake_llm)
    yield env
    await env.stop()


# -- OneBot v11 frames ------------------------------------------------------------------------

_message_ids = itertools.count(7_000_001)


def onebot(ctx: Any) -> Bot:
    """A OneBot v11 bot on the registered adapter; nonebug answers its API calls."""
    return ctx.create_bot(base=Bot, adapter=nonebot.get_adapter(Adapter), self_id=str(BOT_ID))


def group_message(
    group_id: int,
    user_id: int,
    message: str | list[dict[str, Any]],
    *,
    message_id: int | None = None,
    role: str = "member",
    card: str = "",
    nickname: str | None = None,
    time_: int | None = None,
) -> dict[str, Any]:
    """A `message.group.normal` frame as NapCat posts it; `message` is text or segments."""
    segments = (
        [{"type": "text", "data": {"text": message}}] if isinstance(message, str) else message
    )
    return {
        "time": int(time.time()) if time_ is None else time_,
        "self_id": BOT_ID,
        "post_type": "message",
        "message_type": "group",
        "sub_type": "normal",
        "message_id": next(_message_ids) if message_id is None else message_id,
        "group_id": group_id,
        "user_id": user_id,
        "anonymous": None,
        "message": segments,
        "raw_message": to_cq(segments),
        "font": 0,
        "sender": {
            "user_id": user_id,
            "nickname": f"user{user_id}" if nickname is None else nickname,
            "card": card,
            "role": role,
        },
    }


def at_bot(text: str) -> list[dict[str, Any]]:
    return [
        {"type": "at", "data": {"qq": str(BOT_ID)}},
        {"type": "text", "data": {"text": " " + text}},
    ]


def quoting(message_id: int, text: str) -> list[dict[str, Any]]:
    return [
        {"type": "reply", "data": {"id": str(message_id)}},
        {"type": "text", "data": {"text": text}},
    ]


def get_msg_result(
    message_id: int, group_id: int, user_id: int, text: str, *, time_: int | None = None
) -> dict[str, Any]:
    """What the OneBot implementation answers to `get_msg` (the adapter builds `event.reply`)."""
    return {
        "time": int(time.time()) if time_ is None else time_,
        "message_type": "group",
        "message_id": message_id,
        "real_id": message_id,
        "group_id": group_id,
        "sender": {"user_id": user_id, "nickname": "帕拉斯" if user_id == BOT_ID else "someone"},
        "message": [{"type": "text", "data": {"text": text}}],
    }


async def arrive(bot: Bot, frame: dict[str, Any]) -> GroupMessageEvent:
    """The frame as NoneBot's matchers get it: what `Bot.handle_event` of the OneBot V11
    adapter does first (reply lookup via `get_msg`, @bot and nickname detection).
    Call inside the nonebug context, after declaring the `get_msg` answer if it quotes."""
    event = Adapter.json_to_event(frame)
    assert isinstance(event, GroupMessageEvent), event
    event.message.reduce()
    await _check_reply(bot, event)
    _check_at_me(bot, event)
    _check_nickname(bot, event)
    return event


def text_message(text: str) -> Message:
    """The `message` argument of `send_group_msg` for one plain-text bubble."""
    return Message(MessageSegment.text(text))


class TextWith:
    """Stands for a sent text that contains every fragment (for `should_call_send`)."""

    def __init__(self, *fragments: str) -> None:
        self.fragments = fragments

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str | Message) and all(f in str(other) for f in self.fragments)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"TextWith{self.fragments!r}"


async def routed_message_ids(runtime: PallasRuntime, group_id: int) -> list[int]:
    """Messages the chat plugin routed in a group (the decisions `/pallas why` shows; a
    member's memory command is kept there too, as answered before routing — not counted)."""
    records = await runtime.routing.recent_decisions(BOT_ID, group_id)
    return [int(r["message_id"]) for r in records if r.get("stage") != "memory_command"]


async def memory_command_ids(runtime: PallasRuntime, group_id: int) -> list[int]:
    """Messages the memory-command plugin answered (kept in the route log for /pallas why)."""
    records = await runtime.routing.recent_decisions(BOT_ID, group_id)
    return [int(r["message_id"]) for r in records if r.get("stage") == "memory_command"]
