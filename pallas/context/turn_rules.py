"""Build one REPLY turn's `TurnRules` (regex levels, injections, macro values) and run the
output-stage regex rules over the model's answer."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from pallas.context.chat_prompt import ToolResult, render_tool_context
from pallas.context.regex_rules import RegexRuleConfig, apply_rules, build_rule_set
from pallas.context.rules_config import (
    ContextRulesConfig,
    TurnRules,
    build_turn_rules,
    regex_library,
)
from pallas.core.records import StoredMessage
from pallas.core.turn import TurnInput

log = logging.getLogger("pallas.context.rules")


class RulesConfigView(Protocol):
    """The group config as the rules read it (`GroupConfig` is one; the config layer is above)."""

    @property
    def context_rules(self) -> ContextRulesConfig: ...


class PersonaRulesView(Protocol):
    """The persona pack as the rules read it (the persona slice's `PersonaPack`)."""

    @property
    def name(self) -> str: ...

    @property
    def regex(self) -> Sequence[RegexRuleConfig]: ...


def idle_seconds(turn: TurnInput, timeline: Sequence[StoredMessage]) -> float | None:
    """Seconds between the previous group message and this one (None: no earlier message)."""
    earlier = [m.time for m in timeline if m.message_id != turn.message_id and m.time <= turn.time]
    return max(0.0, turn.time - max(earlier)) if earlier else None


def tools_text(results: Sequence[ToolResult], rules: Sequence[str] = ()) -> str:
    """The tool context without its 【工具上下文】 header line (for `{{tools}}`)."""
    text = render_tool_context(results, rules=rules)
    return text.split("\n", 1)[1] if "\n" in text else ""


def rules_for_turn(
    turn: TurnInput,
    *,
    config: RulesConfigView,
    persona: PersonaRulesView,
    timeline: Sequence[StoredMessage],
    tool_results: Sequence[ToolResult],
    tool_rules: Sequence[str],
    now: float,
    config_dir: Path,
) -> TurnRules:
    return build_turn_rules(
        config.context_rules,
        global_levels=regex_library(config_dir / "regex").levels(),
        persona_rules=persona.regex,
        user=turn.speaker.display_name,
        char=persona.name,
        now=datetime.fromtimestamp(now, UTC),
        idle_seconds=idle_seconds(turn, timeline),
        tools=tools_text(tool_results, tool_rules),
        seed=f"{turn.bot_id}:{turn.group_id}:{turn.message_id}",
    )


def apply_output_rules(text: str, rules: TurnRules | None) -> tuple[str, list[dict[str, Any]]]:
    """Output-stage rules over the model's answer (role assistant, depth 0)."""
    active = rules.regex.for_stage("output") if rules else ()
    if not rules or not active:
        return text, []
    out, hits = apply_rules(
        text,
        active,
        role="assistant",
        depth=0,
        env=rules.macros,
        timeout_ms=rules.regex.timeout_ms,
    )
    return out, [{"rule": h.rule, "count": h.count, "timeout": h.timed_out} for h in hits]


ScanCleaner = Callable[[str, str, int], str]  # (text, role, depth) -> cleaned text


def scan_cleaner(
    config: RulesConfigView, regex_dir: Path, persona_rules: Sequence[RegexRuleConfig]
) -> ScanCleaner | None:
    """The request-stage rules as a function over scanned texts (worldbook keys match the
    cleaned text, as with the default order regex → worldbook). None: no rules."""
    rules_config = config.context_rules
    levels = [
        *regex_library(regex_dir).levels(),
        ("persona", persona_rules),
        ("group", rules_config.regex),
    ]
    rule_set = build_rule_set(levels, rules_config.regex_timeout_ms)
    active = rule_set.for_stage("request")
    if not active:
        return None

    def clean(text: str, role: str, depth: int) -> str:
        return apply_rules(text, active, role=role, depth=depth, timeout_ms=rule_set.timeout_ms)[0]

    return clean
