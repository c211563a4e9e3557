"""测试连接: one tiny chat call to an endpoint the operator is about to save.

`probe_chat` sends one short request (a few output tokens, no retries) with the typed base URL,
key and chat model, through the same SDK path as a reply (`client.post_chat`), and says what
happened as a `ProbeResult`: answered (in how many ms), the key refused, the model not found,
the address wrong, unreachable, too slow, out of credit, rate limited, or a server error.
`probe_verdict_zh` is the sentence the console shows.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pallas.providers.client import post_chat
from pallas.providers.endpoints import NO_KEY

if TYPE_CHECKING:
    import httpx2

Outcome = Literal[
    "answered",
    "key_refused",
    "model_not_found",
    "wrong_url",
    "unreachable",
    "timeout",
    "no_credit",
    "rate_limited",
    "server_error",
    "bad_response",
    "refused",
]
PROBE_TIMEOUT_S = 15.0
PROBE_MESSAGE = "你好，请只回一个字。"


@dataclass(frozen=True, slots=True)
class ProbeResult:
    outcome: Outcome
    latency_ms: int = 0
    status: int | None = None  # the HTTP status when the endpoint answered with one
    detail: str = ""  # the endpoint's own words (its error message), cut short
    answer: str = ""  # what the model said (when it answered)

    @property
    def ok(self) -> bool:
        return self.outcome == "answered"


def _message(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])[:200]
    return str(exc)[:200]


def classify_failure(exc: BaseException) -> tuple[Outcome, int | None]:
    """The outcome for an exception of the SDK (the probe's own reading of status codes)."""
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return "timeout", None
    if isinstance(exc, openai.APIConnectionError):
        return "unreachable", None
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        text = _message(exc).lower()
        if status in (401, 403):
            return "key_refused", status
        if status == 402 or "balance" in text or "余额" in text or "quota" in text:
            return "no_credit", status
        if status == 429:
            return "rate_limited", status
        if status in (400, 404, 422) and ("model" in text or "模型" in text):
            return "model_not_found", status
        if status in (404, 405):
            return "wrong_url", status
        if status >= 500:
            return "server_error", status
        return "refused", status
    return "bad_response", None


async def probe_chat(
    base_url: str,
    api_key: str,
    model: str,
    *,
    timeout_s: float = PROBE_TIMEOUT_S,
    http_client: httpx2.AsyncClient | None = None,
) -> ProbeResult:
    """One tiny chat completion against `base_url` with `api_key` and `model`."""
    from openai import AsyncOpenAI

    client = AsyncOpenAI(api_key=api_key or NO_KEY, base_url=base_url, timeout=timeout_s,
                         max_retries=0, http_client=http_client)  # fmt: skip
    body = {"model": model, "messages": [{"role": "user", "content": PROBE_MESSAGE}],
            "max_tokens": 16}  # fmt: skip
    started = time.perf_counter()
    try:
        response = await post_chat(client, body, timeout_s=timeout_s)
    except Exception as exc:  # every failure is an outcome for the operator, never a 500
        outcome, status = classify_failure(exc)
        return ProbeResult(outcome, _ms(started), status, _message(exc))
    finally:
        if http_client is None:
            await client.close()
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list) or not choices:
        return ProbeResult("bad_response", _ms(started))
    content = getattr(getattr(choices[0], "message", None), "content", None)
    return ProbeResult("answered", _ms(started), 200, answer=str(content or "")[:60])


def _ms(started: float) -> int:
    return round((time.perf_counter() - started) * 1000)


def probe_verdict_zh(result: ProbeResult, model: str) -> str:
    """The sentence the console shows after 测试连接."""
    status = f"（HTTP {result.status}）" if result.status else ""
    return {
        "answered": f"连接成功：{model} 在 {result.latency_ms} 毫秒内回答了。",
        "key_refused": f"API Key 被拒绝{status}：检查 Key 是否复制完整、是否属于这个服务商。",
        "model_not_found": f"模型不存在{status}：服务商不认识「{model}」，检查模型名。",
        "wrong_url": f"接口地址不对{status}：检查地址（通常以 /v1 结尾）。",
        "unreachable": "连不上：接口地址无法访问（地址写错、网络不通或服务没开）。",
        "timeout": "超时：服务商在规定时间内没有回答，稍后再试或换一个服务商。",
        "no_credit": f"账户余额或额度不足{status}：到服务商那里充值后再试。",
        "rate_limited": f"请求太频繁{status}：稍等一会儿再试。",
        "server_error": f"服务商出错{status}：稍后再试。",
        "bad_response": "回答的格式不对：这个地址可能不是 OpenAI 兼容接口。",
        "refused": f"请求被拒绝{status}。",
    }[result.outcome]


__all__ = ["ProbeResult", "classify_failure", "probe_chat", "probe_verdict_zh"]
