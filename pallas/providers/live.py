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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from pallas.core.secrets_file import (
    MODEL_FIELDS,
    InForce,
    Source,
    overlay,
    read_secrets,
    secrets_path,
    update_secrets,
)
from pallas.core.settings import PallasSettings
from pallas.providers.endpoints import TASKS, Endpoint, ProvidersConfig, Task, resolve_chain

log = logging.getLogger("pallas.llm")

CHECK_INTERVAL_S = 1.0  # how often `current()` may look at the secrets file


@dataclass(frozen=True, slots=True)
class EndpointSet:
    """The settings in force and the endpoint chains built from them (replaced whole)."""

    generation: int
    settings: PallasSettings
    sources: Mapping[str, Source]
    chains: Mapping[Task, tuple[Endpoint, ...]]

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
    ) -> EndpointSet:
        settings = in_force.settings
        chains = {task: resolve_chain(settings, providers, task, env) for task in TASKS}
        return cls(generation, settings, in_force.sources, chains)


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
        env: Mapping[str, str] | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        """`base`: the settings from the environment; `data_dir`: where the secrets file is
        (None: no file, the environment alone, as tests and the CLI's offline commands)."""
        self._base = base
        self._providers = providers or ProvidersConfig()
        self._path = secrets_path(data_dir) if data_dir is not None else None
        self._env = env
        self._monotonic = monotonic
        self._checked_at = monotonic()
        self._stamp = _stamp(self._path) if self._path is not None else None
        self._set = EndpointSet.build(0, self._in_force(), self._providers, env)

    @property
    def providers(self) -> ProvidersConfig:
        return self._providers

    @property
    def base(self) -> PallasSettings:
        """The settings from the environment alone (what a saved value must not override)."""
        return self._base

    def _in_force(self) -> InForce:
        saved = read_secrets(self._path.parent) if self._path is not None else {}
        return overlay(self._base, saved)

    def current(self) -> EndpointSet:
        """The set in force; a secrets file changed by another process is picked up here."""
        if self._path is not None:
            now = self._monotonic()
            if now - self._checked_at >= CHECK_INTERVAL_S:
                self._checked_at = now
                if _stamp(self._path) != self._stamp:
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

    def reload(self) -> EndpointSet:
        """Read the file again and swap in a set built from it (the console's 保存)."""
        if self._path is not None:
            self._stamp = _stamp(self._path)
            self._checked_at = self._monotonic()
        fresh = EndpointSet.build(self._set.generation + 1, self._in_force(), self._providers,
                                  self._env)  # fmt: skip
        old = self._set
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


def _identity(endpoints: EndpointSet) -> tuple[object, ...]:
    return tuple((t, e.name, e.base_url, e.api_key, e.model)
                 for t, chain in endpoints.chains.items() for e in chain)  # fmt: skip


__all__ = ["CHECK_INTERVAL_S", "EndpointSet", "LiveEndpoints"]
