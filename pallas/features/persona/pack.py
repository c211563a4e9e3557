"""Persona packs: `config/personas/<name>.toml`, hot-reloaded like group configs."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pallas.context.regex_rules import RegexRuleConfig
from pallas.core.config_files import TomlFileCache

log = logging.getLogger("pallas.persona")


class PersonaSections(BaseModel):
    model_config = ConfigDict(extra="forbid")

    base: str = ""
    self_identity: str = ""  # empty: compiled from the login nickname at runtime


class PersonaPack(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)  # one instance is shared per file

    name: str = Field(default="帕拉斯", min_length=1, max_length=32)
    aliases: list[str] = Field(default_factory=lambda: ["帕拉斯", "牛牛"])
    bot_label: str = "牛牛"  # how the bot's own lines are labelled in the group timeline
    other_bot_label: str = "别的牛"  # other bots of the same deployment in the timeline
    assistant_label: str = "帕拉斯"  # assistant rows in the 【群环境摘录】 ambient excerpt
    quote_label: str = "牛牛刚才说"  # header of the quote fallback block
    sections: PersonaSections = Field(default_factory=PersonaSections)
    regex: list[RegexRuleConfig] = Field(default_factory=list)  # persona-level regex rules


def _validate(path: Path, data: dict[str, Any]) -> None:
    PersonaPack.model_validate(data)


class PersonaStore:
    def __init__(self, personas_dir: Path, *, check_interval: float = 1.0) -> None:
        self._dir = personas_dir
        self._files = TomlFileCache(check_interval=check_interval, validate=_validate)
        self._warned: set[str] = set()
        # validated once per loaded file content: routing asks for the persona on every message
        self._packs: dict[Path, tuple[dict[str, Any], PersonaPack]] = {}
        self._default = PersonaPack()
        self._paths: dict[str, tuple[Path, str]] = {}

    def _path(self, name: str) -> tuple[Path, str]:
        safe = Path(name).name  # a group config can't point outside the personas folder
        return self._dir / f"{safe}.toml", safe

    def get(self, name: str) -> PersonaPack:
        known = self._paths.get(name)  # asked on every message: one Path per name
        if known is None:
            if len(self._paths) >= 1024:
                self._paths.clear()
            known = self._paths[name] = self._path(name)
        path, safe = known
        data = self._files.read(path)
        if not data:
            if not path.exists() and safe not in self._warned:
                self._warned.add(safe)
                log.warning("persona %r not found in %s; using built-in defaults", name, self._dir)
            return self._default
        cached = self._packs.get(path)
        if cached is not None and cached[0] is data:
            return cached[1]
        try:
            pack = PersonaPack.model_validate(data)
        except ValidationError:  # pragma: no cover - rejected earlier by _validate
            return self._default
        self._packs[path] = (data, pack)
        return pack
