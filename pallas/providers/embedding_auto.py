"""Whether memory retrieval uses embeddings, decided once at start-up.

`PALLAS_EMBEDDING_MODEL` names the model (used as is), or `off` turns embeddings off. When it is
unset the provider decides: `data/embedding_hosts.toml` says, per provider host, whether it
serves `POST /embeddings` and which model to use for Chinese (the same table as
docs/providers.md). A base URL alone does not prove the endpoint answers, so a known host's
model is only *planned*; one tiny embeddings call in the background (`embedding_probe.py`)
turns embeddings on when it answers with vectors. An unknown host is asked for its model list
(`GET /models`) and a recognised embedding model there is probed the same way.

Everything here is pure: `plan_embeddings` (settings → plan), `pick_listed` (model list →
model) and `probe_verdict` (the probe's answer → state) each return a reason. The live state
sits in an `EmbeddingSwitch` the LLM client owns; the memory service reads it per call.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pallas.core.settings import PallasSettings

TABLE_FILE = Path(__file__).parent / "data" / "embedding_hosts.toml"
OFF_WORDS = frozenset({"off", "none", "no", "false", "0", "disabled"})

PlanAction = Literal["use", "probe", "list", "off"]
Phase = Literal["on", "off", "pending"]


@dataclass(frozen=True, slots=True)
class EmbeddingHost:
    name: str
    hosts: tuple[str, ...] = ()
    port: int | None = None
    model: str = ""  # "": no embeddings endpoint
    note: str = ""


@dataclass(frozen=True, slots=True)
class EmbeddingTable:
    providers: tuple[EmbeddingHost, ...]
    listed: tuple[str, ...]  # model ids recognised in an unknown endpoint's model list


@lru_cache(maxsize=4)
def load_table(path: Path = TABLE_FILE) -> EmbeddingTable:
    data = tomllib.loads(path.read_text("utf-8"))
    providers = tuple(
        EmbeddingHost(
            name=str(p["name"]),
            hosts=tuple(str(h).lower() for h in p.get("hosts", ())),
            port=int(p["port"]) if "port" in p else None,
            model=str(p.get("model", "")),
            note=str(p.get("note", "")),
        )
        for p in data.get("provider", ())
    )
    return EmbeddingTable(
        providers, tuple(str(m) for m in data.get("listed", {}).get("models", ()))
    )


def provider_for(base_url: str, table: EmbeddingTable) -> EmbeddingHost | None:
    """The table's provider for a base URL: by host name (or a sub-domain of it), else by port."""
    try:
        parts = urlsplit(base_url.strip())
        host, port = (parts.hostname or "").lower(), parts.port
    except ValueError:
        return None
    for provider in table.providers:
        if any(host == h or host.endswith("." + h) for h in provider.hosts):
            return provider
    for provider in table.providers:
        if provider.port is not None and port == provider.port:
            return provider
    return None


@dataclass(frozen=True, slots=True)
class EmbeddingPlan:
    action: PlanAction  # use the model / probe it / list the endpoint's models / stay off
    model: str
    reason: str  # plain English, for the log
    reason_zh: str  # what `/pallas status` says


def plan_embeddings(
    setting: str, base_url: str, *, replies_enabled: bool, table: EmbeddingTable
) -> EmbeddingPlan:
    """What to do with embeddings at start-up, from `PALLAS_EMBEDDING_MODEL` and the base URL."""
    chosen = setting.strip()
    if chosen.lower() in OFF_WORDS:
        return EmbeddingPlan("off", "", f"PALLAS_EMBEDDING_MODEL={chosen}",
                             "PALLAS_EMBEDDING_MODEL 设为关闭")  # fmt: skip
    if not replies_enabled:
        return EmbeddingPlan("off", "", "no OPENAI_API_KEY", "未配置 API Key")
    if chosen:
        return EmbeddingPlan("use", chosen, f"PALLAS_EMBEDDING_MODEL={chosen}",
                             "PALLAS_EMBEDDING_MODEL 指定")  # fmt: skip
    provider = provider_for(base_url, table)
    if provider is None:
        return EmbeddingPlan("list", "", "unknown provider: its model list is asked",
                             "未知服务商，查询其模型列表")  # fmt: skip
    if not provider.model:
        return EmbeddingPlan("off", "", f"{provider.name} offers no embeddings endpoint",
                             f"{provider.name} 不提供向量接口")  # fmt: skip
    return EmbeddingPlan("probe", provider.model, f"{provider.name} documents {provider.model}",
                         f"{provider.name} 的 {provider.model}")  # fmt: skip


def pick_listed(model_ids: list[str], table: EmbeddingTable) -> str:
    """The best recognised embedding model an endpoint lists ("" = none); Ollama's tags
    (`bge-m3:latest`) match their bare name."""
    by_bare: dict[str, str] = {}
    for model_id in model_ids:
        by_bare.setdefault(model_id.split(":", 1)[0].lower(), model_id)
    for wanted in table.listed:
        if wanted.lower() in by_bare:
            return by_bare[wanted.lower()]
    return ""


@dataclass(frozen=True, slots=True)
class EmbeddingState:
    phase: Phase
    model: str = ""
    reason: str = ""  # plain English (the log line)
    reason_zh: str = ""  # `/pallas status` and the console

    @property
    def on(self) -> bool:
        return self.phase == "on"

    def log_line(self) -> str:
        if self.on:
            return f"embeddings on ({self.model}): {self.reason}"
        if self.phase == "pending":
            return f"embeddings pending: probing {self.model or 'the model list'}"
        return f"embeddings off, memory recall uses BM25 and concept classes: {self.reason}"

    def status_zh(self) -> str:
        if self.on:
            return f"向量检索：开启（{self.model}，{self.reason_zh}）"
        if self.phase == "pending":
            return "向量检索：启动探测中，暂用关键词检索"
        return f"向量检索：关闭（{self.reason_zh}），用关键词与概念检索"


def initial_state(plan: EmbeddingPlan) -> EmbeddingState:
    """The state before any probe: on for an explicit model, off, or pending a probe."""
    if plan.action == "use":
        return EmbeddingState("on", plan.model, plan.reason, plan.reason_zh)
    if plan.action == "off":
        return EmbeddingState("off", "", plan.reason, plan.reason_zh)
    return EmbeddingState("pending", plan.model, plan.reason, plan.reason_zh)


def probe_verdict(model: str, vectors: list[list[float]] | None, error: str) -> EmbeddingState:
    """The state after probing `model`: on only when it answered with a non-empty vector."""
    if not model:
        return EmbeddingState("off", "", f"no embedding model found ({error or 'none listed'})",
                              "服务商没有可用的向量模型")  # fmt: skip
    if error or not vectors:
        why = error or "an answer without vectors"
        return EmbeddingState("off", "", f"the probe of {model} failed: {why}",
                              f"探测 {model} 失败：{why}")  # fmt: skip
    if not vectors[0] or not all(isinstance(v, int | float) for v in vectors[0]):
        return EmbeddingState("off", "", f"the probe of {model} answered no usable vector",
                              f"探测 {model} 没有返回可用的向量")  # fmt: skip
    dims = len(vectors[0])
    return EmbeddingState("on", model, f"the probe answered a {dims}-dimension vector",
                          "启动时探测可用")  # fmt: skip


class EmbeddingSwitch:
    """The live embedding state (one per LLM client): read on every memory retrieval, set once
    by the start-up probe."""

    def __init__(self, plan: EmbeddingPlan) -> None:
        self.plan = plan
        self.state = initial_state(plan)

    @classmethod
    def of(cls, settings: PallasSettings) -> EmbeddingSwitch:
        plan = plan_embeddings(
            settings.pallas_embedding_model,
            settings.openai_base_url,
            replies_enabled=settings.replies_enabled,
            table=load_table(),
        )
        return cls(plan)

    @property
    def on(self) -> bool:
        return self.state.on

    @property
    def model(self) -> str:
        """The model embeddings are asked of ("" while off or pending)."""
        return self.state.model if self.state.on else ""


__all__ = [
    "EmbeddingHost",
    "EmbeddingPlan",
    "EmbeddingState",
    "EmbeddingSwitch",
    "EmbeddingTable",
    "initial_state",
    "load_table",
    "pick_listed",
    "plan_embeddings",
    "probe_verdict",
    "provider_for",
]
