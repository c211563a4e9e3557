"""A OneBot v11 implementation stand-in (what NapCat is to the bot), speaking the real protocol.

It connects to the bot's reverse WebSocket exactly like NapCat does (`X-Self-ID`,
`Authorization: Bearer`), pushes events, and answers the bot's API frames
(`send_msg`, `send_group_msg`, `get_msg`, `get_group_member_info`, ...) with scripted results
while recording every call.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

ApiHandler = Callable[[dict[str, Any]], Any]


@dataclass
class ApiCall:
    action: str
    params: dict[str, Any]
    at: float = field(default_factory=time.monotonic)


class OneBotPeer:
    def __init__(
        self,
        ws_url: str,
        *,
        self_id: int,
        access_token: str | None = None,
        clock_offset_s: float = 0.0,
    ) -> None:
        self.ws_url = ws_url
        # The implementation's clock agrees with the bot's: a bot started with
        # PALLAS_CLOCK_OFFSET_SECONDS gets events stamped with the same shifted time.
        self.clock_offset_s = clock_offset_s
        self.self_id = self_id
        self.access_token = access_token
        self.calls: list[ApiCall] = []
        self.messages: dict[int, dict[str, Any]] = {}  # message_id -> get_msg payload
        self.handlers: dict[str, ApiHandler] = {}
        self.member_roles: dict[tuple[int, int], str] = {}
        # Ids the peer hands out for the bot's own sends: negative and > 2**31, as new QQ does.
        self._send_ids = itertools.cycle([-2_000_000_001, 3_000_000_000])
        self._send_counter = itertools.count(1)
        self._event_ids = itertools.count(1_000)
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._call_event = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self.closed_reason: str | None = None
        self.repeat_responses = 1  # > 1: every API response is sent that many times (hostile)

    def now(self) -> int:
        """Event time as the implementation stamps it (seconds, shifted like the bot's clock)."""
        return int(time.time() + self.clock_offset_s)

    # -- connection ----------------------------------------------------------------------
    def headers(self) -> dict[str, str]:
        headers = {"X-Self-ID": str(self.self_id), "X-Client-Role": "Universal"}
        if self.access_token is not None:
            headers["Authorization"] = f"Bearer {self.access_token}"
        return headers

    async def connect(self) -> None:
        self._ws = await connect(self.ws_url, additional_headers=self.headers(), max_size=2**24)
        self._reader = asyncio.create_task(self._read_loop())
        await self.send_event(self.lifecycle_event())

    @property
    def connected(self) -> bool:
        """The WebSocket is open (neither side has closed it)."""
        return self._ws is not None and self._ws.close_code is None and self.closed_reason is None

    async def close(self) -> None:
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
        self._ws = None

    async def _read_loop(self) -> None:
        assert self._ws is not None
        try:
            async for raw in self._ws:
                frame = json.loads(raw)
                task = asyncio.create_task(self._answer(frame))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
        except Exception as exc:  # connection dropped
            self.closed_reason = repr(exc)

    async def _answer(self, frame: dict[str, Any]) -> None:
        action = str(frame.get("action", ""))
        params = frame.get("params") or {}
        self.calls.append(ApiCall(action, params))
        self._call_event.set()
        try:
            data = await self._dispatch(action, params)
            reply = {"status": "ok", "retcode": 0, "data": data, "echo": frame.get("echo")}
        except LookupError as exc:
            reply = {"status": "failed", "retcode": 1404, "data": None, "message": str(exc)}
            reply["echo"] = frame.get("echo")
        if self._ws is not None:
            with contextlib.suppress(Exception):
                for _ in range(max(self.repeat_responses, 1)):
                    await self._ws.send(json.dumps(reply, ensure_ascii=False))

    async def _dispatch(self, action: str, params: dict[str, Any]) -> Any:
        if action in self.handlers:
            result = self.handlers[action](params)
            return await result if asyncio.iscoroutine(result) else result
        if action in ("send_msg", "send_group_msg", "send_private_msg"):
            message_id = next(self._send_ids) + next(self._send_counter)
            group_id = int(params.get("group_id") or 0)
            self.messages[message_id] = self._msg_payload(
                message_id, group_id, self.self_id, params.get("message"), nickname="帕拉斯"
            )
            return {"message_id": message_id}
        if action == "get_msg":
            message_id = int(params.get("message_id"))
            if message_id not in self.messages:
                raise LookupError(f"message {message_id} not found")
            return self.messages[message_id]
        if action == "get_group_member_info":
            key = (int(params.get("group_id", 0)), int(params.get("user_id", 0)))
            role = self.member_roles.get(key, "member")
            return {"group_id": key[0], "user_id": key[1], "role": role, "card": "", "nickname": ""}
        if action == "get_login_info":
            return {"user_id": self.self_id, "nickname": "帕拉斯"}
        if action in ("delete_msg", "set_msg_emoji_like"):
            return None
        raise LookupError(f"unsupported action {action}")

    # -- events ----------------------------------------------------------------------------
    async def send_event(self, event: dict[str, Any]) -> None:
        """The event as a real peer writes it: UTF-8 text, a lone surrogate as its `\\udXXX`
        escape (what JavaScript's JSON.stringify does) and NaN bare."""
        assert self._ws is not None, "peer is not connected"
        text = json.dumps(event, ensure_ascii=False)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = json.dumps(event)
        await self._ws.send(text)

    async def send_raw(self, text: str) -> None:
        assert self._ws is not None
        await self._ws.send(text)

    def lifecycle_event(self) -> dict[str, Any]:
        return {
            "time": self.now(),
            "self_id": self.self_id,
            "post_type": "meta_event",
            "meta_event_type": "lifecycle",
            "sub_type": "connect",
        }

    def group_message(
        self,
        group_id: int,
        user_id: int,
        message: str | list[dict[str, Any]],
        *,
        message_id: int | None = None,
        card: str = "",
        nickname: str | None = None,
        role: str = "member",
        time_: int | None = None,
        raw_message: str | None = None,
    ) -> dict[str, Any]:
        """A `message.group.normal` event; `message` is text or a segment list."""
        event = self._message_event(
            "group", "normal", group_id, user_id, message, message_id, nickname, time_
        )
        if raw_message is not None:
            event["raw_message"] = raw_message
        event.update(group_id=group_id, anonymous=None)
        event["sender"].update(card=card, role=role)
        return event

    def private_message(
        self,
        user_id: int,
        message: str | list[dict[str, Any]],
        *,
        sub_type: str = "friend",
        message_id: int | None = None,
        nickname: str | None = None,
        time_: int | None = None,
    ) -> dict[str, Any]:
        """A `message.private.<sub_type>` event: `friend`, `group` (a temp session started
        from a group) or `other` (a stranger); `message` is text or a segment list."""
        event = self._message_event(
            "private", sub_type, 0, user_id, message, message_id, nickname, time_
        )
        event["target_id"] = self.self_id
        event["sender"].update(sex="unknown", age=0)
        return event

    def _message_event(
        self,
        message_type: str,
        sub_type: str,
        group_id: int,
        user_id: int,
        message: str | list[dict[str, Any]],
        message_id: int | None,
        nickname: str | None,
        time_: int | None,
    ) -> dict[str, Any]:
        """The fields every message event has; the message is kept for the bot's get_msg."""
        segments = (
            [{"type": "text", "data": {"text": message}}] if isinstance(message, str) else message
        )
        message_id = next(self._event_ids) if message_id is None else message_id
        nickname = f"user{user_id}" if nickname is None else nickname
        self.messages[message_id] = self._msg_payload(
            message_id, group_id, user_id, segments, nickname=nickname
        )
        return {
            "time": self.now() if time_ is None else time_,
            "self_id": self.self_id,
            "post_type": "message",
            "message_type": message_type,
            "sub_type": sub_type,
            "message_id": message_id,
            "user_id": user_id,
            "message": segments,
            "raw_message": _cq(segments),
            "font": 0,
            "sender": {"user_id": user_id, "nickname": nickname},
        }

    def private_sends(self, user_id: int | None = None) -> list[ApiCall]:
        """The bot's `send_private_msg` (and private `send_msg`) calls, to `user_id` if given."""
        return [
            c
            for c in self.calls_of("send_msg", "send_private_msg")
            if (c.action == "send_private_msg" or c.params.get("message_type") == "private")
            and (user_id is None or int(c.params.get("user_id") or 0) == user_id)
        ]

    def _msg_payload(
        self, message_id: int, group_id: int, user_id: int, message: Any, *, nickname: str
    ) -> dict[str, Any]:
        return {
            "time": self.now(),
            "message_type": "group" if group_id else "private",
            "message_id": message_id,
            "real_id": message_id,
            "group_id": group_id,
            "sender": {"user_id": user_id, "nickname": nickname},
            "message": message,
        }

    # -- waiting on the bot ------------------------------------------------------------------
    def calls_of(self, *actions: str) -> list[ApiCall]:
        return [c for c in self.calls if c.action in actions]

    def sends(self, group_id: int | None = None) -> list[ApiCall]:
        return [
            c
            for c in self.calls_of("send_msg", "send_group_msg")
            if group_id is None or int(c.params.get("group_id") or 0) == group_id
        ]

    async def wait_for_calls(
        self, *actions: str, count: int = 1, timeout: float = 10.0
    ) -> list[ApiCall]:
        deadline = time.monotonic() + timeout
        while True:
            found = self.calls_of(*actions)
            if len(found) >= count:
                return found
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"expected {count} {actions} calls, saw {len(found)}")
            self._call_event.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._call_event.wait(), remaining)


def _cq(segments: list[dict[str, Any]]) -> str:
    from pallas.core.cq import to_cq

    return to_cq(segments)
