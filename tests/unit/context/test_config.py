import pytest
from pydantic import ValidationError

from pallas.context.config import ContextConfig


def test_defaults_are_the_spec_numbers():
    cfg = ContextConfig()
    assert cfg.char_budget == 12000
    assert cfg.session_user_window == 18
    assert cfg.session_group_window == 8
    assert (cfg.timeline_width, cfg.timeline_ambient_width) == (8, 4)
    assert (cfg.timeline_line_cap, cfg.timeline_block_cap) == (240, 2400)
    assert cfg.timeline_max_images == 3
    assert cfg.formatter.merge_system_to_head and not cfg.formatter.ensure_alternation


def test_unknown_keys_rejected_with_field_name():
    with pytest.raises(ValidationError, match="char_budgett"):
        ContextConfig(char_budgett=1)
    with pytest.raises(ValidationError, match="formatter"):
        ContextConfig(formatter={"merge_everything": True})


def test_nested_values_parse_from_toml_like_dicts():
    cfg = ContextConfig.model_validate(
        {
            "char_budget": 8000,
            "disabled_processors": ["timeline_images"],
            "formatter": {"ensure_alternation": True},
            "prompt_overrides": [{"section_id": "knowledge", "mode": "append", "text": "x"}],
        }
    )
    assert cfg.char_budget == 8000
    assert cfg.formatter.ensure_alternation
    assert cfg.prompt_overrides[0].mode == "append"


def test_bounds():
    with pytest.raises(ValidationError):
        ContextConfig(char_budget=10)
    with pytest.raises(ValidationError):
        ContextConfig(session_user_window=0)
