"""Console wording: readable provenance, fixed token-bar colours, members by name, time zones."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

import pytest

from pallas.admin.inspect import _decision_line
from pallas.routing.outcome_text import reason_zh, trigger_zh
from pallas.turn.parts.chat_pipeline import build_chat_pipeline
from pallas.web.log_pages import log_zone
from pallas.web.members import match_member, memory_source_text
from pallas.web.views import (
    processor_zh,
    provenance,
    section_zh,
    snapshot_outcome_zh,
    token_bar,
)

BEIJING_1133 = 1_764_560_000.0  # 2025-12-01 11:33:20 Beijing, 03:33:20 UTC


@pytest.mark.parametrize(
    ("tokens", "members", "shown"),
    [
        (["mem:12", "mem:13", "memory:person_facts"], {},
         [("记忆 ×2", "mem:12 mem:13"), ("记忆块·人物事实", "memory:person_facts")]),
        (["worldbook:方舟#3", "worldbook:方舟#7"], {}, [("世界书「方舟」 ×2",
                                                      "worldbook:方舟#3 worldbook:方舟#7")]),
        (["current:991"], {991: "阿米娅"}, [("本条消息（阿米娅）", "current:991")]),
        (["current:991"], {}, [("本条消息", "current:991")]),
        (["pair:7:1001:5:6", "tool:calc", "ambient:1001:4-5-6"], {},
         [("学到的接话", "pair:7:1001:5:6"), ("工具 calc", "tool:calc"),
          ("群环境摘录", "ambient:1001:4-5-6")]),
        (["", "topic:4", "topic:4"], {}, [("旧话题", "topic:4")]),  # blanks and repeats dropped
        (["1001", "-1999999996", "ambient:1:2"], {},
         [("群消息 ×2", "1001 -1999999996"), ("群环境摘录", "ambient:1:2")]),
    ],
)  # fmt: skip
def test_provenance_reads_as_sources_with_the_ids_on_hover(
    tokens: list[str], members: dict[int, str], shown: list[tuple[str, str]]
) -> None:
    assert [(p.label, p.ids) for p in provenance(tokens, members)] == shown


def test_a_section_keeps_its_colour_from_turn_to_turn() -> None:
    one = {"sections": [{"id": "guard", "tokens": 10}, {"id": "memory", "tokens": 5}]}
    two = {"sections": [{"id": "memory", "tokens": 5}], "messages": [{"role": "user"}]}
    colours_one = {p.key: p.color for p in token_bar(one)}
    colours_two = {p.key: p.color for p in token_bar(two)}
    assert colours_one["memory"] == colours_two["memory"]
    assert colours_one["guard"] != colours_one["memory"]
    assert [p.label for p in token_bar(one)] == ["注入护栏", "记忆"]


CANDIDATES = [(101, "阿米娅", "amiya"), (102, "阿米娅的粉丝", "fan"), (103, "", "Kal'tsit")]


@pytest.mark.parametrize(
    ("text", "candidates", "user_id", "reason"),
    [
        ("", [], None, "empty"),
        ("12345", [], 12345, "qq"),
        ("阿米娅", CANDIDATES[:2], 101, "exact"),  # the exact card wins over a longer one
        ("AMIYA", CANDIDATES[:1], 101, "exact"),
        ("kal", CANDIDATES[2:], 103, "only"),
        ("阿米", CANDIDATES[:2], None, "ambiguous"),
        ("博士", [], None, "none"),
    ],
)
def test_a_member_is_found_by_qq_card_or_nickname(
    text: str, candidates: list[tuple[int, str, str]], user_id: int | None, reason: str
) -> None:
    match = match_member(text, candidates)
    assert (match.user_id, match.reason) == (user_id, reason)
    if reason == "ambiguous":
        assert match.choices == ((101, "阿米娅"), (102, "阿米娅的粉丝"))


@pytest.mark.parametrize(
    ("offset", "label"),
    [(timedelta(hours=8), "UTC+8"), (timedelta(0), "UTC+0"), (timedelta(hours=-5), "UTC-5"),
     (timedelta(hours=5, minutes=30), "UTC+5:30")],
)  # fmt: skip
def test_the_log_page_names_the_zone_of_its_lines(offset: timedelta, label: str) -> None:
    assert log_zone(datetime(2025, 12, 1, tzinfo=timezone(offset))) == label


def test_pallas_why_says_beijing_time_on_a_utc_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    try:
        record = {"time": BEIJING_1133, "user": 5, "text": "在吗", "outcome": "reply",
                  "stage": "decision", "reason": "rule_reply"}  # fmt: skip
        assert _decision_line(record).startswith("11:33:20 ")
    finally:
        monkeypatch.undo()
        time.tzset()


@pytest.mark.parametrize(
    ("section", "shown"),
    [("persona", "人设"), ("persona@before:worldbook_keyed", "人设前·注入"),
     ("group_timeline@after:x", "群聊时间线后·注入"), ("custom", "custom")],
)  # fmt: skip
def test_sections_read_in_chinese(section: str, shown: str) -> None:
    assert section_zh(section) == shown


@pytest.mark.parametrize(
    ("outcome", "shown"),
    [("delivered", "已发送"), ("error:server_error", "失败：模型服务出错（5xx）"),
     ("error:weird", "失败：weird"), ("silent", "模型选择不说")],
)  # fmt: skip
def test_a_turns_outcome_reads_in_chinese(outcome: str, shown: str) -> None:
    assert snapshot_outcome_zh(outcome) == shown


@pytest.mark.parametrize(
    ("stage", "reason", "shown"),
    [
        ("gate", "noise", "闸门：无意义的刷屏（哈哈哈 / 666 之类）"),
        ("stake", "member_thread", "插话判断：两位群友在对话"),
        (
            "low_engagement",
            "rule_pass_low_necessity:roll_miss",
            "不回时的短句：分数不够，不回，没抽中短句，不说话",
        ),
        ("cooldown", "disabled", "冷却：本群已暂停"),
        ("new_stage", "new_code", "new_stage：new_code"),  # unknown codes stay readable as codes
        ("", "noise", "无意义的刷屏（哈哈哈 / 666 之类）"),
    ],
)
def test_routing_reasons_read_in_chinese(stage: str, reason: str, shown: str) -> None:
    assert reason_zh(stage, reason) == shown


def test_triggers_read_in_chinese() -> None:
    assert [trigger_zh(t) for t in ("at", "ambient_disabled", "odd")] == [
        "@ 机器人", "没叫机器人（旁听插话已关）", "odd"
    ]  # fmt: skip


def test_every_pipeline_processor_has_a_chinese_name() -> None:
    order = build_chat_pipeline().reset().order
    assert len(order) > 20
    assert [p for p in order if not processor_zh(p)] == []
    assert processor_zh("kb_placeholders") == "知识库占位符" and processor_zh("persona") == "人设"


@pytest.mark.parametrize(
    ("origin", "source", "shown"),
    [
        ("teach", {"message_ids": [1004], "command": "记住", "by": 51201},
         "群友教的 · 命令「记住」 · 来自 51201 · 消息 1004"),
        ("extract", {"message_ids": [1, 2, 3, 4], "turn_id": "t", "model": "gpt-4o-mini"},
         "从聊天里记下的 · 消息 1、2、3… · 模型 gpt-4o-mini"),
        ("kb_import", {"file": "lore.md", "chunk": 2}, "知识库导入 · 文件 lore.md"),
        ("admin", None, "管理员加的"),
    ],
)  # fmt: skip
def test_a_memorys_source_reads_as_words(
    origin: str, source: dict[str, object] | None, shown: str
) -> None:
    assert memory_source_text(origin, source) == shown


@pytest.mark.parametrize(
    ("stage", "reason", "said"),
    [
        ("gate", "noise", "（gate:noise）："),  # the code stays, its Chinese after it
        ("cost", "member_rate_limited", "（cost:member_rate_limited）："),
    ],
)
def test_pallas_why_says_the_reason_in_chinese_beside_its_code(
    stage: str, reason: str, said: str
) -> None:
    outcome = "cost_limited" if stage == "cost" else "skip"
    record = {"time": BEIJING_1133, "user": 5, "text": "哈哈哈哈", "outcome": outcome,
              "stage": stage, "reason": reason}  # fmt: skip
    line = _decision_line(record)
    assert said in line
    tail = line.split(said, 1)[1]
    assert tail and not tail.isascii(), line  # words, not another code
