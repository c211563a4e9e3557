"""`PieceTokenCounter`: exact cl100k counts from cached piece counts, bounded cache."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from pallas.context.chat_prompt import SECTION_SEPARATOR
from pallas.context.prompt_guard import PROMPT_INJECTION_GUARD
from pallas.core.token_pieces import CL100K_PATTERN, PieceTokenCounter, split_pieces
from pallas.core.tokens import get_encoding

REPO = Path(__file__).resolve().parents[3]


def whole(text: str) -> int:
    return len(get_encoding().encode_ordinary(text))


def _transcript_lines(name: str) -> list[str]:
    rows = (REPO / "benchmarks" / "transcripts" / f"{name}.jsonl").read_text("utf-8").split("\n")
    return [str(json.loads(r).get("raw_message", "")) for r in rows if r.strip()]


def _prompts() -> list[str]:
    """System prompts built like the assembler builds them: the repo's persona and guard, a
    timeline of transcript lines (sliding, as turn after turn), joined by blank lines."""
    persona = (REPO / "config" / "personas" / "pallas.toml").read_text("utf-8")
    lines = _transcript_lines("campus_group") + _transcript_lines("game_group")
    prompts = []
    for start in range(0, 240, 12):
        timeline = "【刚才的群聊】\n" + "\n".join(
            f"群友{start + i}：{line}" for i, line in enumerate(lines[start : start + 30])
        )
        sections = [PROMPT_INJECTION_GUARD, persona.strip(), timeline, "【当前时间】\n12:00"]
        prompts.append(SECTION_SEPARATOR.join(sections))
    return prompts


def test_the_loaded_encoding_uses_the_pattern_the_split_is_proven_for():
    assert get_encoding()._pat_str == CL100K_PATTERN


@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        ("", [""]),
        ("a\nb", ["a\n", "b"]),
        ("a\n\nb", ["a\n\n", "b"]),
        ("a\n b\nc", ["a\n b\n", "c"]),  # a line starting with a space is not a boundary
        ("a\n\n", ["a\n\n"]),
        ("。\n【x】\n\u3000y", ["。\n", "【x】\n\u3000y"]),  # ideographic space: whitespace
        ("\nx", ["\n", "x"]),
    ],
)
def test_split_pieces(text: str, pieces: list[str]):
    assert split_pieces(text) == pieces
    assert "".join(split_pieces(text)) == text


def test_real_prompts_count_exactly_and_repeat_lines_hit_the_cache():
    counter = PieceTokenCounter()
    for prompt in _prompts():
        assert counter.count(prompt) == whole(prompt)
    assert counter.hits > counter.misses


def test_random_text_counts_exactly():
    alphabet = [
        "\n", "\n\n", " ", "  ", "\t", "\r\n", "。", "，", "a", "Z", "1", "234", "你好", "【",
        "】", "-", "!?", " \n", "\u3000", "\xa0", "\x1c", "'s", "…", "😀", "\u2028", "\x85",
        "…(已截断)", "https://x.y/z?a=1",
    ]  # fmt: skip
    rng = random.Random(5)
    counter = PieceTokenCounter(max_entries=64, max_chars=1000)
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(60)))
        assert counter.count(text) == whole(text), repr(text)


def test_the_cache_stays_within_its_bounds():
    counter = PieceTokenCounter(max_entries=10, max_chars=60, max_piece_chars=20)
    for i in range(100):
        counter.count(f"第{i}行的内容\n")
    assert len(counter) <= 10 and counter.cached_chars <= 60
    counter.count("长" * 50 + "\n")  # longer than max_piece_chars: counted, not kept
    assert "长" * 50 + "\n" not in counter._cache
    counter.clear()
    assert len(counter) == 0 and counter.cached_chars == 0


def test_another_pattern_counts_the_whole_text():
    class Other:
        _pat_str = r"\S+|\s+"

        def encode_ordinary(self, text: str) -> list[int]:
            return [0] * len(text.split())

    counter = PieceTokenCounter(encoding=lambda: Other())  # type: ignore[arg-type, return-value]
    assert counter.count("a b\nc d\ne") == 5
    assert len(counter) == 0


def test_an_encoding_without_a_visible_pattern_counts_the_whole_text():
    class Opaque:
        def encode_ordinary(self, text: str) -> list[int]:
            return [0] * len(text)

    counter = PieceTokenCounter(encoding=lambda: Opaque())  # type: ignore[arg-type, return-value]
    assert counter.count("ab\ncd") == 5
    assert len(counter) == 0
