"""Which segments are stickers, which pool sticker a marker means, how the model's name is read."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pallas.features.stickers.describe import mface_name, parse_name_answer
from pallas.features.stickers.matching import best_sticker, prompt_names
from pallas.features.stickers.repository import Sticker
from pallas.features.stickers.segments import sticker_sightings

URL = "https://multimedia.nt.qq.com.cn/download?appid=1407&fileid=abc&rkey=xyz"


def _image(**data: object) -> dict:
    return {"type": "image", "data": data}


MFACE = {"emoji_package_id": 235125, "emoji_id": "f1e2", "key": "k", "summary": "[狗头]"}


@pytest.mark.parametrize(
    ("segment", "kind", "key"),
    [
        (_image(file="A1.png", sub_type=1, url=URL), "image", "image:A1.png"),
        (_image(file="A1.png", subType="1", url=URL), "image", "image:A1.png"),
        (_image(file="B2.gif", summary="[动画表情]", url=URL), "image", "image:B2.gif"),
        (_image(file=URL, sub_type=1), "image", "image:multimedia.nt.qq.com.cn/download"),
        ({"type": "mface", "data": MFACE}, "mface", "mface:235125:f1e2"),
    ],
)
def test_sticker_segments(segment: dict, kind: str, key: str) -> None:
    [sighting] = sticker_sightings([segment])
    assert (sighting.kind, sighting.file_key) == (kind, key)
    if kind == "mface":
        assert sighting.face["emoji_id"] == "f1e2" and sighting.summary == "狗头"


@pytest.mark.parametrize(
    "segment",
    [
        {"type": "image", "data": {"file": "photo.jpg", "sub_type": 0, "url": URL}},  # a photo
        {"type": "image", "data": {"file": "photo.jpg", "url": URL}},
        {"type": "image", "data": {"file": "x.png", "sub_type": 1}},  # nothing to download
        {"type": "mface", "data": {"summary": "[狗头]"}},  # no ids
        {"type": "face", "data": {"id": "178"}},  # built-in QQ face: not collected
        {"type": "text", "data": {"text": "[动画表情]"}},
    ],
)
def test_not_stickers(segment: dict) -> None:
    assert sticker_sightings([segment]) == []


def _sticker(
    sid: int, name: str, description: str = "", *, seen: int = 1, banned: bool = False
) -> Sticker:
    return Sticker(
        id=sid, bot_id=1, group_id=2, kind="image", file_key=f"image:{sid}", url="", face={},
        sha256="", mime="image/png", status="described", name=name, description=description,
        banned=banned, seen_count=seen, sent_count=0, attempts=0, first_seen_at=0, last_seen_at=0,
    )  # fmt: skip


POOL = [
    _sticker(1, "狗头", "一只歪头坏笑的柴犬", seen=5),
    _sticker(2, "无语", "翻白眼的猫", seen=3),
    _sticker(3, "开心转圈", "转圈圈的小熊", seen=2),
    _sticker(4, "狗头保命", "戴墨镜的狗", seen=1),
]


@pytest.mark.parametrize(
    ("wanted", "expected", "reason"),
    [
        ("狗头", 1, "exact"),
        ("[狗头]", 1, "exact"),
        ("无语", 2, "exact"),
        ("开心", 3, "contains"),
        ("转圈圈", 3, "in_description"),
        ("翻白眼", 2, "in_description"),
        ("开心的转圈", 3, "similar"),  # bigram overlap with the name
        ("生气", None, "no_match"),
        ("", None, "no_name"),
    ],
)
def test_marker_finds_the_best_sticker_or_none(
    wanted: str, expected: int | None, reason: str
) -> None:
    match = best_sticker(wanted, POOL, min_match=0.34)
    assert (match.sticker.id if match.sticker else None, match.reason) == (expected, reason)


def test_ties_go_to_the_most_sent_and_banned_never_matches() -> None:
    pool = [_sticker(7, "笑哭", seen=1), _sticker(8, "笑哭", seen=9)]
    assert best_sticker("笑哭", pool, min_match=0.34).sticker.id == 8
    banned = [_sticker(8, "笑哭", seen=9, banned=True)]
    assert best_sticker("笑哭", banned, min_match=0.34).sticker is None
    assert best_sticker("笑哭", [], min_match=0.34).reason == "empty_pool"


def test_prompt_names_are_distinct_and_short() -> None:
    pool = [*POOL, _sticker(9, "狗头", seen=1), _sticker(10, "禁用的", banned=True)]
    assert prompt_names(pool, 3) == ("狗头", "无语", "开心转圈")


@pytest.mark.parametrize(
    ("answer", "name", "description"),
    [
        ("狗头｜一只歪头坏笑的柴犬", "狗头", "一只歪头坏笑的柴犬"),
        ("名字：无语|翻白眼的猫", "无语", "翻白眼的猫"),
        ("<think>看看</think>\n开心转圈｜小熊转圈", "开心转圈", "小熊转圈"),
        ("委屈", "委屈", ""),
        ("这是一张非常长的名字不适合当表情名｜随便", "", ""),
        ("", "", ""),
        ("[狗头]｜x", "狗头", "x"),  # brackets cannot forge a marker
    ],
)
def test_vision_answer_parsing(answer: str, name: str, description: str) -> None:
    assert parse_name_answer(answer) == (name, description)


def test_mface_is_named_from_its_summary() -> None:
    mface = replace(_sticker(1, ""), kind="mface")
    assert mface_name(mface) == ""
    assert mface_name(replace(mface, face={"summary": "[吃瓜]"})) == "吃瓜"
    assert mface_name(replace(mface, face={"summary": "[一个特别长的商城表情名字]"})) == ""
