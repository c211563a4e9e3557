"""A TTS provider is priced like a model: `[models."<kind>:<model>"] input_price` per million
characters (the ledger keeps the characters in the prompt column)."""

from __future__ import annotations

from pallas.config import GroupConfig
from pallas.web.queries import UsageRow
from pallas.web.views import cost_of


def test_tts_characters_are_priced_by_their_model_profile() -> None:
    config = GroupConfig.model_validate({"models": {"openai:tts-1": {"input_price": 15.0}}})
    row = UsageRow("2026-12-06", 1, 100, "tts", "openai:tts-1", calls=3, prompt_tokens=2000,
                   completion_tokens=0)  # fmt: skip
    assert cost_of(row, config.models) == 0.03
    unpriced = UsageRow("2026-12-06", 1, 100, "tts", "edge_tts:zh-CN-XiaoxiaoNeural", 3, 2000, 0)
    assert cost_of(unpriced, config.models) is None
