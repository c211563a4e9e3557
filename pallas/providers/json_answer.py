"""The JSON a model's answer carries, however it wraps it.

Asked for "only JSON", a model still answers with a `<think>` block first, a Markdown code fence
(```json … ```), a sentence around the object, or nothing usable at all. `json_payload` finds the
payload the way every caller needs it: the think blocks dropped (an unclosed one runs to the
end), the first fenced block if there is one, then from the first `{` or `[` — whichever opens
first — to the last matching closer; None when that is no JSON. `json_object` is the payload
when it is an object (a JSON schema's answer), else None.
"""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.DOTALL | re.IGNORECASE)


def json_payload(text: str) -> Any:
    """The JSON value in a model's answer (object or array), None when there is none."""
    text = _THINK.sub("", text or "").strip()
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1).strip()
    pairs = sorted(
        (("{", "}"), ("[", "]")), key=lambda p: text.find(p[0]) if p[0] in text else len(text)
    )
    for opener, closer in pairs:  # the bracket that opens first is the payload
        start, end = text.find(opener), text.rfind(closer)
        if start != -1 and end > start:
            try:
                return json.loads(text[start : end + 1])
            except json.JSONDecodeError:
                continue
    return None


def json_object(text: str) -> dict[str, Any] | None:
    """The JSON object in a model's answer, None when it holds none (or an array)."""
    payload = json_payload(text)
    return payload if isinstance(payload, dict) else None


__all__ = ["json_object", "json_payload"]
