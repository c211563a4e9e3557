"""StateStore keys keep their shapes (a Redis shared across versions relies on them)."""

from __future__ import annotations

import pytest

from pallas.core import state_keys as k


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        (k.merge_parked(1, 2, 3), "merge:1:2:3"),
        (k.merge_lines(1, 2, 3), "lines:1:2:3"),
        (k.freshness("latest", 1, 2, 3), "fresh:latest:1:2:3"),
        (k.bot_reply(1, 2, 9), "botreply:1:2:9"),
        (k.bot_reply_index(1), "botreply-index:1"),
        (k.upload(1, 2, 3), "upload:1:2:3"),
        (k.sticker_sent(1, 2, 9), "sticker:sent:1:2:9"),
        (k.learning_generation(2), "learning:gen:2"),
        (k.memory_extraction("lock", 1, 2), "memory:extract:lock:1:2"),
        (k.memory_extraction("lock", 1, 0, 3), "memory:extract:lock:1:p3"),
        (k.worldbook_state(1, 2), "worldbook:state:1:2"),
        (k.worldbook_turn(1, 2), "worldbook:turn:1:2"),
        (k.session_summary("lock", 1, 2, 3), "session_summary:lock:1:2:3"),
        # routing (RouteKeys): group scope g<group>, private chat p<user>
        (k.RouteKeys.of(1, 2).key("last_turn_at"), "route:1:g2:last_turn_at"),
        (k.RouteKeys.of(1, 0, 7).key("pending"), "route:1:p7:pending"),
        (k.RouteKeys.of(1, 2).seen(9), "route:1:g2:seen:9"),
        (k.RouteKeys.of(1, 2).turn_after(None), "route:1:g2:turn_after:none"),
        (k.RouteKeys.of(1, 2).turn_after(12.5), "route:1:g2:turn_after:12.5"),
        (k.RouteKeys.of(1, 2).unprompted("2026-12-01"), "route:1:g2:unprompted:2026-12-01"),
        (k.RouteKeys.of(1, 2).in_flight(3), "route:1:g2:inflight:3"),
        (k.RouteKeys.of(1, 2).in_flight(), "route:1:g2:inflight:"),
        # cost guard
        (k.cost_use("2026-12-01", "1:2", "chat", "calls"), "cost:use:2026-12-01:1:2:chat:calls"),
        (
            k.cost_use("2026-12-01", "all", "vision", "tokens"),
            "cost:use:2026-12-01:all:vision:tokens",
        ),
        (k.cost_seeded("2026-12-01", "all"), "cost:seeded:2026-12-01:all"),
        (k.cost_limited("2026-12-01", "1:2"), "cost:limited:2026-12-01:1:2"),
        (k.cost_limited_members("2026-12-01", "1:2"), "cost:limited_members:2026-12-01:1:2"),
        (k.cost_once("d", k.cost_warning(None, "deployment")), "cost:once:d:warn:deployment"),
        (k.cost_once("d", k.cost_warning("1:2", "group:chat")), "cost:once:d:warn:1:2:group:chat"),
        (k.cost_once("d", k.cost_trip("1:2")), "cost:once:d:trip:1:2"),
        (k.cost_notices("2026-12-01"), "cost:notices:2026-12-01"),
        (k.cost_member(3), "cost:member:3"),
        (k.cost_scope(2), "group:2"),
        (k.cost_conversation("d", 3), "cost:conversation:d:3"),
        (k.answer_claim(2, "ab12:1"), "answer:2:ab12:1"),
        (k.kb_turn(1, 2), "kb:turn:1:2"),
        (k.memory_generation("group:1:2"), "memory:gen:group:1:2"),
        (k.LEARNING_SWEEP_LOCK, "learning:sweep_lock"),
        (k.console_login_failures("1.2.3.4"), "console:login_failures:1.2.3.4"),
    ],
)
def test_key_shapes(key: str, expected: str) -> None:
    assert key == expected


def test_every_key_belongs_to_a_registered_namespace_and_prefixes_are_unique() -> None:
    prefixes = [n.prefix for n in k.NAMESPACES]
    assert len(prefixes) == len(set(prefixes))
    built = [
        k.merge_parked(1, 2, 3),
        k.freshness("answered", 1, 2, 3),
        k.bot_reply_index(1),
        k.sticker_sent(1, 2, 3),
        k.memory_extraction("pending", 1, 2),
        k.session_summary("x", 1, 2, 3),
        k.RouteKeys.of(1, 2).key("decisions"),
        k.cost_member(3),
        k.answer_claim(2, "ab12:1"),
        k.kb_turn(1, 2),
    ]
    for key in built:
        assert any(key.startswith(prefix + ":") for prefix in prefixes), key


def test_route_ttls_keep_their_margins() -> None:
    assert k.ROUTE_UNPROMPTED_TTL_S == 2 * 86_400
    assert k.route_turn_ttl(0.0) == 61.0 and k.route_turn_ttl(30.0) == 90.0
    assert k.route_recent_lines_ttl(10.0) == 240.0 and k.route_recent_lines_ttl(300.0) == 1200.0
    assert k.COST_DAY_TTL_S == 2 * 86_400


def test_route_keys_reject_an_unregistered_name() -> None:
    with pytest.raises(KeyError):
        k.RouteKeys.of(1, 2).key("nope")
