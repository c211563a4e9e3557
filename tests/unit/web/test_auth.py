"""Console login token, session cookies, CSRF tokens, login limits and start-up warnings."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from pallas.core.clock import FakeClock
from pallas.core.state import MemoryStateStore
from pallas.web.auth import (
    LOGIN_MAX_FAILURES,
    SESSION_TTL_S,
    ConsoleAuth,
    is_loopback,
    load_or_create_token,
    startup_lines,
)


def test_generated_token_is_private_and_reused(tmp_path: Path) -> None:
    first = load_or_create_token("", tmp_path / "data")
    assert first.generated and first.created_now and len(first.value) >= 24
    mode = stat.S_IMODE((tmp_path / "data" / "console_token").stat().st_mode)
    assert mode == 0o600
    again = load_or_create_token("", tmp_path / "data")
    assert again.value == first.value and again.generated and not again.created_now


def test_configured_token_wins_and_writes_nothing(tmp_path: Path) -> None:
    token = load_or_create_token("from-env", tmp_path / "data")
    assert (token.value, token.generated, token.created_now) == ("from-env", False, False)
    assert not (tmp_path / "data").exists()


@pytest.mark.parametrize(
    ("host", "configured", "created", "expect_token", "expect_warning"),
    [
        ("127.0.0.1", False, True, True, False),  # first start: token printed once
        ("127.0.0.1", False, False, False, False),  # later starts: never printed again
        ("0.0.0.0", False, False, False, True),  # exposed with a generated token: warn
        ("0.0.0.0", True, False, False, False),  # exposed, token configured: fine
        ("::1", False, False, False, False),
        ("localhost", False, False, False, False),
    ],
)
def test_startup_lines(
    tmp_path: Path,
    host: str,
    configured: bool,
    created: bool,
    expect_token: bool,
    expect_warning: bool,
) -> None:
    if configured:
        token = load_or_create_token("set-by-operator", tmp_path)
    else:
        token = load_or_create_token("", tmp_path)
        if not created:
            token = load_or_create_token("", tmp_path)
    lines = startup_lines(token, host, "http://x/console/")
    text = "\n".join(message for _, message in lines)
    assert "http://x/console/" in lines[0][1]
    assert (token.value in text) is expect_token
    assert ("PALLAS_CONSOLE_TOKEN" in text) is expect_warning


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("::1", True), ("localhost", True), ("0.0.0.0", False),
     ("192.168.1.2", False), ("", False), ("example.com", False)],
)  # fmt: skip
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def make_auth(token: str = "tok") -> tuple[ConsoleAuth, FakeClock]:
    clock = FakeClock()
    return ConsoleAuth(token, MemoryStateStore(clock), clock.now), clock


async def test_session_cookie_round_trip_tamper_and_expiry() -> None:
    auth, clock = make_auth()
    cookie = auth.new_session()
    sid = await auth.session_id(cookie)
    assert sid is not None
    assert await auth.session_id(cookie[:-1] + ("0" if cookie[-1] != "0" else "1")) is None
    assert await auth.session_id("garbage") is None and await auth.session_id(None) is None
    other, _ = make_auth("another-token")
    assert await other.session_id(cookie) is None  # a new token logs everybody out
    clock.advance(SESSION_TTL_S + 1)
    assert await auth.session_id(cookie) is None


async def test_a_logged_out_cookie_is_refused_until_it_would_expire() -> None:
    """Issue 28: logging out only deleted the browser's cookie; a saved copy still worked."""
    auth, clock = make_auth()
    kept, other = auth.new_session(), auth.new_session()
    await auth.revoke(kept)
    assert await auth.session_id(kept) is None
    assert await auth.session_id(other) is not None, "only that session is logged out"
    clock.advance(SESSION_TTL_S + 1)
    assert await auth.session_id(kept) is None
    await auth.revoke("garbage")  # nothing to revoke: no error


async def test_csrf_token_is_bound_to_the_session() -> None:
    auth, _ = make_auth()
    a = await auth.session_id(auth.new_session())
    b = await auth.session_id(auth.new_session())
    assert a and b and a != b
    assert auth.csrf_ok(a, auth.csrf_token(a))
    assert not auth.csrf_ok(a, auth.csrf_token(b))
    assert not auth.csrf_ok(a, None) and not auth.csrf_ok(a, "")


def test_token_comparison() -> None:
    auth, _ = make_auth("s3cret")
    assert auth.token_matches("s3cret") and auth.token_matches(" s3cret\n")
    assert not auth.token_matches("s3cre") and not auth.token_matches("")


async def test_login_failures_block_then_expire() -> None:
    auth, clock = make_auth()
    for _ in range(LOGIN_MAX_FAILURES):
        assert not await auth.login_blocked("1.2.3.4")
        await auth.record_failure("1.2.3.4")
    assert await auth.login_blocked("1.2.3.4")
    assert not await auth.login_blocked("5.6.7.8")  # per client address
    clock.advance(301)
    assert not await auth.login_blocked("1.2.3.4")
