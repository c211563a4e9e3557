"""A task's endpoint chain: the backup answers within the same call, breakers skip a dead
primary, Retry-After is honoured, keys only come from the environment."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx2
import pytest
from pydantic import ValidationError

from pallas.core.clock import FakeClock
from pallas.core.settings import PallasSettings
from pallas.core.state import MemoryStateStore
from pallas.providers.client import CompletionResult, LLMClient, LLMError
from pallas.providers.endpoints import ProvidersConfig, load_providers, resolve_chain
from pallas.providers.models import ModelProfile

MESSAGES = [{"role": "user", "content": "在吗"}]
PROVIDERS = ProvidersConfig.model_validate(
    {
        "chat": [
            {"name": "backup", "base_url": "http://backup.test/v1",
             "api_key_env": "BACKUP_KEY", "model": "deepseek-chat"},
        ],
        "breaker": {"failures": 2, "open_seconds": 60},
        "retry_after_max_s": 1.0,
    }
)  # fmt: skip
ENV = {"BACKUP_KEY": "sk-backup"}


def _completion(content: str) -> httpx2.Response:
    return httpx2.Response(
        200,
        json={
            "id": "c1", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
        },
    )  # fmt: skip


class Hosts:
    """Answers per host; records (host, model, key) of every request."""

    def __init__(self, **answers: Callable[[], httpx2.Response]) -> None:
        self.answers = answers
        self.seen: list[tuple[str, str, str]] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        host = request.url.host.split(".")[0]
        body = json.loads(request.content)
        self.seen.append((host, body["model"], request.headers["authorization"]))
        return self.answers[host]()


def _error(status: int, headers: dict[str, str] | None = None) -> Callable[[], httpx2.Response]:
    return lambda: httpx2.Response(status, json={"error": {"message": "x"}}, headers=headers)


def _client(hosts: Hosts, clock: FakeClock, providers: ProvidersConfig = PROVIDERS) -> LLMClient:
    settings = PallasSettings(
        openai_base_url="http://primary.test/v1", openai_api_key="sk-primary",
        pallas_llm_max_retries=0,
    )  # fmt: skip
    http = httpx2.AsyncClient(transport=httpx2.MockTransport(hosts))
    return LLMClient(
        settings, None, clock, http_client=http, providers=providers,
        state=MemoryStateStore(clock), env=ENV,
    )  # fmt: skip


async def _ask(client: LLMClient) -> CompletionResult:
    return await client.complete("chat", MESSAGES, bot_id=1, group_id=7)


@pytest.mark.parametrize("status", [500, 502, 503, 429, 401])
async def test_the_backup_answers_in_the_same_call(status: int) -> None:
    hosts = Hosts(primary=_error(status), backup=lambda: _completion("备用在"))
    client = _client(hosts, FakeClock())
    result = await _ask(client)
    assert (result.ok, result.text, result.endpoint) == (True, "备用在", "backup")
    assert result.attempts[0].startswith("primary:") and result.attempts[1] == "backup:ok"
    assert hosts.seen[1] == ("backup", "deepseek-chat", "Bearer sk-backup")
    await client.close()


async def test_an_empty_answer_is_not_asked_twice() -> None:
    hosts = Hosts(primary=lambda: _completion(""), backup=lambda: _completion("备用"))
    client = _client(hosts, FakeClock())
    result = await _ask(client)
    assert result.error is LLMError.EMPTY and [h for h, _, _ in hosts.seen] == ["primary"]
    await client.close()


async def test_the_breaker_skips_a_dead_primary_then_probes_it() -> None:
    clock = FakeClock()
    primary_down = True
    hosts = Hosts(
        primary=lambda: _error(500)() if primary_down else _completion("主回来了"),
        backup=lambda: _completion("备用"),
    )
    client = _client(hosts, clock)
    for _ in range(2):  # two failures in a row open it
        assert (await _ask(client)).endpoint == "backup"
    hosts.seen.clear()
    result = await _ask(client)
    assert result.endpoint == "backup" and [h for h, _, _ in hosts.seen] == ["backup"]
    clock.advance(61)  # the open period is over: one call probes the primary
    primary_down = False
    hosts.seen.clear()
    result = await _ask(client)
    assert (result.endpoint, result.text) == ("primary", "主回来了")
    assert [h for h, _, _ in hosts.seen] == ["primary"]
    await client.close()


async def test_all_open_still_tries_the_primary() -> None:
    clock = FakeClock()
    hosts = Hosts(primary=_error(500), backup=_error(503))
    client = _client(hosts, clock)
    for _ in range(2):
        await _ask(client)
    hosts.seen.clear()
    result = await _ask(client)
    assert result.error is LLMError.SERVER_ERROR and [h for h, _, _ in hosts.seen] == ["primary"]
    await client.close()


async def test_a_short_retry_after_is_waited_out_on_the_same_endpoint() -> None:
    answers = iter([_error(429, {"retry-after": "0.05"})(), _completion("等了一下")])
    hosts = Hosts(primary=lambda: next(answers), backup=lambda: _completion("备用"))
    client = _client(hosts, FakeClock())
    result = await _ask(client)
    assert (result.endpoint, result.text) == ("primary", "等了一下")
    assert [h for h, _, _ in hosts.seen] == ["primary", "primary"]
    await client.close()


async def test_a_long_retry_after_moves_on_to_the_backup() -> None:
    hosts = Hosts(primary=_error(429, {"retry-after": "120"}), backup=lambda: _completion("备"))
    client = _client(hosts, FakeClock())
    result = await _ask(client)
    assert result.endpoint == "backup" and [h for h, _, _ in hosts.seen] == ["primary", "backup"]
    await client.close()


def test_keys_only_come_from_the_environment(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="keys only come from the environment"):
        ProvidersConfig.model_validate(
            {"chat": [{"name": "b", "base_url": "http://b/v1", "api_key": "sk-leak"}]}
        )
    settings = PallasSettings(openai_api_key="sk-p")
    chain = resolve_chain(settings, PROVIDERS, "chat", env={})  # BACKUP_KEY unset
    assert [e.name for e in chain] == ["primary"]
    (tmp_path / "providers.toml").write_text("[[chat]]\nname = 'x'\nbase_url = 1\n", "utf-8")
    assert load_providers(tmp_path) == ProvidersConfig()  # broken file: logged, no backups
    (tmp_path / "providers.toml").write_text(
        '[[chat]]\nname = "ollama"\nbase_url = "http://127.0.0.1:11434/v1"\nmodel = "qwen3:8b"\n',
        "utf-8",
    )
    chain = resolve_chain(settings, load_providers(tmp_path), "chat", env={})
    assert [(e.name, e.model, e.api_key) for e in chain][1] == ("ollama", "qwen3:8b", "none")


def test_an_embedding_backup_must_serve_the_same_model() -> None:
    providers = ProvidersConfig.model_validate(
        {"embedding": [{"name": "b", "base_url": "http://b/v1", "model": "other-embed"}]}
    )
    settings = PallasSettings(openai_api_key="k", pallas_embedding_model="text-embedding-3-small")
    assert [e.name for e in resolve_chain(settings, providers, "embedding", env={})] == ["primary"]


async def test_a_background_call_follows_the_groups_model_profiles() -> None:
    """A call that passes no profiles (memory extraction, summaries) still gets the group's
    `[models]` (here: an operator's extra_body and no temperature)."""
    seen: list[dict[str, object]] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(json.loads(request.content))
        return _completion("好")

    settings = PallasSettings(openai_base_url="http://primary.test/v1", openai_api_key="k")
    profiles = {"gpt-4o-mini": ModelProfile(send_temperature=False, extra_body={"seed": 7})}
    client = LLMClient(
        settings, None, FakeClock(),
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)),
        group_profiles=lambda group_id: profiles if group_id == 7 else {},
    )  # fmt: skip
    await client.complete("cheap", MESSAGES, bot_id=1, group_id=7, temperature=0.0)
    await client.complete("cheap", MESSAGES, bot_id=1, group_id=8, temperature=0.0)
    assert seen[0].get("seed") == 7 and "temperature" not in seen[0]
    assert "seed" not in seen[1] and seen[1]["temperature"] == 0.0
    await client.close()
