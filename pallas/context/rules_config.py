"""`[context_rules]`: regex rules, placed injections and macro values of one group.

    [context_rules]
    group_name = "罗德岛干员群"        # {{group}}
    regex_timeout_ms = 50              # per rule and text

    [[context_rules.regex]]            # see regex_rules.py
    name = "strip-narration"
    pattern = "（旁白：[^）]*）"
    roles = ["assistant"]
    max_depth = 9

    [[context_rules.injections]]       # a placed prompt override
    name = "stay-in-character"
    text = "（提醒：{{char}}正在和{{user}}说话，保持角色。）"
    position = "depth"   # before_char | after_char | depth | before_section | after_section
    depth = "3"                        # "5" · "3, 10, 15" · "10~5" · mixes
    role = "system"                    # depth only: system | user | assistant
    anchor = "group_timeline"          # before_section / after_section only: a section id

Global regex rules live in `config/regex/*.toml` as `[[regex]]` tables (`RegexLibrary`), the
persona pack's as `[[regex]]` in the pack.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from pallas.context.depth_spec import DepthSyntaxError, parse_depth
from pallas.context.macros import MacroEnv
from pallas.context.regex_rules import DEFAULT_TIMEOUT_MS, RegexRuleConfig, RuleSet, build_rule_set
from pallas.context.sections import SECTION_IDS
from pallas.core.config_files import TomlFileCache, describe_validation_error

log = logging.getLogger("pallas.context.rules")

Position = Literal["before_char", "after_char", "depth", "before_section", "after_section"]


class InjectionConfig(BaseModel):
    """A prompt text placed by position: next to the persona or a section, or at a depth."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=64)
    text: str = Field(min_length=1, max_length=4000)
    position: Position = "after_char"
    depth: str = "4"
    role: Literal["system", "user", "assistant"] = "system"
    anchor: str = ""
    enabled: bool = True

    @field_validator("depth", mode="before")
    @classmethod
    def _depth(cls, value: Any) -> str:
        text = str(value)
        try:
            parse_depth(text)
        except DepthSyntaxError as exc:
            raise ValueError(str(exc)) from None
        return text

    @model_validator(mode="after")
    def _anchor(self) -> InjectionConfig:
        if self.position in ("before_section", "after_section") and (
            self.anchor not in SECTION_IDS
        ):
            raise ValueError(
                f"injection {self.name!r}: anchor must be a section id, one of {SECTION_IDS}"
            )
        return self


class ContextRulesConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    group_name: str = Field(default="", max_length=64)
    regex_timeout_ms: int = Field(default=DEFAULT_TIMEOUT_MS, ge=1, le=2000)
    regex: tuple[RegexRuleConfig, ...] = ()
    injections: tuple[InjectionConfig, ...] = ()


class RegexFile(BaseModel):
    """One global `config/regex/<name>.toml`."""

    model_config = ConfigDict(extra="forbid")

    regex: list[RegexRuleConfig] = Field(default_factory=list)


def _validate(path: Path, data: dict[str, Any]) -> None:
    RegexFile.model_validate(data)


class RegexLibrary:
    """Global rules from a folder, hot-reloaded; a broken file keeps its last good rules."""

    def __init__(self, directory: Path, *, check_interval: float = 1.0) -> None:
        self.directory = directory
        self.check_interval = check_interval
        self._files = TomlFileCache(check_interval=check_interval, validate=_validate)
        self._levels: tuple[float, list[tuple[str, Sequence[RegexRuleConfig]]]] | None = None

    def levels(self) -> list[tuple[str, Sequence[RegexRuleConfig]]]:
        """Each file's rules, by file name. The folder is looked at (and the files checked)
        at most once per `check_interval`, not on every turn."""
        now = time.monotonic()
        if self._levels is not None and 0 <= now - self._levels[0] < self.check_interval:
            return list(self._levels[1])
        levels = self._read_levels()
        self._levels = (now, levels)
        return list(levels)

    def _read_levels(self) -> list[tuple[str, Sequence[RegexRuleConfig]]]:
        if not self.directory.is_dir():
            return []
        out: list[tuple[str, Sequence[RegexRuleConfig]]] = []
        for path in sorted(self.directory.glob("*.toml")):
            data = self._files.read(path)
            try:
                rules = RegexFile.model_validate(data).regex
            except ValidationError as exc:  # pragma: no cover - rejected by _validate
                log.error("%s", describe_validation_error(path, exc))
                continue
            out.append((f"global:{path.name}", rules))
        return out

    def errors(self) -> dict[str, str]:
        """Current problems per file (the last good rules of that file stay in force)."""
        out: dict[str, str] = {}
        for path in sorted(self.directory.glob("*.toml")):
            self._files.read(path)
            if (message := self._files.error(path)) is not None:
                out[path.name] = message
        return out


_libraries: dict[Path, RegexLibrary] = {}


def regex_library(directory: Path) -> RegexLibrary:
    """One shared library per folder (the file cache lives as long as the process)."""
    library = _libraries.get(directory)  # as given: no path resolution on every turn
    if library is None:
        key = directory.resolve()
        library = _libraries.get(key) or RegexLibrary(key)
        _libraries[key] = _libraries[directory] = library
    return library


@dataclass(frozen=True, slots=True)
class TurnRules:
    """What the regex / worldbook / macro / injection processors read for one turn."""

    regex: RuleSet = field(default_factory=RuleSet)
    injections: tuple[InjectionConfig, ...] = ()
    macros: MacroEnv | None = None


def build_turn_rules(
    config: ContextRulesConfig,
    *,
    global_levels: Sequence[tuple[str, Sequence[RegexRuleConfig]]] = (),
    persona_rules: Sequence[RegexRuleConfig] = (),
    user: str,
    char: str,
    now: datetime,
    idle_seconds: float | None,
    tools: str,
    seed: str,
) -> TurnRules:
    levels = [*global_levels, ("persona", persona_rules), ("group", config.regex)]
    return TurnRules(
        regex=build_rule_set(levels, config.regex_timeout_ms),
        injections=tuple(i for i in config.injections if i.enabled),
        macros=MacroEnv(
            user=user,
            char=char,
            group=config.group_name,
            now=now,
            idle_seconds=idle_seconds,
            tools=tools,
            seed=seed,
        ),
    )
