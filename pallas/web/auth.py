"""Console authentication: the login token, signed session cookies, CSRF tokens, login limits.

- The token comes from `PALLAS_CONSOLE_TOKEN`; when unset, one is generated at first start into
  `<data>/console_token` (mode 0600) and printed once, like Jupyter.
- A session is a signed cookie `sid.expiry.mac`: the MAC key is derived from the token, so
  changing the token logs everybody out. The CSRF token is another MAC of the session id.
  Logging out revokes the session id in the `StateStore` until the cookie would have expired,
  so a saved copy of the cookie does not open the console again (every process sees it).
- Failed logins are counted per client address in the `StateStore` (`incr` with a TTL).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pallas.core import state_keys
from pallas.core.state import StateStore

TOKEN_FILE = "console_token"
COOKIE = "pallas_console"
SESSION_TTL_S = 12 * 3600
LOGIN_WINDOW_S = 300.0
LOGIN_MAX_FAILURES = 5


@dataclass(frozen=True, slots=True)
class ConsoleToken:
    value: str
    generated: bool  # True: made by us (file under data/), not configured
    created_now: bool  # True: generated on this start (print it once)
    path: Path | None = None


def load_or_create_token(configured: str, data_dir: Path) -> ConsoleToken:
    """The configured token, else the one stored under `data_dir`, else a new one (0600)."""
    if configured:
        return ConsoleToken(configured, generated=False, created_now=False)
    path = data_dir / TOKEN_FILE
    if path.exists():
        value = path.read_text(encoding="utf-8").strip()
        if value:
            return ConsoleToken(value, generated=True, created_now=False, path=path)
    data_dir.mkdir(parents=True, exist_ok=True)
    value = secrets.token_urlsafe(24)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(value + "\n")
    os.chmod(path, 0o600)
    return ConsoleToken(value, generated=True, created_now=True, path=path)


def is_loopback(host: str) -> bool:
    if host in ("localhost", ""):
        return host == "localhost"
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def startup_lines(token: ConsoleToken, host: str, url: str) -> list[tuple[str, str]]:
    """(level, message) lines for the start-up log; the token itself only when just created."""
    lines = [("info", f"Web console: {url} (log in with the console token)")]
    if token.created_now:
        lines.append(
            (
                "warning",
                f"Generated a console token (stored in {token.path}, shown only this once): "
                f"{token.value}",
            )
        )
    if token.generated and not is_loopback(host):
        lines.append(
            (
                "warning",
                f"The console is reachable on HOST={host} and uses a generated token: "
                "set PALLAS_CONSOLE_TOKEN and put the console behind HTTPS",
            )
        )
    return lines


class ConsoleAuth:
    """Verifies the token, issues / checks session cookies and CSRF tokens, limits logins."""

    def __init__(self, token: str, state: StateStore, clock_now: Callable[[], float]) -> None:
        self._token = token.encode()
        self._key = hashlib.sha256(b"pallas-console-session:" + self._token).digest()
        self._state = state
        self._now = clock_now

    def token_matches(self, candidate: str) -> bool:
        return hmac.compare_digest(candidate.strip().encode(), self._token)

    def _mac(self, text: str) -> str:
        return hmac.new(self._key, text.encode(), hashlib.sha256).hexdigest()

    def new_session(self) -> str:
        sid = secrets.token_urlsafe(16)
        expiry = int(self._now() + SESSION_TTL_S)
        body = f"{sid}.{expiry}"
        return f"{body}.{self._mac(body)}"

    def _signed(self, cookie: str | None) -> tuple[str, int] | None:
        """(session id, expiry) of a validly signed, unexpired cookie."""
        if not cookie or cookie.count(".") != 2:
            return None
        sid, expiry, mac = cookie.split(".")
        if not hmac.compare_digest(mac, self._mac(f"{sid}.{expiry}")):
            return None
        if not expiry.isdigit() or int(expiry) < self._now():
            return None
        return sid, int(expiry)

    async def session_id(self, cookie: str | None) -> str | None:
        """The session id of a valid, unexpired, not logged-out cookie; None otherwise."""
        signed = self._signed(cookie)
        if signed is None or await self._state.get(state_keys.console_revoked(signed[0])):
            return None
        return signed[0]

    async def revoke(self, cookie: str | None) -> None:
        """Log this session out everywhere: its cookie is refused until it would expire."""
        signed = self._signed(cookie)
        if signed is not None:
            sid, expiry = signed
            ttl = max(expiry - self._now(), 1.0)
            await self._state.set(state_keys.console_revoked(sid), 1, ttl=ttl)

    def csrf_token(self, sid: str) -> str:
        return self._mac(f"csrf:{sid}")

    def csrf_ok(self, sid: str, candidate: str | None) -> bool:
        return bool(candidate) and hmac.compare_digest(candidate or "", self.csrf_token(sid))

    def _limit_key(self, client: str) -> str:
        return state_keys.console_login_failures(client)

    async def login_blocked(self, client: str) -> bool:
        count = await self._state.get(self._limit_key(client))
        return int(count or 0) >= LOGIN_MAX_FAILURES

    async def record_failure(self, client: str) -> int:
        return await self._state.incr(self._limit_key(client), ttl=LOGIN_WINDOW_S)

    async def clear_failures(self, client: str) -> None:
        await self._state.delete(self._limit_key(client))
