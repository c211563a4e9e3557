"""Why a model call failed, in plain Chinese (the `LLMError` codes read aloud).

For the console's error list and routing page and `/pallas why`; the code itself stays next to
it (on hover, in parentheses) so an operator can still search the log for it.
"""

from __future__ import annotations

from pallas.providers.client import LLMError

LLM_ERROR_ZH: dict[str, str] = {
    LLMError.DISABLED: "回复已关闭（没有配置 API Key）",
    LLMError.TIMEOUT: "模型超时：规定时间内没有回答",
    LLMError.RATE_LIMITED: "模型服务限流（429）：请求太频繁或额度用完",
    LLMError.CONNECTION_ERROR: "连不上模型服务：网络断了或地址不对",
    LLMError.SERVER_ERROR: "模型服务出错（5xx）",
    LLMError.CLIENT_ERROR: "模型服务拒绝了请求（4xx）：密钥、模型名或请求太大",
    LLMError.BAD_RESPONSE: "模型服务的回答格式不对",
    LLMError.EMPTY: "模型回答是空的",
    LLMError.UNKNOWN: "模型调用出错（原因不明，见日志）",
    "llm_error": "模型调用出错（原因不明，见日志）",
}


def llm_error_zh(code: str) -> str | None:
    """`code` (an `LLMError` value) in Chinese, or None when it is not one."""
    return LLM_ERROR_ZH.get(code)
