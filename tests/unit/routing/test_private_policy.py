"""Who the bot answers in private: `admit_private`, one row per case an operator meets."""

from __future__ import annotations

import pytest

from pallas.config import PrivateConfig
from pallas.routing.private_policy import admit_private

SUPERUSERS = frozenset({10_001})
DEFAULTS = PrivateConfig()
OPEN = PrivateConfig(group_temp=True, strangers=True)
CLOSED = PrivateConfig(friends=False)
BLOCKING = PrivateConfig(strangers=True, blocklist=[777, 10_001])


@pytest.mark.parametrize(
    ("sub_type", "user", "config", "allowed", "reason"),
    [
        # the defaults: friends only
        ("friend", 42, DEFAULTS, True, "friend"),
        ("group", 42, DEFAULTS, False, "group_temp_off"),
        ("other", 42, DEFAULTS, False, "strangers_off"),
        ("", 42, DEFAULTS, False, "strangers_off"),  # an unknown sub_type is a stranger
        # the operator opens temp sessions and strangers
        ("group", 42, OPEN, True, "group_temp"),
        ("other", 42, OPEN, True, "stranger"),
        # friends switched off
        ("friend", 42, CLOSED, False, "friends_off"),
        # the blocklist wins over every sub_type…
        ("friend", 777, BLOCKING, False, "blocklisted"),
        ("other", 777, BLOCKING, False, "blocklisted"),
        ("other", 778, BLOCKING, True, "stranger"),
        # …but a superuser is always answered (the admin commands work in private)
        ("other", 10_001, DEFAULTS, True, "superuser"),
        ("friend", 10_001, CLOSED, True, "superuser"),
        ("friend", 10_001, BLOCKING, True, "superuser"),
    ],
)
def test_admit_private(sub_type, user, config, allowed, reason):
    verdict = admit_private(sub_type, user, config, SUPERUSERS)
    assert (verdict.allowed, verdict.reason) == (allowed, reason)
