import pytest

from pallas.providers.formatter import FormatterConfig, format_messages, merge_content

IMG = {"type": "image_url", "image_url": {"url": "https://x/1.png"}}


def roles(messages):
    return [m["role"] for m in messages]


def test_defaults_merge_system_to_head_and_same_roles():
    out = format_messages(
        [
            {"role": "system", "content": "A"},
            {"role": "user", "content": "u1"},
            {"role": "system", "content": "B"},
            {"role": "user", "content": "u2"},
            {"role": "assistant", "content": "a1"},
        ]
    )
    assert out == [
        {"role": "system", "content": "A\n\nB"},
        {"role": "user", "content": "u1\n\nu2"},
        {"role": "assistant", "content": "a1"},
    ]


def test_rules_can_be_switched_off():
    messages = [
        {"role": "user", "content": "u1"},
        {"role": "system", "content": "S"},
        {"role": "user", "content": "u2"},
    ]
    cfg = FormatterConfig(merge_system_to_head=False, merge_consecutive_same_role=False)
    assert format_messages(messages, cfg) == messages


def test_system_to_user():
    cfg = FormatterConfig(system_to_user=True)
    out = format_messages(
        [{"role": "system", "content": "S"}, {"role": "user", "content": "u"}], cfg
    )
    assert out == [{"role": "user", "content": "S\n\nu"}]


@pytest.mark.parametrize(
    ("in_roles", "out_roles"),
    [
        (["system", "assistant", "user"], ["system", "user", "assistant", "user"]),
        (["user", "user", "user"], ["user", "assistant", "user", "assistant", "user"]),
        (["user", "assistant", "assistant"], ["user", "assistant", "user", "assistant"]),
        (["user", "assistant", "user"], ["user", "assistant", "user"]),
    ],
)
def test_ensure_alternation_inserts_placeholders(in_roles, out_roles):
    cfg = FormatterConfig(ensure_alternation=True, merge_consecutive_same_role=False)
    out = format_messages([{"role": r, "content": r} for r in in_roles], cfg)
    assert roles(out) == out_roles
    inserted = [m["content"] for m in out if m["content"] not in in_roles]
    assert set(inserted) <= {cfg.user_placeholder, cfg.assistant_placeholder}
    assert all(inserted)


def test_merging_keeps_image_blocks_intact():
    out = format_messages(
        [
            {"role": "user", "content": [{"type": "text", "text": "看图"}, IMG]},
            {"role": "user", "content": "当前消息"},
        ]
    )
    assert out == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "看图"},
                IMG,
                {"type": "text", "text": "当前消息"},
            ],
        }
    ]


def test_input_is_not_mutated_and_tool_messages_not_merged():
    original = [
        {"role": "tool", "content": "r1", "tool_call_id": "1"},
        {"role": "tool", "content": "r2", "tool_call_id": "2"},
    ]
    out = format_messages(original)
    assert len(out) == 2
    out[0]["content"] = "changed"
    assert original[0]["content"] == "r1"


def test_merge_content_helpers():
    assert merge_content("", "b") == "b"
    assert merge_content("a", "") == "a"
    assert merge_content("a", [IMG]) == [{"type": "text", "text": "a"}, IMG]
    assert format_messages([]) == []
