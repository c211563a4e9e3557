"""Who a newly connected account is: `get_login_info` and `get_version_info`, asked once.

Run as its own task right after the reverse WebSocket is accepted (the answers come back
through that socket's receive loop, which must keep running). An implementation that does not
answer one of them (or answers slowly) just leaves that part blank on the console's status
page; nothing else waits for it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from pallas.core.accounts import Accounts

log = logging.getLogger("pallas.inbound")

TIMEOUT_S = 5.0


async def _ask(bot: Any, api: str) -> dict[str, Any] | None:
    try:
        answer = await asyncio.wait_for(bot.call_api(api), TIMEOUT_S)
    except Exception as exc:  # not supported, failed, or no answer in time
        log.info("OneBot bot %s: %s unanswered (%r)", bot.self_id, api, exc)
        return None
    return answer if isinstance(answer, dict) else None


def _text(values: dict[str, Any] | None, key: str) -> str | None:
    if values is None or values.get(key) is None:
        return None
    return str(values[key])


async def identify(bot: Any, accounts: Accounts) -> None:
    """Ask the account's nickname and its implementation; note what was answered."""
    self_id = int(bot.self_id)
    login = await _ask(bot, "get_login_info")
    version = await _ask(bot, "get_version_info")
    accounts.identified(
        self_id,
        nickname=_text(login, "nickname"),
        app_name=_text(version, "app_name"),
        app_version=_text(version, "app_version"),
        protocol_version=_text(version, "protocol_version"),
    )
    if version is not None:
        log.info("OneBot bot %s is %s %s", self_id, version.get("app_name"),
                 version.get("app_version"))  # fmt: skip
