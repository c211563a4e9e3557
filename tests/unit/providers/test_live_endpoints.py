"""The model settings in force: the environment over the console's secrets file (a non-empty
variable wins, an empty one counts as unset), and the one holder that swaps in a new endpoint
set when the file changes — never patching the set a call already holds."""

from __future__ import annotations

import stat
import tomllib
from pathlib import Path

import pytest

from pallas.core.clock import FakeClock
from pallas.core.secrets_file import (
    edge_environment,
    env_fields,
    overlay,
    parse_superusers,
    read_all,
    read_secrets,
    update_secrets,
    write_secrets,
)
from pallas.core.settings import PallasSettings
from pallas.providers.client import LLMClient
from pallas.providers.embedding_auto import load_table, provider_for
from pallas.providers.live import CHECK_INTERVAL_S, LiveEndpoints
from pallas.providers.presets import ModelForm, check_model_form, key_tail, load_presets
from pallas.providers.probe import ProbeResult, probe_verdict_zh

SAVED = {"openai_base_url": "https://api.deepseek.com/v1", "openai_api_key": "sk-file-1234",
         "pallas_chat_model": "deepseek-chat"}  # fmt: skip


def test_the_file_fills_what_the_environment_leaves_unset() -> None:
    env = PallasSettings.model_validate({"openai_api_key": "", "pallas_cheap_model": "env-cheap"})
    assert env_fields(env) == {"pallas_cheap_model"}  # the empty key counts as unset
    in_force = overlay(env, SAVED)
    s = in_force.settings
    assert (s.openai_base_url, s.openai_api_key, s.pallas_chat_model) == (
        "https://api.deepseek.com/v1", "sk-file-1234", "deepseek-chat")  # fmt: skip
    assert s.pallas_cheap_model == "env-cheap" and s.replies_enabled
    assert in_force.sources["openai_api_key"] == "file"
    assert in_force.sources["pallas_cheap_model"] == "env"
    assert in_force.sources["pallas_vision_model"] == "default"


def test_a_non_empty_environment_value_wins() -> None:
    env = PallasSettings.model_validate({"openai_api_key": "sk-env-9999"})
    in_force = overlay(env, SAVED)
    assert in_force.settings.openai_api_key == "sk-env-9999"
    assert in_force.sources["openai_api_key"] == "env"
    assert in_force.settings.pallas_chat_model == "deepseek-chat"


def test_the_file_is_0600_and_holds_model_fields_only(tmp_path: Path) -> None:
    path = write_secrets(tmp_path, {**SAVED, "database_url": "x", "pallas_cheap_model": ""})
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert set(tomllib.loads(path.read_text(encoding="utf-8"))) == set(SAVED)
    assert read_secrets(tmp_path) == SAVED
    path.write_text("not = [toml", encoding="utf-8")
    assert read_secrets(tmp_path) == {}, "a broken file is ignored (logged)"


def test_the_holder_swaps_a_new_set_and_keeps_the_old_one_intact(tmp_path: Path) -> None:
    ticks = [0.0]
    live = LiveEndpoints(PallasSettings(), data_dir=tmp_path, monotonic=lambda: ticks[0])
    first = live.current()
    assert not first.enabled and first.generation == 0
    write_secrets(tmp_path, SAVED)  # another process saved
    assert live.current() is first, "the file is looked at once a second at most"
    ticks[0] += CHECK_INTERVAL_S
    second = live.current()
    assert second is not first and second.enabled and second.generation == 1
    assert second.chains["chat"][0].base_url == "https://api.deepseek.com/v1"
    assert not first.enabled and first.chains["chat"][0].api_key == "", "never patched"
    third = live.save({**SAVED, "openai_api_key": "sk-file-5678"})
    assert live.current() is third and third.chains["chat"][0].api_key == "sk-file-5678"


def test_the_client_follows_the_holder(tmp_path: Path) -> None:
    live = LiveEndpoints(PallasSettings(), data_dir=tmp_path)
    client = LLMClient(PallasSettings(), None, FakeClock(0.0), endpoints=live)
    assert not client.enabled and client.model_for("chat") == "gpt-4o-mini"
    live.save(SAVED)
    assert client.enabled and client.model_for("chat") == "deepseek-chat"
    assert client.chain("chat")[0].api_key == "sk-file-1234"


def test_presets_cover_the_providers_and_agree_with_the_embedding_table() -> None:
    presets = {p.id: p for p in load_presets()}
    assert set(presets) == {"deepseek", "dashscope", "siliconflow", "moonshot", "zhipu",
                            "openai", "ollama"}  # fmt: skip
    table = load_table()
    for p in presets.values():
        host = provider_for(p.base_url, table)
        assert host is not None, p.id
        assert p.embedding == host.model, f"{p.id}: embedding_hosts.toml says {host.model!r}"
        form = ModelForm(p.base_url, "", p.chat, p.cheap, p.vision, p.embedding)
        assert check_model_form(form) == [], p.id


def test_form_checks_and_key_tail() -> None:
    bad = ModelForm("api.deepseek.com", "sk bad", "", "x y", "", "")
    problems = check_model_form(bad)
    assert len(problems) == 4 and "接口地址要以 http" in problems[0]
    assert key_tail("sk-abcdef1234") == "…1234" and key_tail("abc") == "…"


def test_probe_verdicts_are_chinese() -> None:
    ok = probe_verdict_zh(ProbeResult("answered", latency_ms=321), "qwen-plus")
    assert ok == "连接成功：qwen-plus 在 321 毫秒内回答了。"
    assert "API Key 被拒绝（HTTP 401）" in probe_verdict_zh(
        ProbeResult("key_refused", status=401), "m"
    )
    assert "模型不存在" in probe_verdict_zh(ProbeResult("model_not_found", status=404), "m")
    assert probe_verdict_zh(ProbeResult("unreachable"), "m").startswith("连不上")


def test_an_empty_variable_means_the_built_in_default() -> None:
    env = PallasSettings.model_validate({"openai_base_url": "", "pallas_chat_model": ""})
    in_force = overlay(env, {})
    assert in_force.settings.openai_base_url == "https://api.openai.com/v1"
    assert in_force.settings.pallas_chat_model == "gpt-4o-mini"
    assert in_force.sources["openai_base_url"] == "default"


def test_an_empty_vision_model_saved_on_purpose_turns_image_description_off(
    tmp_path: Path,
) -> None:
    write_secrets(tmp_path, {**SAVED, "pallas_vision_model": "", "pallas_embedding_model": ""})
    saved = read_secrets(tmp_path)
    assert saved["pallas_vision_model"] == "" and "pallas_embedding_model" not in saved
    in_force = overlay(PallasSettings(), saved)
    assert in_force.settings.pallas_vision_model == ""
    assert in_force.sources["pallas_vision_model"] == "file"


async def test_a_task_without_a_model_is_off_quietly(tmp_path: Path) -> None:
    live = LiveEndpoints(PallasSettings(), data_dir=tmp_path)
    live.save({**SAVED, "pallas_vision_model": ""})
    client = LLMClient(PallasSettings(), None, FakeClock(0.0), endpoints=live)
    result = await client.complete("vision", [], bot_id=1, group_id=2)
    assert not result.ok and result.error == "disabled"


def test_saved_superusers_and_token_reach_nonebot_only_where_nothing_sets_them(
    tmp_path: Path,
) -> None:
    update_secrets(tmp_path, {"superusers": "10001,10002", "onebot_access_token": "tok-1"})
    live = LiveEndpoints(PallasSettings(), data_dir=tmp_path)
    live.save(SAVED)  # a model save keeps them
    assert read_all(tmp_path)["superusers"] == "10001,10002"
    assert edge_environment({}, {}, tmp_path) == {
        "SUPERUSERS": '["10001", "10002"]', "ONEBOT_ACCESS_TOKEN": "tok-1"}  # fmt: skip
    assert edge_environment({"SUPERUSERS": "[]"}, {"ONEBOT_ACCESS_TOKEN": "env-tok"}, tmp_path) == {
        "SUPERUSERS": '["10001", "10002"]'}  # fmt: skip
    assert edge_environment({"SUPERUSERS": '["9"]', "ONEBOT_ACCESS_TOKEN": "x"}, {}, tmp_path) == {}


def test_superusers_are_qq_ids() -> None:
    assert parse_superusers("10001, 10002，10003、 ") == ("10001", "10002", "10003")
    with pytest.raises(ValueError, match="QQ 号"):
        parse_superusers("10001 abc")
