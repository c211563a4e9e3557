import pytest
from pydantic import ValidationError

from pallas.context.chat_prompt import ChatPromptAssembler
from pallas.context.config import ContextConfig
from pallas.context.pipeline import PromptSection
from pallas.context.prompt_overrides import (
    PromptOverride,
    PromptOverrideConfig,
    apply_prompt_overrides,
    load_chat_prompt_overrides,
)

BASE = (
    PromptSection("guard", "【注入护栏】\n- g", protected=True, trusted=True),
    PromptSection("persona", "你是帕拉斯", protected=True),
    PromptSection("knowledge", "【相关知识参考】\n- 旧知识", memory_ids=("k1",)),
    PromptSection("turn_policy", "【本轮策略】\n- 严肃度：闲聊"),
)


def texts(sections):
    return {s.section_id: s.text for s in sections}


@pytest.mark.parametrize(
    ("override", "section_id", "expected_text", "outcome"),
    [
        (
            PromptOverride("knowledge", "replace", "【本群设定】\n- 群规：不刷屏"),
            "knowledge",
            "【本群设定】\n- 群规：不刷屏",
            "replaced",
        ),
        (
            PromptOverride("knowledge", "append", "- 新知识"),
            "knowledge",
            "【相关知识参考】\n- 旧知识\n- 新知识",
            "appended",
        ),
        (
            PromptOverride("persona", "append", "说话多用颜文字"),
            "persona",
            "你是帕拉斯\n说话多用颜文字",
            "appended",
        ),
        (
            PromptOverride("memory", "replace", "【相关群内记忆】\n- 固定记忆"),
            "memory",
            "【相关群内记忆】\n- 固定记忆",
            "created",
        ),
    ],
)
def test_replace_append_create(override, section_id, expected_text, outcome):
    sections, applied = apply_prompt_overrides(BASE, [override])
    assert texts(sections)[section_id] == expected_text
    assert applied[0].outcome == outcome
    changed = next(s for s in sections if s.section_id == section_id)
    assert changed.source.endswith("override:config")


def test_replace_drops_memory_provenance_of_replaced_text():
    sections, _ = apply_prompt_overrides(BASE, [PromptOverride("knowledge", "replace", "x")])
    assert next(s for s in sections if s.section_id == "knowledge").memory_ids == ()


def test_disable_optional_section_but_not_protected_ones():
    sections, applied = apply_prompt_overrides(
        BASE,
        [
            PromptOverride("turn_policy", "disable"),
            PromptOverride("persona", "disable"),
            PromptOverride("guard", "replace", "nothing"),
            PromptOverride("mid_term", "disable"),
        ],
    )
    ids = [s.section_id for s in sections]
    assert "turn_policy" not in ids
    assert "persona" in ids and "guard" in ids
    assert texts(sections)["guard"] == "【注入护栏】\n- g"
    assert [a.outcome for a in applied] == ["disabled", "refused", "refused", "absent"]


def test_appended_headers_survive_assembly_but_user_fakes_do_not():
    override = PromptOverride("knowledge", "append", "【群内梗】\n- 快了=确实可以")
    sections, _ = apply_prompt_overrides(BASE, [override])
    built = ChatPromptAssembler(sections).section_texts["knowledge"]
    assert "【相关知识参考】" in built and "【群内梗】" in built


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"section_id": "nope", "text": "x"}, "unknown section_id"),
        ({"section_id": "guard", "mode": "replace", "text": "x"}, "only be appended"),
        ({"section_id": "guard", "mode": "disable"}, "only be appended"),
        ({"section_id": "persona", "mode": "disable"}, "protected"),
        ({"section_id": "memory", "mode": "replace", "text": "  "}, "non-empty"),
        ({"section_id": "memory", "text": "x", "typo": 1}, "Extra inputs"),
    ],
)
def test_config_validation(payload, message):
    with pytest.raises(ValidationError, match=message):
        PromptOverrideConfig(**payload)


def test_load_filters_by_bot_and_group():
    config = ContextConfig(
        prompt_overrides=[
            {"section_id": "knowledge", "text": "all"},
            {"section_id": "memory", "text": "g1", "group_ids": [1]},
            {"section_id": "mid_term", "mode": "disable", "bot_ids": [9]},
        ]
    )
    assert [o.section_id for o in load_chat_prompt_overrides(5, 1, config)] == [
        "knowledge",
        "memory",
    ]
    assert [o.section_id for o in load_chat_prompt_overrides(9, 2, config)] == [
        "knowledge",
        "mid_term",
    ]
    assert load_chat_prompt_overrides(9, 2, config.prompt_overrides)[1].mode == "disable"
