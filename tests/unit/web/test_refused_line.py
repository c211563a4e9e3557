"""The status page's refused-frames line, table by table."""

from __future__ import annotations

import pytest

from pallas.web.status import refused_kind_zh, refused_line


@pytest.mark.parametrize(
    ("kind", "zh"),
    [
        ("frame:too_large", "超过 4 MiB"),
        ("frame:not_json", "不是 JSON"),
        ("frame:too_deep", "嵌套过深"),
        ("frame:int_too_long", "数字过长"),
        ("frame:not_object", "不是 JSON 对象"),
        ("frame:new_reason", "new_reason"),
        ("event:message:user_id", "message 事件（user_id）"),
        ("event:notice:type", "notice 事件（type）"),
        ("event::", "未知 事件（无法识别）"),
    ],
)
def test_each_kind_reads_in_chinese(kind: str, zh: str) -> None:
    assert refused_kind_zh(kind) == zh


def test_none_refused_says_nothing_and_many_name_the_largest_five() -> None:
    assert refused_line({}) == ""
    counts = {f"frame:k{i}": i for i in range(1, 8)}
    line = refused_line(counts)
    assert line.startswith("启动以来拒收了 28 个 OneBot 帧")
    assert "k7 7，k6 6，k5 5，k4 4，k3 3。" in line and "k2 2" not in line
