"""The analyzer's 检索来源 card tells an admin, in Chinese, what each source chose and why the
rest was left out (`pallas.web.retrieval_view`)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from pallas.ranking import retrieve
from pallas.web.retrieval_view import block_summary, retrieval_rows, source_lines
from tests.unit.ranking.helpers import NOW, SCOPE, facts


def test_each_source_says_what_it_chose_or_why_it_was_skipped() -> None:
    data = {
        "retrieval": {
            "traces": {
                "memory": {
                    "group_memory": {
                        "chosen": ["mem:3", "mem:9"],
                        "candidates": [1, 2, 3],
                        "dropped_by_threshold": ["mem:1"],
                    },
                    "person_facts": {"chosen": [], "scored": 1, "dropped": {"similarity": 1}},
                },
                "relationship": {"skipped": "skipped_short_social_turn"},
                "knowledge": {"skipped": "some_new_reason"},
                "worldbook": {"entries": {"activated": [{"id": "wb:arknights:3"}]}},
            }
        }
    }
    rows = {row.name: row for row in retrieval_rows(data)}
    assert rows["memory"].label == "记忆"
    assert rows["memory"].lines == (
        "群记忆：选中 2 条（mem:3、mem:9）；评估 3 条；未入选：相关度不够 1 条",
        "人物事实：没有选中；评估 1 条；未入选：与问题不够相近 1 条",
    )
    assert rows["relationship"].lines == ("跳过：简短寒暄，不查长期记忆",)
    assert rows["knowledge"].lines == ("跳过：some_new_reason",)  # an unknown reason as is
    assert rows["worldbook"].lines == ("entries：触发 1 条（wb:arknights:3）",)
    # the whole trace, one tap away
    assert json.loads(rows["memory"].full) == data["retrieval"]["traces"]["memory"]
    assert retrieval_rows({}) == []


def test_a_person_facts_block_says_why_each_fact_was_left_out() -> None:
    """A real trace of the person-facts block: "我老婆叫什么名字" of a member who never told
    it — the fact sharing 名字 is left out as naming nobody asked about, one as not similar
    enough, with the gate the retrieval used."""
    rows = facts("TA喜欢给文件起很长的名字", "TA过年喜欢守岁", "TA老婆叫小芳")
    trace = retrieve("我老婆叫什么名字？", rows, kind="person_facts", now=NOW,
                     allowed_scopes={SCOPE},
                     semantic_scores={"f0": 0.6, "f1": 0.1, "f2": 0.6}).trace  # fmt: skip
    stored = {**trace.to_dict(), "fallback": [], "embeddings": True,
              "profile": {"facts": 1, "aside": 2}}  # fmt: skip
    assert block_summary(stored) == (
        "选中 1 条（f2）；按语义和字面评估 3 条，相近度门槛 0.43；"
        "未入选：与问题不够相近 1 条、说的是别人，或没提到问的那个人 1 条；"
        "画像里 1 条，另附 2 条「也记得（未必相关）」"
    )


def test_a_block_scored_with_the_question_adapter_says_so() -> None:
    summary = block_summary(
        {"chosen": ["mem:1"], "scored": 3, "embeddings": True, "question_adapter": True}
    )
    assert summary == "选中 1 条（mem:1）；按语义（问句按本地模型的问答权重调整）和字面评估 3 条"
    plain = block_summary(
        {"chosen": [], "scored": 3, "embeddings": True, "question_adapter": False}
    )
    assert plain == "没有选中；按语义和字面评估 3 条"


def test_a_block_without_vectors_and_with_fallback() -> None:
    summary = block_summary(
        {"chosen": ["mem:1"], "fallback": ["mem:2", "mem:3"], "scored": 4, "embeddings": False}
    )
    assert summary == (
        "选中 1 条（mem:1），另补上这位群友的其他 2 条；只按字面（还没有向量）评估 4 条"
    )


def test_odd_traces_do_not_break_the_page() -> None:
    assert source_lines("failed") == ("failed",)
    assert source_lines({}) == ("见下方完整记录",)
    assert source_lines({"pool": 3, "shape": "defaults"}) == ("见下方完整记录",)
    # a learning trace stored before its numbers were recorded: what it has
    assert source_lines({"expression_candidates": 0, "pool": 4, "casual": True}) == (
        "群里的说法：没有相近的，表达池 4 条",
        "回复形状（闲聊）：本群样本还不够，用默认",
    )
    assert source_lines({"expression_candidates": 0, "pool": 0})[0] == "群里的说法：还没学到"
    odd = {"expression_candidates": "2", "shape_segments": 2, "shape_chars": [None, 9]}
    assert source_lines(odd) == ("群里的说法：没有相近的", "回复形状：按本群学到，建议 2 个气泡")
    assert block_summary({"chosen": [], "scored": 0, "gate": {"min_similarity": 0.25}}) == (
        "还没有可选的条目"
    )
    assert source_lines({"worldbook": {"activated": []}}) == ("世界书：没有触发",)
    assert block_summary({"chosen": None, "dropped": {"mystery": 2}}) == (
        "没有选中；评估 0 条；未入选：mystery 2 条"
    )


# the keys a trace has, so that generated traces reach every branch of the summary
_KEYS = st.sampled_from(
    ["chosen", "scored", "dropped", "gate", "min_similarity", "fallback", "profile", "facts",
     "aside", "skipped", "activated", "embeddings", "candidates", "dropped_by_similarity",
     "similarity", "memory", "x", "expression_candidates", "expression_matched", "pool",
     "observed", "reflection", "shape_turns", "shape_segments", "shape_chars", "casual",
     "blocked_phrases", "question_adapter"]
)  # fmt: skip
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=6),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(traces=st.dictionaries(st.text(max_size=6), _JSON, max_size=4))
def test_any_stored_trace_renders_as_lines(traces: dict[str, object]) -> None:
    """An old or damaged snapshot never breaks the analyzer page: every source still gets
    its row, its lines and its JSON."""
    rows = retrieval_rows({"retrieval": {"traces": traces}})
    assert [r.name for r in rows] == [str(n) for n in traces]
    assert all(r.lines and all(isinstance(line, str) for line in r.lines) for r in rows)
