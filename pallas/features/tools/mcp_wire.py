"""MCP tools to and from the model, pure: OpenAI `tools` schemas, arguments, guarded results.

Everything a server says is untrusted, its descriptions as much as its results: a
description is flattened and capped before it is offered; a result is cut to the group's cap,
passed through the prompt guard like member text (headers and role markers neutralised) and,
when it reads like an instruction to the model, withheld altogether — a tool result can never
add instructions.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pallas.context.prompt_guard import looks_like_injection, sanitize_inline

SEP = "__"  # server__tool: the name the model sees
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
MAX_SCHEMA_CHARS = 8000  # a bigger input schema is not offered (it would eat the prompt)
MAX_ARGUMENT_CHARS = 4000
WITHHELD = "工具返回的内容像是在给你下指令，已丢弃，没有采用"


def model_name(server: str, tool: str) -> str:
    return f"{server}{SEP}{tool}"


def split_name(name: str) -> tuple[str, str] | None:
    server, sep, tool = name.partition(SEP)
    return (server, tool) if sep and server and tool else None


def openai_tool(
    server: str,
    tool: str,
    description: str,
    input_schema: Mapping[str, Any] | None,
    *,
    description_chars: int = 300,
) -> dict[str, Any] | None:
    """The tool in the OpenAI `tools` format, or None when it cannot be offered safely (a name
    the API refuses, a schema that is not an object or is too big)."""
    name = model_name(server, tool)
    if not _NAME.match(name):
        return None
    schema = dict(input_schema or {"type": "object", "properties": {}})
    if schema.get("type") != "object":
        return None
    if len(json.dumps(schema, ensure_ascii=False)) > MAX_SCHEMA_CHARS:
        return None
    function = {
        "name": name,
        "description": sanitize_inline(description or tool, description_chars),
        "parameters": schema,
    }
    return {"type": "function", "function": function}


@dataclass(frozen=True, slots=True)
class ParsedArguments:
    args: dict[str, Any] | None
    reason: str  # ok | bad_json | not_object | too_long


def parse_arguments(raw: str) -> ParsedArguments:
    """The model's `arguments` JSON as an object; a misused schema is a reason, not a raise."""
    if len(raw or "") > MAX_ARGUMENT_CHARS:
        return ParsedArguments(None, "too_long")
    try:
        value = json.loads(raw or "{}")
    except ValueError:
        return ParsedArguments(None, "bad_json")
    if not isinstance(value, dict):
        return ParsedArguments(None, "not_object")
    return ParsedArguments(value, "ok")


@dataclass(frozen=True, slots=True)
class CleanResult:
    text: str  # what the prompt may show ("" when nothing usable)
    reason: str  # ok | capped | injection | empty
    raw_chars: int


def result_text(blocks: Sequence[Any], structured: Any = None) -> str:
    """A tool result's text blocks joined; other blocks named; structured content as JSON
    when there is no text."""
    parts: list[str] = []
    for block in blocks:
        text = getattr(block, "text", None)
        if isinstance(text, str):
            parts.append(text)
        else:
            parts.append(f"[{getattr(block, 'type', 'content')}]")
    if not any(p.strip() for p in parts) and structured is not None:
        try:
            return json.dumps(structured, ensure_ascii=False)
        except (TypeError, ValueError):
            return ""
    return "\n".join(parts)


def clean_result(raw: str, cap: int) -> CleanResult:
    """A tool's text for the 【工具上下文】: capped, guarded, withheld if it instructs."""
    size = len(raw or "")
    if not (raw or "").strip():
        return CleanResult("", "empty", size)
    head = raw[: cap + 1]  # only what can reach the prompt is scanned
    text = sanitize_inline(head, cap)
    if looks_like_injection(head) or looks_like_injection(text):
        return CleanResult(WITHHELD, "injection", size)
    return CleanResult(text, "capped" if size > cap else "ok", size)
