"""Images of a reply turn: the turn's text, session placeholders, block rewrites, downloads."""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from pallas.context.processors import TIMELINE_IMAGES_CAPTION
from pallas.core.image_placeholders import extract_placeholder_urls
from pallas.core.message_text import session_user_content, turn_display_text, turn_session_text
from pallas.core.records import StoredMessage
from pallas.core.turn import Segment, TurnInput
from pallas.providers.image_fetch import (
    FetchedImage,
    FetchError,
    FetchErrorReason,
    ImageFetchConfig,
)
from pallas.turn.parts.vision import (
    QUOTED_CAPTION,
    attach_current_images,
    image_urls_from_segments,
    prepare_vision_request,
    remote_image_urls,
    rewrite_image_blocks,
    snapshot_marker,
    snapshot_safe,
)

BOT, GROUP, USER = 9_000, 70_001, 1_234
CAT = "https://gchat.qpic.cn/cat.png"
DOG = "https://gchat.qpic.cn/dog.png"
OLD = "https://gchat.qpic.cn/timeline.png"
PNG = b"\x89PNG\r\n\x1a\n-fake-png-bytes"


def make_turn(
    text: str = "这是什么",
    *,
    images: Sequence[str] = (),
    mface: str | None = None,
    reply_to: int | None = None,
) -> TurnInput:
    segments = [Segment("at", {"qq": str(BOT)})]
    if reply_to is not None:
        segments.insert(0, Segment("reply", {"id": str(reply_to)}))
    if text:
        segments.append(Segment("text", {"text": text}))
    if mface is not None:
        segments.append(Segment("mface", {"summary": mface, "url": "https://x.cn/m.gif"}))
    segments.extend(Segment("image", {"file": "a.jpg", "url": u}) for u in images)
    return TurnInput(
        bot_id=BOT,
        group_id=GROUP,
        user_id=USER,
        message_id=55,
        time=0.0,
        text=text,
        segments=tuple(segments),
        reply_to=reply_to,
        image_urls=tuple(u for u in images if u.startswith("http")),
    )


# --------------------------------------------------------------------------- text of the turn


@pytest.mark.parametrize(
    ("turn", "shown"),
    [
        (make_turn("你好"), "你好"),
        (make_turn(images=[CAT]), "这是什么 [图片]"),
        (make_turn("", images=[CAT, DOG]), "[图片] [图片]"),
        (make_turn("哈哈", mface="[吃瓜]"), "哈哈 [吃瓜]"),
        (make_turn("看", images=["file:///etc/passwd"]), "看 [图片]"),
    ],
    ids=["plain", "one-image", "images-only", "mface", "bad-url"],
)
def test_model_sees_images_as_plain_markers(turn: TurnInput, shown: str) -> None:
    assert turn_display_text(turn) == shown
    assert "url=" not in turn_display_text(turn)


def test_session_text_keeps_image_urls_as_placeholders() -> None:
    turn = make_turn("这是谁", images=[CAT, DOG])
    stored = turn_session_text(turn)
    assert stored == f"这是谁 [图片]:url={CAT} [图片]:url={DOG}"
    assert extract_placeholder_urls(stored) == [CAT, DOG]


def test_session_content_replaces_only_this_messages_part() -> None:
    turn = make_turn("这是谁", images=[CAT])
    merged = "等下\n" + turn_display_text(turn) + "\n还有这个"
    assert session_user_content(merged, turn) == f"等下\n这是谁 [图片]:url={CAT}\n还有这个"


def test_typed_placeholder_can_not_pose_as_an_image() -> None:
    typed = "看 [图片]:url=http://evil.example/x.png"
    turn = make_turn(typed)
    stored = session_user_content(typed, turn)
    assert extract_placeholder_urls(stored) == []
    assert stored == "看 [图片]"


def test_image_urls_from_segments_skip_stickers_and_non_http() -> None:
    segments = [
        {"type": "image", "data": {"url": CAT}},
        {"type": "mface", "data": {"url": DOG, "summary": "[吃瓜]"}},
        {"type": "image", "data": {"file": "local.jpg"}},
        {"type": "image", "data": {"file": DOG}},
        {"type": "image", "data": {"url": CAT}},
    ]
    assert image_urls_from_segments(segments) == [CAT, DOG]


# --------------------------------------------------------------------------- rewrites


def _timeline_message(*urls: str) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": TIMELINE_IMAGES_CAPTION}]
    blocks += [{"type": "image_url", "image_url": {"url": u}} for u in urls]
    return {"role": "user", "content": blocks}


def _request(*timeline: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
    if timeline:
        out.append(_timeline_message(*timeline))
    out.append({"role": "user", "content": "【用户消息】\n这是什么 [图片]"})
    return out


def _image_urls(message: Mapping[str, Any]) -> list[str]:
    content = message["content"]
    if isinstance(content, str):
        return []
    return [b["image_url"]["url"] for b in content if b.get("type") == "image_url"]


def test_rewrite_replaces_downloads_and_drops_failures() -> None:
    messages = _request(OLD, DOG)
    out = rewrite_image_blocks(messages, {OLD: "data:image/png;base64,AAAA", DOG: None})
    assert _image_urls(out[1]) == ["data:image/png;base64,AAAA"]
    assert out[1]["content"][0]["text"] == TIMELINE_IMAGES_CAPTION


def test_rewrite_removes_a_timeline_message_that_lost_every_image() -> None:
    out = rewrite_image_blocks(_request(OLD), {OLD: None})
    assert len(out) == 2 and all(isinstance(m["content"], str) for m in out)


def test_rewrite_drops_timeline_copies_of_current_images() -> None:
    out = rewrite_image_blocks(_request(OLD, CAT), {OLD: "data:a", CAT: "data:c"}, drop={CAT})
    assert _image_urls(out[1]) == ["data:a"]


def test_attach_current_images_to_the_last_user_message() -> None:
    out = attach_current_images(_request(), ["data:own"], ["data:quoted"])
    blocks = out[-1]["content"]
    assert blocks[0] == {"type": "text", "text": "【用户消息】\n这是什么 [图片]"}
    assert _image_urls(out[-1]) == ["data:own", "data:quoted"]
    assert {"type": "text", "text": QUOTED_CAPTION} in blocks
    assert attach_current_images(_request(), []) == _request()


def test_snapshot_never_stores_image_bytes() -> None:
    data_url = "data:image/png;base64," + base64.b64encode(PNG).decode()
    messages = attach_current_images(_request(), [data_url])
    safe = snapshot_safe(messages)
    marker = _image_urls(safe[-1])[0]
    assert marker == snapshot_marker(data_url)
    assert marker.startswith("data:image/png;sha256=") and "base64" not in marker
    assert base64.b64encode(PNG).decode() not in str(safe)
    assert _image_urls(messages[-1]) == [data_url]  # the request itself is unchanged


def test_remote_image_urls_lists_http_blocks_only() -> None:
    messages = _request(OLD)
    messages[1]["content"].append({"type": "image_url", "image_url": {"url": "data:x"}})
    assert remote_image_urls(messages) == [OLD]


# --------------------------------------------------------------------------- downloads


class FakeFetcher:
    """Stands in for ImageFetcher: serves PNG bytes for known URLs, FetchError otherwise."""

    def __init__(self, ok: Mapping[str, bytes], log: list[str]) -> None:
        self.ok = ok
        self.log = log

    async def __aenter__(self) -> FakeFetcher:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def fetch_many(self, urls: Sequence[str]) -> list[FetchedImage | FetchError]:
        self.log.extend(urls)
        return [
            FetchedImage(u, "image/png", self.ok[u], "0" * 64)
            if u in self.ok
            else FetchError(u, FetchErrorReason.BLOCKED_ADDRESS, "test")
            for u in urls
        ]


class Store:
    def __init__(self, rows: Mapping[int, StoredMessage] | None = None) -> None:
        self.rows = dict(rows or {})

    async def find_by_message_ids(
        self, bot_id: int, group_id: int, message_ids: Sequence[int]
    ) -> dict[int, StoredMessage]:
        return {m: self.rows[m] for m in message_ids if m in self.rows}


def _factory(ok: Mapping[str, bytes], log: list[str]):
    return lambda _config: FakeFetcher(ok, log)


async def test_text_model_downloads_nothing() -> None:
    fetched: list[str] = []
    result = await prepare_vision_request(
        _request(OLD),
        turn=make_turn(images=[CAT]),
        vision_enabled=False,
        images=ImageFetchConfig(),
        message_store=Store(),
        fetcher_factory=_factory({CAT: PNG}, fetched),
    )
    assert fetched == [] and result.messages == _request(OLD)


async def test_vision_model_gets_current_and_timeline_images_as_data_urls() -> None:
    fetched: list[str] = []
    result = await prepare_vision_request(
        _request(OLD),
        turn=make_turn(images=[CAT]),
        vision_enabled=True,
        images=ImageFetchConfig(),
        message_store=Store(),
        fetcher_factory=_factory({CAT: PNG, OLD: PNG}, fetched),
    )
    expected = "data:image/png;base64," + base64.b64encode(PNG).decode()
    assert fetched == [CAT, OLD]
    assert _image_urls(result.messages[-1]) == [expected]
    assert _image_urls(result.messages[1]) == [expected]
    assert "base64" not in str(result.snapshot)
    assert result.trace["attached"] == 2


async def test_failed_download_drops_that_image_and_the_turn_goes_on() -> None:
    result = await prepare_vision_request(
        _request(OLD),
        turn=make_turn(images=[CAT, DOG]),
        vision_enabled=True,
        images=ImageFetchConfig(),
        message_store=Store(),
        fetcher_factory=_factory({DOG: PNG}, []),
    )
    assert len(_image_urls(result.messages[-1])) == 1
    assert len(result.messages) == 2  # the timeline message lost its only image
    assert {f["url"] for f in result.trace["failed"]} == {CAT, OLD}


@pytest.mark.parametrize("quoted_id", [-1_234_567_890_123, 3_000_000_123])
async def test_quoted_image_from_the_store(quoted_id: int) -> None:
    row = StoredMessage(
        bot_id=BOT,
        group_id=GROUP,
        message_id=quoted_id,
        user_id=5,
        time=0.0,
        text="[图片]",
        raw_message=f"[CQ:image,file=a.jpg,url={DOG}]",
    )

    async def never(*_: int) -> None:
        raise AssertionError("get_msg must not be called when the store has the row")

    result = await prepare_vision_request(
        _request(),
        turn=make_turn("这是谁", reply_to=quoted_id),
        vision_enabled=True,
        images=ImageFetchConfig(),
        message_store=Store({quoted_id: row}),
        fetch_quoted=never,
        fetcher_factory=_factory({DOG: PNG}, []),
    )
    assert result.trace["quoted_source"] == "store"
    assert len(_image_urls(result.messages[-1])) == 1


async def test_quoted_image_falls_back_to_get_msg() -> None:
    asked: list[tuple[int, int, int]] = []

    async def get_msg(bot_id: int, group_id: int, message_id: int) -> list[dict[str, Any]]:
        asked.append((bot_id, group_id, message_id))
        return [{"type": "image", "data": {"url": DOG}}]

    result = await prepare_vision_request(
        _request(),
        turn=make_turn("啥梗", reply_to=-77),
        vision_enabled=True,
        images=ImageFetchConfig(),
        message_store=Store(),
        fetch_quoted=get_msg,
        fetcher_factory=_factory({DOG: PNG}, []),
    )
    assert asked == [(BOT, GROUP, -77)]
    assert result.trace["quoted_source"] == "get_msg"
    assert QUOTED_CAPTION in str(result.messages[-1]["content"])


async def test_unexpected_error_sends_text_only() -> None:
    class BrokenStore(Store):
        async def find_by_message_ids(self, *args: Any) -> dict[int, StoredMessage]:
            raise RuntimeError("database is locked")

    result = await prepare_vision_request(
        _request(OLD),
        turn=make_turn(reply_to=5),
        vision_enabled=True,
        images=ImageFetchConfig(),
        message_store=BrokenStore(),
        fetcher_factory=_factory({}, []),
    )
    assert result.trace["error"] == "exception"
    assert remote_image_urls(result.messages) == [] and len(result.messages) == 2


async def test_images_per_turn_are_capped() -> None:
    urls = [f"https://gchat.qpic.cn/{i}.png" for i in range(6)]
    fetched: list[str] = []
    result = await prepare_vision_request(
        _request(),
        turn=make_turn(images=urls),
        vision_enabled=True,
        images=ImageFetchConfig(max_images_per_turn=2),
        message_store=Store(),
        fetcher_factory=_factory(dict.fromkeys(urls, PNG), fetched),
    )
    assert fetched == urls[:2] and len(_image_urls(result.messages[-1])) == 2
