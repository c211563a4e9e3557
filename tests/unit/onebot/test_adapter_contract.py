"""The private parts of `nonebot-adapter-onebot` that Pallas's adapter relies on (issue 46).

`GuardedAdapter` (`pallas/onebot/adapter.py`) replaces the stock reverse-WebSocket loop and
resolves API responses itself, so it leans on members the adapter does not promise to keep:
`_handle_ws` and `_call_api` (overridden), `_check_access_token`, `_result_store` (its
`_futures`, `get_seq` and `fetch`), `tasks`, `bots` / `connections` and `bot_connect` /
`bot_disconnect`, `get_event_model`; and the tests patch the module-level `handle_event` the
v11 `Bot.handle_event` calls. Each test here fails, naming the member, when an adapter release
renames or reshapes one of them — before a deployment finds out on its first frame.
"""

from __future__ import annotations

import asyncio
import inspect

import nonebot
import pytest
from nonebot.adapters.onebot.v11 import Adapter, Bot
from nonebot.adapters.onebot.v11 import bot as v11_bot
from nonebot.drivers import Request

from pallas.onebot.adapter import GuardedAdapter, deliver_result


def _parameters(function: object) -> list[str]:
    return list(inspect.signature(function).parameters)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("member", "parameters"),
    [
        ("_handle_ws", ["self", "websocket"]),
        ("_call_api", ["self", "bot", "api", "data"]),
        ("_check_access_token", ["self", "request"]),
        ("json_to_event", ["json_data"]),  # a classmethod: bound, without cls
        ("get_event_model", ["data"]),
        ("bot_connect", ["self", "bot"]),
        ("bot_disconnect", ["self", "bot"]),
    ],
)
def test_the_adapter_members_pallas_overrides_or_calls_keep_their_shape(
    member: str, parameters: list[str]
) -> None:
    found = getattr(Adapter, member, None)
    assert found is not None, f"Adapter.{member} is gone"
    assert _parameters(found) == parameters, f"Adapter.{member}{inspect.signature(found)}"


def test_the_result_store_keeps_futures_by_sequence_number() -> None:
    """`deliver_result` resolves a waiting call through `_result_store._futures[seq]`."""
    store = Adapter._result_store
    seq = store.get_seq()
    assert isinstance(seq, int)
    assert isinstance(store._futures, dict)

    async def fetch_and_deliver() -> object:
        waiting = asyncio.ensure_future(store.fetch(seq, 1.0))
        await asyncio.sleep(0)
        assert seq in store._futures, "fetch no longer registers its future in _futures"
        assert deliver_result(store, {"status": "ok", "retcode": 0, "echo": str(seq)})
        return await waiting

    result = asyncio.run(fetch_and_deliver())
    assert isinstance(result, dict) and result["echo"] == str(seq)


def test_an_adapter_instance_has_the_sets_and_maps_pallas_uses() -> None:
    adapter = GuardedAdapter(nonebot.get_driver())
    assert isinstance(adapter.tasks, set)
    assert isinstance(adapter.bots, dict)
    assert isinstance(adapter.connections, dict)
    request = Request("GET", "ws://127.0.0.1/onebot/v11/ws", headers={"x-self-id": "1"})
    assert adapter._check_access_token(request) is None  # no token configured in the tests


def test_the_v11_bot_dispatches_through_the_module_level_handle_event() -> None:
    """The edge tests replace NoneBot's dispatch there (`tests/integration/onebot_link.py`)."""
    assert callable(v11_bot.handle_event)
    assert "handle_event(self, event)" in inspect.getsource(Bot.handle_event)
