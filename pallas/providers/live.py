"""The model endpoints in force, replaceable while the bot runs (the console's 模型 page).

An `EndpointSet` is one consistent set: the settings in force (the environment overlaid with
the secrets file, `pallas.core.secrets_file`), where each model field came from, and every
task's endpoint chain built from them. It is never changed: a new key or base URL builds a new
set, and `LiveEndpoints` — the one holder, owned by the runtime and read by the LLM client at
the start of every call — swaps it in. A call already under way finishes on the set it started
with; the next call uses the new one (the client builds SDK clients per endpoint identity, so
a new key gets a new SDK client, and nothing built is patched).

The swap happens when the console saves (`reload()`, this process at once) and when the file
changes under a running process (another process of the deployment saved: `current()` looks at
the file's modification stamp at most once a second).
"""

from __future__ import annotations

import logging
import os
import time
import tomllib
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from pallas.core.secrets_file import (
    MODEL_FIELDS,
    InForce,
    Source,
    backup_keys,
    overlay,
    read_secrets,
    secrets_path,
    update_secrets,
)
from pallas.core.settings import PallasSettings
from pallas.providers.embedding_auto import EmbeddingSwitch
from pallas.providers.endpoints import (
    PROVIDERS_FILE,
    TASKS,
    Endpoint,
    ProvidersConfig,
    Task,
    load_providers,
    resolve_chain,
)

log = logging.getLogger("pallas.llm")

CHECK_INTERVAL_S = 1.0  # how often `current()` may look at the secrets file


@dataclass(frozen=True, slots=True)
class EndpointSet:
    """The settings in force and the endpoint chains built from them (replaced whole). Its
    `embeddings` switch is the one live part: the embedding probe sets its state once."""

    generation: int
    settings: PallasSettings
    sources: Mapping[str, Source]
    chains: Mapping[Task, tuple[Endpoint, ...]]
    embeddings: EmbeddingSwitch

    @property
    def enabled(self) -> bool:
        return self.settings.replies_enabled

    @classmethod
    def build(
        cls,
        generation: int,
        in_force: InForce,
        providers: ProvidersConfig,
        env: Mapping[str, str] | None = None,
        embeddings: EmbeddingSwitch | None = None,
    ) -> EndpointSet:
        """`embeddings`: the previous set's switch when the primary's embedding inputs did not
        change (its probe's verdict still holds); a new one, to be probed, otherwise."""
        settings = in_force.settings
        chains = {task: resolve_chain(settings, providers, task, env) for task in TASKS}
        switch = embeddings or EmbeddingSwitch.of(settings)
        return cls(generation, settings, in_force.sources, chains, switch)


def embedding_basis(settings: PallasSettings) -> tuple[str, str, str]:
    """What the embedding plan and its probe depend on."""
    return (settings.openai_base_url, settings.openai_api_key, settings.pallas_embedding_model)


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


class LiveEndpoints:
    """The one holder of the endpoint set in force (see the module doc)."""

    def __init__(
        self,
        base: PallasSettings,
        providers: ProvidersConfig | None = None,
        *,
        data_dir: Path | None = None,
        config_dir: Path | None = None,
        env: Mapping[str, str] | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        """`base`: the settings from the environment; `data_dir`: where the secrets file is
        (None: no file, the environment alone, as tests and the CLI's offline commands);
        `config_dir`: where `providers.toml` is read from (again on every reload; None: the
        `providers` given, fixed)."""
        self._base = base
        self._config_dir = config_dir
        self._providers = (
            load_providers(config_dir)
            if config_dir is not None
            else (providers or ProvidersConfig())
        )
        self._path = secrets_path(data_dir) if data_dir is not None else None
        self._env = env
        self._monotonic = monotonic
        self._checked_at = monotonic()
        self._stamp = self._stamps()
        self._set = EndpointSet.build(0, self._in_force(), self._providers, self.key_env())

    @property
    def providers(self) -> ProvidersConfig:
        return self._providers

    @property
    def providers_path(self) -> Path | None:
        return self._config_dir / PROVIDERS_FILE if self._config_dir is not None else None

    def _stamps(self) -> tuple[object, ...]:
        paths = (self._path, self.providers_path)
        return tuple(_stamp(p) if p is not None else None for p in paths)

    def key_env(self) -> dict[str, str]:
        """The variables backup endpoints name for their keys: the environment's non-empty
        ones win over the keys saved in the console."""
        saved = backup_keys(self._path.parent) if self._path is not None else {}
        env = os.environ if self._env is None else self._env
        return {**saved, **{k: v for k, v in env.items() if v.strip()}}

    def key_sources(self, names: Collection[str]) -> dict[str, Source]:
        """Where each named key variable comes from: env / file / default (unset)."""
        saved = backup_keys(self._path.parent) if self._path is not None else {}
        env = os.environ if self._env is None else self._env
        out: dict[str, Source] = {}
        for name in names:
            given = env.get(name, "").strip()
            out[name] = "env" if given else "file" if saved.get(name) else "default"
        return out

    @property
    def base(self) -> PallasSettings:
        """The settings from the environment alone (what a saved value must not override)."""
        return self._base

    def _in_force(self) -> InForce:
        saved = read_secrets(self._path.parent) if self._path is not None else {}
        return overlay(self._base, saved)

    def current(self) -> EndpointSet:
        """The set in force; a secrets file changed by another process is picked up here."""
        if self._path is not None or self._config_dir is not None:
            now = self._monotonic()
            if now - self._checked_at >= CHECK_INTERVAL_S:
                self._checked_at = now
                if self._stamps() != self._stamp:
                    return self.reload()
        return self._set

    @property
    def writable(self) -> bool:
        """Whether saving is possible (a data directory is known)."""
        return self._path is not None

    def saved(self) -> dict[str, str]:
        """What the secrets file holds now ({} without one)."""
        return read_secrets(self._path.parent) if self._path is not None else {}

    def save(self, values: Mapping[str, str]) -> EndpointSet:
        """Write the secrets file (0600) and swap in the set built from it, in this process at
        once (the deployment's other processes within `CHECK_INTERVAL_S` of their next call)."""
        if self._path is None:
            raise RuntimeError("no data directory: the model settings cannot be saved")
        update_secrets(self._path.parent, {k: values.get(k, "") for k in MODEL_FIELDS})
        return self.reload()

    def save_backup_key(self, variable: str, key: str) -> EndpointSet:
        """Save a backup endpoint's key (by the variable `providers.toml` names)."""
        if self._path is None:
            raise RuntimeError("no data directory: the key cannot be saved")
        update_secrets(self._path.parent, {f"key.{variable}": key})
        return self.reload()

    def save_providers(self, text: str) -> EndpointSet:
        """Replace `providers.toml` with `text` (validated first: ValueError with the reason)
        and swap in the chains built from it."""
        path = self.providers_path
        if path is None:
            raise RuntimeError("no config directory: providers.toml cannot be saved")
        try:
            ProvidersConfig.model_validate(tomllib.loads(text))
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"TOML 格式错误：{exc}") from exc
        except ValidationError as exc:
            raise ValueError(validation_zh(exc)) from exc
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
        return self.reload()

    def reload(self) -> EndpointSet:
        """Read the file again and swap in a set built from it (the console's 保存)."""
        self._stamp = self._stamps()
        self._checked_at = self._monotonic()
        if self._config_dir is not None:
            self._providers = load_providers(self._config_dir)
        old = self._set
        in_force = self._in_force()
        same = embedding_basis(in_force.settings) == embedding_basis(old.settings)
        fresh = EndpointSet.build(old.generation + 1, in_force, self._providers, self.key_env(),
                                  old.embeddings if same else None)  # fmt: skip
        self._set = fresh
        if _identity(old) != _identity(fresh):
            log.info(
                "model endpoints replaced (generation %s): %s, chat %s, replies %s",
                fresh.generation,
                fresh.settings.openai_base_url,
                fresh.settings.pallas_chat_model,
                "on" if fresh.enabled else "off",
            )
        return fresh


def validation_zh(exc: ValidationError) -> str:
    """A providers.toml validation error, one line per problem, with its place."""
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error.get("loc", ()))
        parts.append(f"{where}：{error.get('msg', '')}" if where else str(error.get("msg", "")))
    return "；".join(parts)


def _identity(endpoints: EndpointSet) -> tuple[object, ...]:
    return tuple((t, e.name, e.base_url, e.api_key, e.model)
                 for t, chain in endpoints.chains.items() for e in chain)  # fmt: skip


__all__ = ["CHECK_INTERVAL_S", "EndpointSet", "LiveEndpoints", "embedding_basis"]
