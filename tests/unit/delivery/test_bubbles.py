import random

import pytest

from pallas.turn.parts.bubbles import bubble_delay, parse_reply, split_bubbles


@pytest.mark.parametrize(
    ("raw", "bubbles", "reason"),
    [
        ("好耶", ("好耶",), "ok"),
        ("<think>用户在打招呼，我应该回应</think>你好呀", ("你好呀",), "ok"),
        ("<THINK>\n多行\n推理\n</THINK>\n\n早上好", ("早上好",), "ok"),
        ("嗯嗯<think>后面是没写完的推理", ("嗯嗯",), "ok"),
        ("<think>只有推理，没有结束", (), "think_only"),
        ("推理泄漏的尾巴</think>真正的回答", ("真正的回答",), "ok"),
        ("PASS", (), "pass"),
        ("  pass。 ", (), "pass"),
        ("`PASS`", (), "pass"),
        ("PASS\n（这句不值得接）", (), "pass"),
        ("好的\nPASS", ("好的",), "ok"),
        ("", (), "empty"),
        (None, (), "empty"),
        ("   \n\u200b\n", (), "empty"),
        ('{"reply": "hi"}', (), "garbage"),
        ("null", (), "garbage"),
        ("Traceback (most recent call last):\n  File x", (), "garbage"),
        ("？", ("？",), "ok"),
        ("……", ("……",), "ok"),
    ],
)
def test_parse_reply_table(raw, bubbles, reason):
    parsed = parse_reply(raw)
    assert parsed.bubbles == bubbles
    assert parsed.reason == reason
    assert parsed.silent is (not bubbles)


def test_pass_inside_a_sentence_is_not_silence():
    parsed = parse_reply("这关我直接 pass 了")
    assert parsed.bubbles == ("这关我直接 pass 了",)


@pytest.mark.parametrize(
    "raw",
    ["帕拉斯：你好呀", "帕拉斯: 你好呀", "assistant: 你好呀", "Assistant：你好呀", "牛牛：你好呀"],
)
def test_role_prefix_stripped(raw):
    parsed = parse_reply(raw)
    assert parsed.bubbles == ("你好呀",)
    assert "role_prefix" in parsed.notes


def test_role_prefix_stripped_on_every_line_and_custom_name():
    parsed = parse_reply("小帕：第一句\n小帕：第二句", speaker_names=("小帕",))
    assert parsed.bubbles == ("第一句", "第二句")


@pytest.mark.parametrize(
    "raw", ["@帕拉斯 你好", "[CQ:at,qq=42] 你好", "[CQ:at,qq=42,name=帕拉斯]你好"]
)
def test_leading_self_at_stripped(raw):
    assert parse_reply(raw, bot_id=42).bubbles == ("你好",)


def test_at_someone_else_is_kept():
    assert parse_reply("@张三 你好").bubbles == ("@张三 你好",)


@pytest.mark.parametrize(
    ("raw", "sticker", "bubbles"),
    [
        ("哈哈哈\n[表情:狗头]", "狗头", ("哈哈哈",)),
        ("[表情：点赞]", "点赞", ()),
        ("笑死[表情:笑哭]", "笑哭", ("笑死",)),
    ],
)
def test_sticker_marker(raw, sticker, bubbles):
    parsed = parse_reply(raw)
    assert parsed.sticker == sticker
    assert parsed.bubbles == bubbles
    assert not parsed.silent
    assert parsed.reason == "ok"


def test_one_line_per_bubble_up_to_max_segments():
    parsed = parse_reply("第一句\n\n第二句\n第三句", max_segments=3, max_chars=18)
    assert parsed.bubbles == ("第一句", "第二句", "第三句")


def test_too_many_lines_merged_shortest_pair_first():
    parsed = parse_reply("这是一句比较长的话哦\n嗯\n对\n最后一句也挺长的", max_segments=3)
    assert len(parsed.bubbles) == 3
    assert parsed.bubbles[0] == "这是一句比较长的话哦"
    assert parsed.bubbles[1] == "嗯 对"
    assert parsed.bubbles[2] == "最后一句也挺长的"


def test_long_line_split_at_sentence_ends():
    line = "今天天气真的很不错。我们一起去公园散步吧！你觉得怎么样？"
    parsed = parse_reply(line, max_segments=3, max_chars=12)
    assert parsed.bubbles == ("今天天气真的很不错。", "我们一起去公园散步吧！", "你觉得怎么样？")


def test_short_sentences_repacked_not_split_needlessly():
    parsed = parse_reply("好。行。可以。走吧走吧走吧走吧走吧走吧走吧", max_segments=3, max_chars=8)
    assert parsed.bubbles[0] == "好。行。可以。"


def test_url_is_never_cut():
    url = "https://example.com/a.b?c=d!e"
    parsed = parse_reply(f"看这个{url} 很有意思。对吧", max_segments=3, max_chars=8)
    assert any(url in b for b in parsed.bubbles)


def test_hard_split_does_not_cut_emoji_sequence():
    family = "👨\u200d👩\u200d👧"
    text = "啊" * 58 + family + "啊" * 30
    bubbles = split_bubbles([text], max_segments=5, max_chars=18)
    joined = "".join(bubbles)
    assert family in joined
    assert all(not b.startswith("\u200d") and not b.endswith("\u200d") for b in bubbles)


def test_overlong_reply_truncated_at_sentence_end():
    text = "\n".join(["这是一句完整的话。" * 10] * 3)
    parsed = parse_reply(text, max_segments=2, max_chars=18)
    assert sum(len(b) for b in parsed.bubbles) <= 120
    assert parsed.bubbles[-1].endswith("。")
    assert "truncated" in parsed.notes


def test_markup_and_bullets_removed():
    parsed = parse_reply("1. **好的**\n- 没问题<|im_end|>\n[CQ:image,file=x.jpg]")
    assert parsed.bubbles == ("好的", "没问题")


def test_wrapping_quotes_removed():
    assert parse_reply("“早上好”").bubbles == ("早上好",)


def test_result_is_frozen():
    parsed = parse_reply("好")
    with pytest.raises(AttributeError):
        parsed.reason = "x"  # type: ignore[misc]


def test_bubble_delay_formula_and_clamp():
    class Fixed:
        def __init__(self, value):
            self.value = value

        def uniform(self, a, b):
            assert (a, b) == (-0.35, 0.35)
            return self.value

    assert bubble_delay("一二三四五", Fixed(0.0)) == pytest.approx(1.0)
    assert bubble_delay("一二三四五", Fixed(0.35)) == pytest.approx(1.35)
    assert bubble_delay("", Fixed(-0.35)) == pytest.approx(0.52)
    assert bubble_delay("长" * 200, Fixed(0.0)) == 3.5
    assert bubble_delay("", Fixed(-0.5)) == 0.5


def test_bubble_delay_seeded_range():
    rng = random.Random(7)
    delays = [bubble_delay("你好呀你好呀", rng) for _ in range(200)]
    base = 0.8 + 0.04 * 6
    assert min(delays) >= base * 0.65 - 1e-9
    assert max(delays) <= base * 1.35 + 1e-9
    assert max(delays) - min(delays) > 0.3
