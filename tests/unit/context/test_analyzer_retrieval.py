"""`pallas context` shows what retrieval chose, per source and block, and the ids per section."""

from __future__ import annotations

from pallas.context.analyzer import render_snapshot


def snapshot() -> dict:
    chosen = {
        "candidates": [{"id": "mem:3"}, {"id": "mem:9"}, {"id": "mem:12"}],
        "chosen": ["mem:3"],
        "fallback": ["mem:9"],
        "dropped_by_similarity": ["mem:12"],
    }
    return {
        "turn_id": "t1",
        "group_id": 1,
        "data": {
            "decision": {"outcome": "reply", "reason": "rule_reply"},
            "sections": [
                {
                    "id": "person_facts",
                    "chars": 20,
                    "tokens": 10,
                    "source": "person_facts",
                    "memory_ids": ["mem:3", "mem:9"],
                },
                {
                    "id": "group_timeline",
                    "chars": 50,
                    "tokens": 30,
                    "source": "group_timeline",
                    "memory_ids": ["101", "102"],
                },
            ],
            "retrieval": {
                "traces": {
                    "memory": {"skipped": "skipped_short_social_turn"},
                    "person_facts": {"scopes": ["group:1:1"], **chosen},
                    "knowledge": {
                        "knowledge": {"candidates": [], "chosen": []},
                        "worldbook": {
                            "activated": [{"id": "rhodes.1"}],
                            "budget": [40, 1000],
                            "skipped": [
                                {"id": "rhodes.2", "reason": "budget"},
                                {"id": "rhodes.3", "reason": "no_primary_match"},
                                {"id": "rhodes.4", "reason": "cooldown"},
                            ],
                        },
                    },
                    "group_learning": {"examples": 2},
                },
                "failed": ["old_topics"],
            },
        },
    }


def test_retrieval_section_lists_chosen_ids_skips_and_failures() -> None:
    text = render_snapshot(snapshot(), with_request=False)
    lines = text.split("retrieval:\n", 1)[1].splitlines()
    assert "  memory: skipped (skipped_short_social_turn)" in lines
    assert "  person_facts: chosen mem:3 + fallback mem:9 (of 3 scored, 1 dropped)" in lines
    assert "  knowledge.knowledge: nothing chosen (of 0 scored, 0 dropped)" in lines
    assert "  knowledge.worldbook: activated rhodes.1 (tokens [40, 1000])" in lines
    assert "  knowledge.worldbook: not injected rhodes.2 (budget), rhodes.4 (cooldown)" in lines
    assert "  group_learning: examples" in lines
    assert "  failed sources: old_topics" in lines
    assert "  section person_facts ← mem:3, mem:9" in lines
    assert not any("group_timeline ←" in line for line in lines)


def test_no_retrieval_data_adds_nothing() -> None:
    bare = {"data": {"decision": {}, "sections": []}}
    assert "retrieval:" not in render_snapshot(bare, with_request=False)


def test_model_tool_calls_are_listed_with_their_reasons() -> None:
    snap = snapshot()
    snap["data"]["tool"] = {
        "model_tools": {
            "offered": ["weather__weather"],
            "refused": [["weather.radar", "audience"]],
            "calls": [
                {
                    "tool": "weather.weather",
                    "args": '{"city": "北京"}',
                    "ok": True,
                    "reason": "capped",
                    "chars": 5000,
                    "ms": 41.5,
                },
                {
                    "tool": "weather.weather",
                    "args": "{",
                    "ok": False,
                    "reason": "arguments_bad_json",
                    "chars": 0,
                    "ms": 0.0,
                },
            ],
        }
    }
    text = render_snapshot(snap, with_request=False)
    assert "model tools: offered weather__weather; refused weather.radar (audience)" in text
    assert '  call weather.weather {"city": "北京"} → ok (capped, 5000 chars, 41.5 ms)' in text
    assert "  call weather.weather { → failed (arguments_bad_json, 0 chars, 0.0 ms)" in text
    assert "tool: None" not in text  # no local tool ran
