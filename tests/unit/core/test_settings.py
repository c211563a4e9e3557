import pytest

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
