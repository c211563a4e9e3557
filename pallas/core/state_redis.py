"""`RedisStateStore`: the `StateStore` shared by several processes of one deployment.

Chosen with `PALLAS_STATE_URL=redis://host:6379/0` (empty = `MemoryStateStore`, one process).
Needs the optional `redis` package (`pip install -e '.[redis]'`); it is imported only when a
URL is configured, so a deployment without the extra runs on the memory store as before.

Semantics are those of `MemoryStateStore` (the contract tests run one table over both):
values are JSON text (`ensure_ascii=False`); TTLs are milliseconds (`PX`, rounded up, at least
1 ms; `ttl=None` = no expiry) on the Redis server's clock; `set_if_absent` is `SET NX`; `incr`,
`push`, `take` and `compare_and_set` are Lua scripts (atomic: `incr` sets the TTL only when it
created the key, `push` is RPUSH + LTRIM + PEXPIRE, `take` is LRANGE + DEL,
`compare_and_set` is GET + compare the JSON text + SET); `keys` is `SCAN MATCH` with the
prefix glob-escaped, returned sorted and without the namespace.

Every key lives under `pallas:` plus the optional deployment prefix (`PALLAS_STATE_PREFIX`,
`pallas:<prefix>:`), so several deployments can share one Redis; give each one a prefix.

When Redis cannot be reached (connection refused / reset, 0.5 s socket timeout, read-only
replica, loading) the bot keeps running. The first failure logs an error, the store then
fails fast for `down_backoff_s` (1 s) instead of paying a timeout per call, and the first
success afterwards logs the recovery. Per operation:

- `get` → None, `items` / `take` / `keys` → [] (treated as missing; `take` removes nothing, so
  the list is still there, or expires by its TTL, when Redis is back);
- `set`, `delete`, `push` → dropped (every transient key has a TTL; a stale in-flight marker or
  lock ends by itself);
- `incr` → `amount` (as if the counter were created; the increment is lost);
- `set_if_absent` and `compare_and_set` → raise `StateUnavailableError` (the cost guard's
  member bucket then goes on unsaved, like a dropped `set`). A claim cannot be guessed
  safely: granting it can double work (two replies, two summaries), refusing it can drop work.
  Callers decide through `pallas.core.state.claim(..., when_unavailable=...)`: locks (session
  summary, memory extraction, learning sweep) fail closed and run on a later turn; the router's
  per-message dedupe fails closed too but an addressed message is routed again after a short
  wait (the accumulate-retry path), so an @ is neither answered twice nor dropped silently
  during a blip; the in-flight / cooldown claims taken after a won dedupe fail open.

Reads falling back to "missing" mean that during an outage cooldowns, silences and merges are
not enforced; that is the price of not going mute. Timeouts are short (0.5 s connect and
socket, one immediate retry on a dropped connection) so a dead Redis never stalls a turn long.

At start-up (`open_state_store`) an unreachable Redis is fatal: the error names the URL without
its password. Silently running on the memory store would break every cross-process guarantee.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from pallas.core.clock import Clock
from pallas.core.state import MemoryStateStore, StateStore, StateUnavailableError

log = logging.getLogger("pallas.state")

T = TypeVar("T")

NAMESPACE = "pallas:"
SOCKET_TIMEOUT_S = 0.5
CONNECT_TIMEOUT_S = 0.5
DOWN_BACKOFF_S = 1.0
MAX_CONNECTIONS = 64
POOL_WAIT_S = 1.0  # waiting for a free pooled connection
STARTUP_WAIT_S = 10.0  # Redis may start a little after the bot (docker compose)
_SCAN_COUNT = 1000
_GLOB_SPECIAL = frozenset("*?[]\\")

# KEYS[1]; ARGV: amount, px ('' = none). The TTL applies only when INCRBY created the key.
_INCR = """
local existed = redis.call('EXISTS', KEYS[1])
local value = redis.call('INCRBY', KEYS[1], ARGV[1])
if existed == 0 and ARGV[2] ~= '' then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return value
"""

# KEYS[1]; ARGV: json value, maxlen, px ('' = keep the current expiry). A non-list value is
# replaced, like MemoryStateStore does.
_PUSH = """
if redis.call('TYPE', KEYS[1]).ok ~= 'list' then redis.call('DEL', KEYS[1]) end
local n = tonumber(ARGV[2])
if n <= 0 then redis.call('DEL', KEYS[1]) return 0 end
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], -n, -1)
if ARGV[3] ~= '' then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return 1
"""

# KEYS[1]; ARGV: expected json ('' = the key must be missing), new json, px ('' = none).
# The stored text is compared: every value is written by `_encode`, which reads back the same.
_CAS = """
local kind = redis.call('TYPE', KEYS[1]).ok
if ARGV[1] == '' then
  if kind ~= 'none' then return 0 end
elseif kind ~= 'string' or redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
if ARGV[3] ~= '' then redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
else redis.call('SET', KEYS[1], ARGV[2]) end
return 1
"""

# KEYS[1]: the whole list, then the key is gone (a non-list value is just deleted).
_TAKE = """
local kind = redis.call('TYPE', KEYS[1]).ok
if kind == 'none' then return {} end
if kind ~= 'list' then redis.call('DEL', KEYS[1]) return {} end
local values = redis.call('LRANGE', KEYS[1], 0, -1)
redis.call('DEL', KEYS[1])
return values
"""


def redact_url(url: str) -> str:
    """`url` with its password replaced by `***` (for logs and errors)."""
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
        user = parts.username or ""
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        port = f":{parts.port}" if parts.port else ""
        return urlunsplit(parts._replace(netloc=f"{user}:***@{host}{port}"))
    except ValueError:
        return "<unparseable URL>"


def glob_escape(text: str) -> str:
    """Escape Redis glob characters so `text` matches only itself in `SCAN MATCH`."""
    return "".join("\\" + ch if ch in _GLOB_SPECIAL else ch for ch in text)


def namespace_for(prefix: str) -> str:
    prefix = prefix.strip()
    return f"{NAMESPACE}{prefix}:" if prefix else NAMESPACE


def _px(ttl: float | None) -> int | None:
    return None if ttl is None else max(1, math.ceil(ttl * 1000))


def _encode(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _decode(raw: Any, key: str) -> Any | None:
    try:
        return json.loads(raw)
    except (TypeError, ValueError):
        log.warning("state key %s holds a non-JSON value; treated as missing", key)
        return None


def _import_redis() -> Any:
    try:
        import redis.asyncio as aioredis
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        raise RuntimeError(
            "PALLAS_STATE_URL is set but the `redis` package is not installed: "
            "pip install -e '.[redis]' (or unset PALLAS_STATE_URL for the in-memory store)"
        ) from exc
    return aioredis


def _unavailable_errors() -> tuple[type[BaseException], ...]:
    from redis import exceptions as rex

    return (rex.ConnectionError, rex.TimeoutError, rex.ReadOnlyError, OSError, EOFError)


class RedisStateStore:
    """`StateStore` over one Redis database, namespaced, failing soft (see the module doc)."""

    def __init__(
        self,
        client: Any,
        *,
        prefix: str = "",
        url: str = "",
        down_backoff_s: float = DOWN_BACKOFF_S,
    ) -> None:
        from redis.exceptions import ResponseError

        self._client = client
        self._ns = namespace_for(prefix)
        self.url = redact_url(url) if url else "redis"
        self._down_backoff_s = down_backoff_s
        self._down_since: float | None = None
        self._retry_at = 0.0
        self._unavailable = _unavailable_errors()
        self._response_error = ResponseError
        self._incr = client.register_script(_INCR)
        self._push = client.register_script(_PUSH)
        self._take = client.register_script(_TAKE)
        self._cas = client.register_script(_CAS)

    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        prefix: str = "",
        socket_timeout: float = SOCKET_TIMEOUT_S,
        connect_timeout: float = CONNECT_TIMEOUT_S,
        max_connections: int = MAX_CONNECTIONS,
        down_backoff_s: float = DOWN_BACKOFF_S,
    ) -> RedisStateStore:
        """A store with its own connection pool (closed by `aclose`)."""
        aioredis = _import_redis()
        from redis.asyncio.retry import Retry
        from redis.backoff import NoBackoff
        from redis.exceptions import ConnectionError as RedisConnectionError

        pool = aioredis.BlockingConnectionPool.from_url(
            url,
            decode_responses=True,
            socket_timeout=socket_timeout,
            socket_connect_timeout=connect_timeout,
            max_connections=max_connections,
            timeout=POOL_WAIT_S,
            # one immediate retry on a dropped connection (a restarted server); never on a
            # timeout, where the first attempt may have been applied (SET NX would then lie)
            retry=Retry(NoBackoff(), 1, supported_errors=(RedisConnectionError,)),
        )
        return cls(
            aioredis.Redis(connection_pool=pool),
            prefix=prefix,
            url=url,
            down_backoff_s=down_backoff_s,
        )

    # -- lifecycle --------------------------------------------------------------------------
    @property
    def namespace(self) -> str:
        return self._ns

    def describe(self) -> str:
        return f"Redis {self.url} (keys under {self._ns!r})"

    async def ping(self) -> None:
        """Raise `StateUnavailableError` unless Redis answers (bypasses the fail-fast window)."""
        try:
            await self._client.ping()
        except self._unavailable as exc:
            raise StateUnavailableError(f"{self.url}: {exc}") from exc
        self._mark_up()

    async def aclose(self) -> None:
        closer = getattr(self._client, "aclose", None)
        await (closer() if closer is not None else self._client.close())
        await self._client.connection_pool.disconnect()

    # -- failure handling --------------------------------------------------------------------
    def _mark_down(self, exc: BaseException) -> None:
        now = time.monotonic()
        self._retry_at = now + self._down_backoff_s
        if self._down_since is None:
            self._down_since = now
            log.error(
                "state store %s unreachable (%s): reads count as missing, writes are dropped, "
                "claims are refused until it answers again",
                self.url,
                exc or type(exc).__name__,
            )

    def _mark_up(self) -> None:
        if self._down_since is not None:
            log.warning(
                "state store %s reachable again after %.1f s",
                self.url,
                time.monotonic() - self._down_since,
            )
            self._down_since = None
            self._retry_at = 0.0

    async def _call(self, op: str, key: str, fn: Callable[[], Awaitable[T]]) -> T:
        """Run one Redis command; `StateUnavailableError` when Redis cannot be reached."""
        if self._down_since is not None and time.monotonic() < self._retry_at:
            raise StateUnavailableError(f"{self.url} is unreachable ({op} {key})")
        try:
            result = await fn()
        except self._unavailable as exc:
            self._mark_down(exc)
            raise StateUnavailableError(f"{self.url}: {op} {key}: {exc}") from exc
        self._mark_up()
        return result

    def _k(self, key: str) -> str:
        return self._ns + key

    # -- StateStore --------------------------------------------------------------------------
    async def get(self, key: str) -> Any | None:
        name = self._k(key)

        async def run() -> tuple[Any, list[str] | None]:
            try:
                return await self._client.get(name), None
            except self._response_error as exc:
                if not str(exc).startswith("WRONGTYPE"):
                    raise
                return None, await self._client.lrange(name, 0, -1)  # a list, as in memory

        try:
            raw, listed = await self._call("get", key, run)
        except StateUnavailableError:
            return None
        if listed is not None:
            return [_decode(item, key) for item in listed]
        return None if raw is None else _decode(raw, key)

    async def set(self, key: str, value: Any, *, ttl: float | None = None) -> None:
        data = _encode(value)
        with contextlib.suppress(StateUnavailableError):
            await self._call("set", key, lambda: self._client.set(self._k(key), data, px=_px(ttl)))

    async def set_if_absent(self, key: str, value: Any, *, ttl: float | None = None) -> bool:
        data = _encode(value)
        done = await self._call(
            "set_if_absent",
            key,
            lambda: self._client.set(self._k(key), data, px=_px(ttl), nx=True),
        )
        return bool(done)

    async def compare_and_set(
        self, key: str, expected: Any | None, value: Any, *, ttl: float | None = None
    ) -> bool:
        px = _px(ttl)
        args = [
            "" if expected is None else _encode(expected),
            _encode(value),
            "" if px is None else px,
        ]
        done = await self._call(
            "compare_and_set", key, lambda: self._cas(keys=[self._k(key)], args=args)
        )
        return bool(done)

    async def delete(self, key: str) -> None:
        with contextlib.suppress(StateUnavailableError):
            await self._call("delete", key, lambda: self._client.delete(self._k(key)))

    async def incr(self, key: str, amount: int = 1, *, ttl: float | None = None) -> int:
        px = _px(ttl)
        args = [int(amount), "" if px is None else px]
        try:
            value = await self._call(
                "incr", key, lambda: self._incr(keys=[self._k(key)], args=args)
            )
        except StateUnavailableError:
            return int(amount)
        return int(value)

    async def push(self, key: str, value: Any, *, maxlen: int, ttl: float | None = None) -> None:
        px = _px(ttl)
        args = [_encode(value), int(maxlen), "" if px is None else px]
        with contextlib.suppress(StateUnavailableError):
            await self._call("push", key, lambda: self._push(keys=[self._k(key)], args=args))

    async def items(self, key: str) -> list[Any]:
        name = self._k(key)

        async def run() -> list[str]:
            try:
                values: list[str] = await self._client.lrange(name, 0, -1)
                return values
            except self._response_error as exc:
                if not str(exc).startswith("WRONGTYPE"):
                    raise
                return []  # a plain value: not a list, like the memory store

        try:
            raw = await self._call("items", key, run)
        except StateUnavailableError:
            return []
        return [_decode(item, key) for item in raw]

    async def read(
        self, values: Sequence[str], lists: Sequence[str] = ()
    ) -> tuple[list[Any | None], list[list[Any]]]:
        """One pipelined round trip (not a transaction, like separate reads); a key of the
        other kind answers as `get` / `items` do (a list read as a value: its items)."""

        async def run() -> list[Any]:
            pipe = self._client.pipeline(transaction=False)
            for key in values:
                pipe.get(self._k(key))
            for key in lists:
                pipe.lrange(self._k(key), 0, -1)
            answers: list[Any] = await pipe.execute(raise_on_error=False)
            return answers

        try:
            raw = await self._call("read", ",".join([*values, *lists])[:200], run)
        except StateUnavailableError:
            return [None] * len(values), [[] for _ in lists]
        got: list[Any | None] = []
        for key, answer in zip(values, raw[: len(values)], strict=True):
            if self._wrong_type(answer):
                got.append(await self.get(key))  # a list: `get` returns its items
            else:
                got.append(None if answer is None else _decode(answer, key))
        listed: list[list[Any]] = []
        for key, answer in zip(lists, raw[len(values) :], strict=True):
            listed.append([] if self._wrong_type(answer) else [_decode(v, key) for v in answer])
        return got, listed

    def _wrong_type(self, answer: Any) -> bool:
        """A pipelined answer that is Redis's WRONGTYPE error; any other error is raised."""
        if not isinstance(answer, BaseException):
            return False
        if isinstance(answer, self._response_error) and str(answer).startswith("WRONGTYPE"):
            return True
        raise answer

    async def take(self, key: str) -> list[Any]:
        try:
            raw = await self._call("take", key, lambda: self._take(keys=[self._k(key)]))
        except StateUnavailableError:
            return []
        return [_decode(item, key) for item in raw]

    async def keys(self, prefix: str) -> list[str]:
        pattern = glob_escape(self._ns + prefix) + "*"
        cut = len(self._ns)

        async def run() -> list[str]:
            found: set[str] = set()  # SCAN may return a key twice
            async for name in self._client.scan_iter(match=pattern, count=_SCAN_COUNT):
                found.add(name[cut:])
            return sorted(found)

        try:
            return await self._call("keys", prefix, run)
        except StateUnavailableError:
            return []


async def open_state_store(
    url: str,
    prefix: str = "",
    *,
    clock: Clock | None = None,
    wait_s: float | None = None,
) -> StateStore:
    """The deployment's store: in-memory for an empty `url`, else Redis, which must answer
    within `wait_s` (default `STARTUP_WAIT_S`, polled every 0.5 s) or start-up fails with
    `StateUnavailableError`."""
    url = url.strip()
    if not url:
        log.info("state store: in-memory (one process; set PALLAS_STATE_URL to share it)")
        return MemoryStateStore(clock)
    store = RedisStateStore.from_url(url, prefix=prefix)
    deadline = time.monotonic() + (STARTUP_WAIT_S if wait_s is None else wait_s)
    while True:
        try:
            await store.ping()
            break
        except StateUnavailableError as exc:
            if time.monotonic() >= deadline:
                await store.aclose()
                message = (
                    f"PALLAS_STATE_URL={store.url} is unreachable ({exc.__cause__ or exc}). "
                    "Refusing to start on the in-memory store: the processes of this deployment "
                    "would stop sharing dedupe, cooldowns and in-flight turns. Start Redis or fix "
                    "the URL, or leave PALLAS_STATE_URL empty for a single process."
                )
                log.error("%s", message)
                raise StateUnavailableError(message) from exc
            await asyncio.sleep(0.5)
    log.info("state store: %s", store.describe())
    return store


async def close_state_store(state: StateStore) -> None:
    """Close a store `open_state_store` gave: Redis holds connections, the memory store has
    nothing to close. A failure to close is logged, never raised (it runs at shutdown)."""
    closer = getattr(state, "aclose", None)
    if closer is None:
        return
    try:
        await closer()
    except Exception:
        log.exception("closing the state store failed")
