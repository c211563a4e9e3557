"""Embeddings on by default where the provider serves them: the provider-host table (one place,
shared with docs/providers.md), the start-up plan, the model-list pick and the probe's verdict,
each with its reason; and the probe itself through the real `openai` client."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx2
import pytest

from pallas.core.clock import FakeClock
from pallas.core.settings import PallasSettings
from pallas.core.state import MemoryStateStore
from pallas.providers.client import LLMClient
from pallas.providers.embedding_auto import (
    load_table,
    pick_listed,
    plan_embeddings,
    probe_verdict,
    provider_for,
)
from pallas.providers.embedding_probe import probe_embeddings

REPO = Path(__file__).resolve().parents[3]
TABLE = load_table()


@pytest.mark.parametrize(
    ("base_url", "provider", "model"),
    [
        ("https://api.openai.com/v1", "OpenAI", "text-embedding-3-small"),
        ("https://dashscope.aliyuncs.com/compatible-mode/v1", "Qwen", "text-embedding-v3"),
        ("https://api.siliconflow.cn/v1", "SiliconFlow", "BAAI/bge-m3"),
        ("https://open.bigmodel.cn/api/paas/v4", "Zhipu", "embedding-3"),
        ("http://127.0.0.1:11434/v1", "Ollama", "bge-m3"),
        ("http://192.168.1.5:11434/v1", "Ollama", "bge-m3"),  # Ollama on another box
        ("https://api.deepseek.com", "DeepSeek", ""),
        ("https://api.moonshot.ai/v1", "Moonshot", ""),
        ("https://eu.api.openai.com/v1", "OpenAI", "text-embedding-3-small"),  # a sub-domain
        ("http://127.0.0.1:8000/v1", None, None),  # a vLLM: not in the table
        ("https://openai.com.evil.test/v1", None, None),  # a host that only contains a name
        ("not a url", None, None),
    ],
)
def test_provider_host_table(base_url: str, provider: str | None, model: str | None) -> None:
    found = provider_for(base_url, TABLE)
    if provider is None:
        assert found is None
    else:
        assert found is not None and found.name.startswith(provider)
        assert found.model == model


@pytest.mark.parametrize(
    ("setting", "base_url", "key", "action", "model", "reason"),
    [
        ("", "https://api.openai.com/v1", True, "probe", "text-embedding-3-small", "OpenAI"),
        ("", "https://api.deepseek.com", True, "off", "", "no embeddings endpoint"),
        ("", "http://127.0.0.1:8000/v1", True, "list", "", "unknown provider"),
        ("bge-m3", "https://api.deepseek.com", True, "use", "bge-m3", "PALLAS_EMBEDDING_MODEL"),
        ("off", "https://api.openai.com/v1", True, "off", "", "PALLAS_EMBEDDING_MODEL=off"),
        (" None ", "https://api.openai.com/v1", True, "off", "", "PALLAS_EMBEDDING_MODEL"),
        ("", "https://api.openai.com/v1", False, "off", "", "no OPENAI_API_KEY"),
    ],
)
def test_start_up_plan(
    setting: str, base_url: str, key: bool, action: str, model: str, reason: str
) -> None:
    plan = plan_embeddings(setting, base_url, replies_enabled=key, table=TABLE)
    assert (plan.action, plan.model) == (action, model)
    assert reason in plan.reason and plan.reason_zh


@pytest.mark.parametrize(
    ("listed", "picked"),
    [
        (["qwen2.5:7b", "bge-m3:latest"], "bge-m3:latest"),  # Ollama's tag matches the name
        (["nomic-embed-text", "bge-m3"], "bge-m3"),  # the table's order: Chinese first
        (["gpt-4o-mini", "whisper-1"], ""),
        ([], ""),
    ],
)
def test_a_listed_embedding_model_is_recognised(listed: list[str], picked: str) -> None:
    assert pick_listed(listed, TABLE) == picked


@pytest.mark.parametrize(
    ("model", "vectors", "error", "on", "reason"),
    [
        ("bge-m3", [[0.1, 0.2, 0.3]], "", True, "3-dimension vector"),
        ("bge-m3", [], "HTTP 404", False, "HTTP 404"),
        ("bge-m3", [], "", False, "without vectors"),
        ("bge-m3", [[]], "", False, "no usable vector"),
        ("", [], "none of 2 listed models", False, "none of 2 listed models"),
    ],
)
def test_probe_verdict(
    model: str, vectors: list[list[float]], error: str, on: bool, reason: str
) -> None:
    state = probe_verdict(model, vectors, error)
    assert state.on is on and reason in state.reason
    assert state.model == (model if on else "")
    assert ("开启" if on else "关闭") in state.status_zh()
    assert ("embeddings on" if on else "embeddings off") in state.log_line()


def test_the_docs_table_is_the_data() -> None:
    """docs/providers.md lists every provider of the data file with the same model."""
    docs = (REPO / "docs" / "providers.md").read_text("utf-8")
    for provider in TABLE.providers:
        row = re.search(rf"^\| {re.escape(provider.name)} [^\n]*", docs, re.M)
        assert row is not None, provider.name
        if provider.model:
            assert f"| yes | `{provider.model}`" in row.group(0), row.group(0)
        else:
            assert "| no |" in row.group(0), row.group(0)


def _client(base_url: str, routes: dict[str, httpx2.Response], seen: list[str]) -> LLMClient:
    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(f"{request.method} {request.url.path}")
        for suffix, response in routes.items():
            if request.url.path.endswith(suffix):
                return response
        return httpx2.Response(404, json={"error": {"message": "not found"}})

    clock = FakeClock(1000.0)
    settings = PallasSettings(openai_base_url=base_url, openai_api_key="sk-test")
    http = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    return LLMClient(settings, None, clock, http_client=http, state=MemoryStateStore(clock))


def _vectors(*vectors: list[float]) -> httpx2.Response:
    data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
    body = {"object": "list", "data": data, "model": "m", "usage": {"prompt_tokens": 1,
            "total_tokens": 1}}  # fmt: skip
    return httpx2.Response(200, content=json.dumps(body))


async def test_probe_turns_a_known_hosts_model_on_and_embed_then_works() -> None:
    seen: list[str] = []
    llm = _client("https://api.siliconflow.cn/v1", {"/embeddings": _vectors([0.6, 0.8])}, seen)
    assert await llm.embed(["x"], bot_id=1, group_id=2) == [], "pending: no call yet"
    assert seen == []
    state = await probe_embeddings(llm)
    assert state.on and state.model == "BAAI/bge-m3" and llm.embeddings.on
    assert await llm.embed(["x"], bot_id=1, group_id=2) == [[0.6, 0.8]]
    assert seen == ["POST /v1/embeddings"] * 2
    assert [s.task for s in await llm.endpoint_status()].count("embedding") == 1


async def test_probe_picks_a_listed_model_on_an_unknown_host() -> None:
    seen: list[str] = []
    models = {"object": "list", "data": [{"id": "qwen3:8b", "object": "model"},
              {"id": "bge-m3:latest", "object": "model"}]}  # fmt: skip
    routes = {"/models": httpx2.Response(200, json=models), "/embeddings": _vectors([1.0])}
    llm = _client("http://10.0.0.9:8080/v1", routes, seen)
    state = await probe_embeddings(llm)
    assert (state.on, llm.model_for("embedding")) == (True, "bge-m3:latest")
    assert llm.chain("embedding")[0].model == "bge-m3:latest"
    assert seen == ["GET /v1/models", "POST /v1/embeddings"]


@pytest.mark.parametrize(
    ("base_url", "routes", "reason", "calls"),
    [
        ("https://api.openai.com/v1", {}, "HTTP 404", 1),
        ("https://api.deepseek.com", {}, "DeepSeek offers no embeddings endpoint", 0),
        ("http://10.0.0.9:8080/v1", {}, "model list could not be read: HTTP 404", 1),
        ("http://10.0.0.9:8080/v1", {"/models": httpx2.Response(200, json={"data": []})},
         "none of 0 listed models", 1),
    ],
)  # fmt: skip
async def test_probe_leaves_embeddings_off_with_a_reason(
    base_url: str, routes: dict[str, httpx2.Response], reason: str, calls: int
) -> None:
    seen: list[str] = []
    llm = _client(base_url, routes, seen)
    state = await probe_embeddings(llm)
    assert not state.on and not llm.embeddings.on and reason in state.reason
    assert len(seen) == calls
    assert await llm.embed(["x"], bot_id=1, group_id=2) == []
    assert len(seen) == calls, "off: no embeddings call afterwards"
    assert all(s.task != "embedding" for s in await llm.endpoint_status())
