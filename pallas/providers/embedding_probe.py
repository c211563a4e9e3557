"""The start-up probe that turns embeddings on when the provider serves them.

`probe_embeddings(llm)` runs once, in the background, when `embedding_auto.plan_embeddings`
planned a probe: an unknown endpoint is first asked for its model list (`GET /models`), then
the model gets one tiny embeddings call on the primary endpoint. Each call has a timeout; the
verdict (`embedding_auto.probe_verdict`) is set on the client's `EmbeddingSwitch` and logged as
one INFO line. Until then the switch says "pending" and memory recall stays on BM25, so no
reply ever waits for it. The probe is not a usage-ledger row (one word, no group).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from pallas.providers.client import LLMClient
from pallas.providers.embedding_auto import EmbeddingState, load_table, pick_listed, probe_verdict

log = logging.getLogger("pallas.llm")

PROBE_TIMEOUT_S = 10.0
PROBE_TEXT = "你好"


def describe(exc: BaseException, timeout_s: float) -> str:
    """A failed call in a few plain words (never the key or the request)."""
    if isinstance(exc, TimeoutError):
        return f"no answer in {timeout_s:g} s"
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return f"HTTP {status}"
    return type(exc).__name__


async def _listed_model(client: Any, timeout_s: float) -> tuple[str, str]:
    """(the recognised embedding model the endpoint lists or "", why not)."""
    try:
        page = await asyncio.wait_for(client.models.list(), timeout_s)
    except Exception as exc:
        return "", f"the model list could not be read: {describe(exc, timeout_s)}"
    ids = [str(getattr(m, "id", "")) for m in getattr(page, "data", None) or ()]
    model = pick_listed(ids, load_table())
    return model, "" if model else f"none of {len(ids)} listed models is a known embedding model"


async def _one_vector(client: Any, model: str, timeout_s: float) -> tuple[list[list[float]], str]:
    try:
        response = await asyncio.wait_for(
            client.embeddings.create(model=model, input=[PROBE_TEXT]), timeout_s
        )
    except Exception as exc:
        return [], describe(exc, timeout_s)
    data = getattr(response, "data", None) or ()
    return [list(getattr(item, "embedding", None) or ()) for item in data], ""


async def probe_embeddings(llm: LLMClient, *, timeout_s: float = PROBE_TIMEOUT_S) -> EmbeddingState:
    """Probe once when the plan says so; returns (and sets) the switch's state."""
    switch = llm.embeddings
    plan = switch.plan
    if plan.action not in ("probe", "list"):
        return switch.state
    client = llm.client_for(llm.chain("embedding")[0])
    model, error = plan.model, ""
    if plan.action == "list":
        model, error = await _listed_model(client, timeout_s)
    vectors: list[list[float]] = []
    if model:
        vectors, error = await _one_vector(client, model, timeout_s)
    state = probe_verdict(model, vectors, error)
    switch.state = state  # on: the embedding chain uses `state.model` (a listed one too)
    log.info("%s", state.log_line())
    return state


__all__ = ["PROBE_TIMEOUT_S", "describe", "probe_embeddings"]
