"""Line keys: the same for every account's copy of a group line, distinct for two lines."""

from __future__ import annotations

from typing import Any

import pytest

from pallas.core.lines import Occurrences, line_fingerprint

G, U, T = 62_000_001, 31_001, 1_764_800_000.0


def text(value: str) -> list[dict[str, Any]]:
    return [{"type": "text", "data": {"text": value}}]


def image(file: str, url: str) -> list[dict[str, Any]]:
    return [{"type": "image", "data": {"file": file, "url": url}}]


def quote(message_id: int, value: str) -> list[dict[str, Any]]:
    return [{"type": "reply", "data": {"id": str(message_id)}}, *text(value)]


@pytest.mark.parametrize(
    ("first", "second", "same"),
    [
        ((G, U, T, text("早")), (G, U, T, text("早")), True),
        # the time as QQ stamps it (whole seconds); a float copy of the same second
        ((G, U, T, text("早")), (G, U, T + 0.4, text("早")), True),
        # per-account parts: the quoted message's id, a picture's signed download url
        ((G, U, T, quote(101, "对")), (G, U, T, quote(500_101, "对")), True),
        ((G, U, T, image("ab.jpg", "https://x/?rk=1")), (G, U, T, image("ab.jpg", "u2")), True),
        # anything a member would notice is a different line
        ((G, U, T, text("早")), (G, U, T, text("早！")), False),
        ((G, U, T, text("早")), (G, U + 1, T, text("早")), False),
        ((G, U, T, text("早")), (G + 1, U, T, text("早")), False),
        ((G, U, T, text("早")), (G, U, T + 1, text("早")), False),
        ((G, U, T, image("ab.jpg", "u")), (G, U, T, image("cd.jpg", "u")), False),
        ((G, U, T, quote(101, "对")), (G, U, T, text("对")), False),
    ],
)
def test_fingerprint(first: tuple[Any, ...], second: tuple[Any, ...], same: bool) -> None:
    assert (line_fingerprint(*first) == line_fingerprint(*second)) is same


def test_two_identical_lines_in_one_second_get_two_keys_the_same_for_every_account() -> None:
    occurrences = Occurrences()
    a, b = 900_001, 900_002
    keys_a = [occurrences.key_for(a, G, U, T, text("+1"), now=T) for _ in range(2)]
    keys_b = [occurrences.key_for(b, G, U, T, text("+1"), now=T + 0.2) for _ in range(2)]
    assert keys_a[0] != keys_a[1]
    assert keys_a == keys_b


def test_a_copy_after_the_window_counts_from_one_again() -> None:
    occurrences = Occurrences(window_s=60.0)
    first = occurrences.key_for(1, G, U, T, text("+1"), now=T)
    assert occurrences.key_for(1, G, U, T, text("+1"), now=T + 61) == first
