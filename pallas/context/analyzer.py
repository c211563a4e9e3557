"""Injection snapshots: a record of what one REPLY turn showed the model, and how to read it.

`build_snapshot` turns a built request into a typed `TurnSnapshot` (`snapshot_data`: its JSON):
sections with chars / tokens and their provenance, the messages sequence, trims, stage timings,
the routing decision, the exact request and what came back. `render_snapshot` prints it for
`pallas context` and `/pallas context`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pallas.context.context import ChatContextBundle
from pallas.context.request import ChatRequest
from pallas.context.snapshot import TurnSnapshot
from pallas.core.tokens import count_tokens


def _section_rows(request: ChatRequest, count: Callable[[str], int]) -> list[dict[str, Any]]:
    return [
        {
            "id": s.section_id,
            "chars": len(s.text),
            "tokens": count(s.text),
            "source": s.source,
            "source_tokens": list(s.source_tokens),
            "memory_ids": list(s.memory_ids),
        }
        for s in request.draft.sections
    ]


def _message_rows(request: ChatRequest) -> list[dict[str, Any]]:
    return [
        {
            "role": m.role,
            "kind": m.kind,
            "chars": len(m.text),
            "tokens": count_tokens(m.text),
            "source_token": m.source_token,
            "ref_ids": list(m.ref_ids),
        }
        for m in request.draft.messages
    ]


def _budget(request: ChatRequest) -> dict[str, Any]:
    report = request.budget_report
    if report is None:
        return {}
    return {
        "char_budget": report.char_budget,
        "token_budget": report.token_budget,
        "chars_before": report.chars_before,
        "chars_after": report.chars_after,
        "tokens_before": report.tokens_before,
        "tokens_after": report.tokens_after,
        "over_budget": report.over_budget,
        "trims": [
            {
                "target": t.target,
                "item": t.item_id,
                "kind": t.kind,
                "action": t.action,
                "chars_removed": t.chars_removed,
                "reason": t.reason,
            }
            for t in report.trims
        ],
    }


def build_snapshot(
    request: ChatRequest,
    bundle: ChatContextBundle,
    *,
    decision: Mapping[str, Any],
    stage_ms: Mapping[str, float],
    count: Callable[[str], int] = count_tokens,
) -> TurnSnapshot:
    """Everything known before the LLM call; the reply step fills the later fields.
    `count`: exact tokens of a section (the reply path's `PieceTokenCounter.count`)."""
    return TurnSnapshot(
        decision=dict(decision),
        sections=_section_rows(request, count),
        messages=_message_rows(request),
        budget=_budget(request),
        pipeline=[
            {"id": s.processor_id, "status": s.status, "ms": round(s.duration_ms, 3)}
            for s in request.steps
        ],
        retrieval={
            "traces": dict(bundle.traces),
            "stage_ms": dict(bundle.stage_durations_ms),
            "failed": list(bundle.failed_sources),
        },
        stage_ms=dict(stage_ms),
        processor_traces={
            k.removeprefix("trace."): v
            for k, v in request.draft.meta.items()
            if k.startswith("trace.")
        },
        request=[dict(m) for m in request.messages],
        warnings=list(request.warnings),
        rules=dict(request.draft.meta.get("rules") or {}),
    )


def snapshot_data(
    request: ChatRequest,
    bundle: ChatContextBundle,
    *,
    decision: Mapping[str, Any],
    stage_ms: Mapping[str, float],
) -> dict[str, Any]:
    """`build_snapshot(...).to_dict()`: the JSON the orchestrator completes as the turn goes."""
    return build_snapshot(request, bundle, decision=decision, stage_ms=stage_ms).to_dict()


def _table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> list[str]:
    if not rows:
        return ["  (none)"]
    widths = [max(len(c), *(len(str(r.get(c, ""))) for r in rows)) for c in columns]
    lines = ["  " + "  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    for row in rows:
        cells = [str(row.get(c, "")) for c in columns]
        lines.append("  " + "  ".join(v.ljust(w) for v, w in zip(cells, widths, strict=True)))
    return lines


def chosen_summary(trace: Mapping[str, Any]) -> str:
    """What a retrieval block chose, e.g. "chosen m3, m7 (of 12 scored, 2 dropped)"; the web
    console shows the same line."""
    chosen = ", ".join(map(str, trace.get("chosen") or []))
    fallback = ", ".join(map(str, trace.get("fallback") or []))
    dropped = sum(len(v or []) for k, v in trace.items() if str(k).startswith("dropped_by_"))
    if isinstance(trace.get("dropped"), Mapping):  # bounded trace: lists cut, counts complete
        dropped = sum(int(n) for n in trace["dropped"].values())
    scored = trace.get("scored", len(trace.get("candidates") or []))
    head = f"chosen {chosen}" if chosen else "nothing chosen"
    extra = f" + fallback {fallback}" if fallback else ""
    return f"{head}{extra} (of {scored} scored, {dropped} dropped)"


def _chosen_line(label: str, trace: Mapping[str, Any]) -> str:
    return f"  {label}: {chosen_summary(trace)}"


def _trace_lines(name: str, trace: Any) -> list[str]:
    """One line per retrieval block of a source trace: what was chosen, or why skipped."""
    if not isinstance(trace, Mapping):
        return [f"  {name}: {trace}"]
    if "skipped" in trace:
        return [f"  {name}: skipped ({trace['skipped']})"]
    out = [_chosen_line(name, trace)] if "chosen" in trace else []
    for key, sub in trace.items():
        if isinstance(sub, Mapping) and "chosen" in sub:
            out.append(_chosen_line(f"{name}.{key}", sub))
        elif isinstance(sub, Mapping) and "activated" in sub:
            ids = ", ".join(str(a.get("id")) for a in sub.get("activated", [])) or "-"
            out.append(f"  {name}.{key}: activated {ids} (tokens {sub.get('budget')})")
            skipped = [
                f"{x.get('id')} ({x.get('reason')})"
                for x in sub.get("skipped", [])
                if x.get("reason") not in ("no_primary_match", "disabled")
            ]
            if skipped:  # budget drops, cooldowns, lost groups …: never silent
                out.append(f"  {name}.{key}: not injected {', '.join(skipped)}")
    return out or [f"  {name}: {', '.join(sorted(map(str, trace)))}"]


def _retrieval_lines(data: Mapping[str, Any]) -> list[str]:
    retrieval = data.get("retrieval") or {}
    lines = ["", "retrieval:"]
    for name, trace in (retrieval.get("traces") or {}).items():
        lines += _trace_lines(name, trace)
    if retrieval.get("failed"):
        lines.append(f"  failed sources: {', '.join(retrieval['failed'])}")
    for section in data.get("sections", []):
        ids = section.get("memory_ids") or []
        if ids and section.get("id") != "group_timeline":
            shown = ", ".join(ids[:16]) + (" …" if len(ids) > 16 else "")
            lines.append(f"  section {section.get('id')} ← {shown}")
    return lines if len(lines) > 2 else []


def _rules_lines(data: Mapping[str, Any]) -> list[str]:
    """What the rule processors did (regex, worldbook, macros, injections, output regex)."""
    rules = dict(data.get("rules") or {})
    if data.get("output_regex"):
        rules["output_regex"] = data["output_regex"]
    lines = ["", "rules:"] if rules else []
    for key, value in rules.items():
        lines.append(f"  {key}: {json.dumps(value, ensure_ascii=False)}")
    return lines


def _model_tool_lines(model_tools: Any) -> list[str]:
    """The MCP tools offered on the turn, those refused with their reason, and each call."""
    if not isinstance(model_tools, dict):
        return []
    refused = ", ".join(f"{name} ({why})" for name, why in model_tools.get("refused", []))
    lines = [
        f"model tools: offered {', '.join(model_tools.get('offered', [])) or 'none'}"
        + (f"; refused {refused}" if refused else "")
    ]
    for call in model_tools.get("calls", []):
        state = "ok" if call.get("ok") else "failed"
        lines.append(
            f"  call {call.get('tool')} {call.get('args')} → {state} ({call.get('reason')}, "
            f"{call.get('chars')} chars, {call.get('ms')} ms)"
        )
    return lines


def _chat(group_id: Any) -> str:
    return f"group {group_id}" if group_id else "private chat"


def render_snapshot(snapshot: Mapping[str, Any], *, with_request: bool = True) -> str:
    """Human-readable view of one stored snapshot (`InjectionSnapshot` fields + data)."""
    data = snapshot.get("data", {})
    head = (
        f"turn {snapshot.get('turn_id')} · {_chat(snapshot.get('group_id'))} · "
        f"user {snapshot.get('user_id')} · message {snapshot.get('message_id')} · "
        f"model {snapshot.get('model')} · outcome {snapshot.get('outcome')}"
    )
    decision = data.get("decision", {})
    lines = [head, f"decision: {decision.get('outcome')} ({decision.get('reason')})"]
    steps = data.get("pipeline") or []
    if steps:
        lines.append("pipeline: " + " · ".join(f"{s.get('id')}:{s.get('status')}" for s in steps))
    lines += ["", "system sections:"]
    lines += _table(data.get("sections", []), ("id", "chars", "tokens", "source"))
    lines += ["", "messages:"]
    lines += _table(data.get("messages", []), ("role", "kind", "chars", "tokens", "source_token"))
    budget = data.get("budget", {})
    if budget:
        lines += [
            "",
            f"budget: chars {budget.get('chars_before')}→{budget.get('chars_after')} "
            f"/ {budget.get('char_budget')}, tokens {budget.get('tokens_before')}→"
            f"{budget.get('tokens_after')} / {budget.get('token_budget')}",
        ]
        lines += [
            f"  trimmed {t['target']} {t['item']} ({t['action']}, -{t['chars_removed']} chars, "
            f"{t['reason']})"
            for t in budget.get("trims", [])
        ]
    lines += _retrieval_lines(data)
    lines += _rules_lines(data)
    tool = data.get("tool") or {}
    if "tool" in tool:
        lines.append(
            f"tool: {tool.get('tool')} {tool.get('args', {})} permitted={tool.get('permitted')} "
            f"({tool.get('reason')})"
            + (f" → {tool.get('result')} [{tool.get('why')}]" if "result" in tool else "")
        )
    lines += _model_tool_lines(tool.get("model_tools"))
    for pid, trace in (data.get("processor_traces") or {}).items():
        lines.append(f"processor {pid}: {json.dumps(trace, ensure_ascii=False)[:600]}")
    if data.get("svars"):
        lines.append(f"svars: {json.dumps(data['svars'], ensure_ascii=False)[:600]}")
    if data.get("usage"):
        lines.append(f"usage: {data['usage']}")
    if data.get("bubbles") is not None:
        lines.append(f"bubbles: {data.get('bubbles')}")
    if with_request:
        lines += ["", "request:", json.dumps(data.get("request", []), ensure_ascii=False, indent=1)]
    return "\n".join(lines)
