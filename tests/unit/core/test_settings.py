from dataclasses import astuple
from pathlib import Path

import pytest

from pallas.admin.base import Deployment
from pallas.core.settings import PallasSettings


def test_missing_key_disables_replies(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert PallasSettings.from_env().replies_enabled is False
    monkeypatch.setenv("OPENAI_API_KEY", "  sk-1 ")
    settings = PallasSettings.from_env()
    assert settings.replies_enabled and settings.openai_api_key == "sk-1"


def test_env_names_are_case_insensitive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PALLAS_CHAT_MODEL", "deepseek-chat")
    assert PallasSettings.from_env().pallas_chat_model == "deepseek-chat"


def test_state_store_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PALLAS_STATE_URL", raising=False)
    assert PallasSettings.from_env().pallas_state_url == ""  # in-memory by default
    monkeypatch.setenv("PALLAS_STATE_URL", " redis://redis:6379/0 ")
    monkeypatch.setenv("PALLAS_STATE_PREFIX", "prod")
    settings = PallasSettings.from_env()
    assert (settings.pallas_state_url, settings.pallas_state_prefix) == (
        "redis://redis:6379/0",
        "prod",
    )
    assert PallasSettings(pallas_state_prefix=2).pallas_state_prefix == "2"  # NoneBot's JSON
    with pytest.raises(ValueError, match="whitespace"):
        PallasSettings(pallas_state_prefix="a b")


def test_the_admin_services_carry_what_they_show_and_no_secret(tmp_path: Path) -> None:
    settings = PallasSettings(
        openai_api_key="sk-secret-1234",
        pallas_console_token="console-secret",
        pallas_data_dir=tmp_path,
        pallas_daily_call_cap=50,
        pallas_chat_model="chat-m",
    )
    shown = Deployment.of(settings)
    assert (shown.daily_call_cap, shown.daily_token_cap) == (50, 0)
    assert (shown.data_dir, shown.groups_dir) == (tmp_path, settings.groups_dir)
    assert not any("secret" in str(value) for value in astuple(shown))
    # whether replies are on and which model answers is the live client's (the 模型 page)
    assert not hasattr(shown, "chat_model") and not hasattr(shown, "replies_enabled")
