import pytest

from pallas.core.cq import normalise_segments, parse_cq, to_cq


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("你好", [("text", {"text": "你好"})]),
        ("[CQ:at,qq=123] 早", [("at", {"qq": "123"}), ("text", {"text": " 早"})]),
        ("[CQ:face,id=14]", [("face", {"id": "14"})]),
        ("a&#91;b&#93;&amp;", [("text", {"text": "a[b]&"})]),
        (
            "[CQ:image,file=x.jpg,url=https://q.qq.com/a?b=1&amp;c=2]",
            [("image", {"file": "x.jpg", "url": "https://q.qq.com/a?b=1&c=2"})],
        ),
        ("[CQ:text,text=a&#44;b]", [("text", {"text": "a,b"})]),
        # broken codes stay as literal text: nothing the member wrote is lost
        ("前[CQ:image,file=", [("text", {"text": "前[CQ:image,file="})]),
        ("[CQ:]x", [("text", {"text": "[CQ:]x"})]),
        ("", []),
    ],
)
def test_parse_cq(raw: str, expected: list) -> None:
    assert [(s["type"], s["data"]) for s in parse_cq(raw)] == expected


def test_round_trip_keeps_special_characters() -> None:
    segments = [
        {"type": "text", "data": {"text": "[不是码],&"}},
        {"type": "image", "data": {"file": "a,b.jpg"}},
    ]
    assert parse_cq(to_cq(segments)) == segments


def test_malformed_segments_are_kept_and_reported() -> None:
    segments, problems = normalise_segments(
        [{"type": "text", "data": {"text": "ok"}}, "junk", {"data": {}}, {"type": "x", "data": 3}]
    )
    assert [s["type"] for s in segments] == ["text", "unknown", "unknown", "unknown"]
    assert "junk" in segments[1]["data"]["raw"]
    assert len(problems) == 3


def test_non_list_message_is_reported() -> None:
    segments, problems = normalise_segments(42)
    assert segments == [] and problems
