"""Loading the plugins `pyproject.toml` lists, the NoneBot way, without one plugin stopping the bot.

`bot.py` calls `load_from_pyproject` instead of NoneBot's `load_from_toml`; it reads the same
table, in the same order, plus what `load_from_toml` ignores:

    [tool.nonebot]
    plugin_dirs = ["packages"]          Pallas's own plugins
    builtin_plugins = ["echo"]          NoneBot's built-in plugins (`load_builtin_plugins`)

    [tool.nonebot.plugins]              what `nb plugin install` writes (pip name → modules)
    nonebot-plugin-status = ["nonebot_plugin_status"]

and `PALLAS_PLUGINS` (a comma-separated list of modules) adds plugins without editing the file,
e.g. for a container or a test.

A plugin that is not installed is one ERROR line and is skipped; one whose import raises is
NoneBot's own "Failed to import" ERROR record (with its traceback) and is skipped; one whose
start-up (or shut-down) hook raises is one ERROR line when the hook runs. In every case Pallas
starts anyway: the hooks a plugin registers while it is imported are wrapped
(`guarded_hooks`), so an exception no longer ends NoneBot's start-up.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import tomllib
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from itertools import chain
from pathlib import Path
from typing import Any

import nonebot
from nonebot.utils import is_coroutine_callable, run_sync

log = logging.getLogger("pallas.plugins")

EXTRA_PLUGINS_ENV = "PALLAS_PLUGINS"

Hook = Callable[[], Any]


def plugin_table(path: str | Path) -> dict[str, Any]:
    """`[tool.nonebot]` of the file (empty when it has none)."""
    with open(path, "rb") as f:
        data = tomllib.load(f)
    table = data.get("tool", {}).get("nonebot", {})
    return table if isinstance(table, dict) else {}


def listed_plugins(table: Mapping[str, Any], env: Mapping[str, str]) -> list[str]:
    """The plugin modules to load: `[tool.nonebot.plugins]` (the table nb-cli writes, or the
    legacy list), then `PALLAS_PLUGINS`; each once, in order."""
    plugins = table.get("plugins", {})
    if isinstance(plugins, dict):
        names: Iterable[str] = chain.from_iterable(plugins.values())
    else:
        names = plugins or []
    extra = [n.strip() for n in env.get(EXTRA_PLUGINS_ENV, "").split(",") if n.strip()]
    return list(dict.fromkeys([*map(str, names), *extra]))


def requirements(table: Mapping[str, Any]) -> list[str]:
    """The pip names of `[tool.nonebot.plugins]` (what the Docker image and `make run` install);
    `@local` entries are modules of the project itself."""
    plugins = table.get("plugins", {})
    if not isinstance(plugins, dict):
        return []
    return [str(name) for name in plugins if not str(name).startswith("@")]


def installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module.split(".")[0]) is not None
    except (ImportError, ValueError):
        return False


def guard(hook: Hook, plugin: str, when: str) -> Callable[[], Awaitable[None]]:
    """`hook` run as NoneBot would (a sync one in a worker thread); an exception is one ERROR
    line, and the bot goes on."""

    async def guarded() -> None:
        try:
            if is_coroutine_callable(hook):
                await hook()
            else:
                await run_sync(hook)()
        except Exception as exc:  # another plugin's bug must not stop Pallas starting
            log.error(
                "plugin %s: its %s hook %s failed (%s: %s); Pallas goes on without it",
                plugin,
                when,
                getattr(hook, "__qualname__", hook),
                type(exc).__name__,
                exc,
            )

    guarded.__qualname__ = f"guarded({getattr(hook, '__qualname__', hook)})"
    return guarded


@contextlib.contextmanager
def guarded_hooks(driver: Any, plugin: str) -> Iterator[None]:
    """While `plugin` is imported, the start-up and shut-down hooks it registers are guarded."""
    on_startup, on_shutdown = driver.on_startup, driver.on_shutdown

    def startup(hook: Hook) -> Hook:
        on_startup(guard(hook, plugin, "start-up"))
        return hook

    def shutdown(hook: Hook) -> Hook:
        on_shutdown(guard(hook, plugin, "shut-down"))
        return hook

    driver.on_startup, driver.on_shutdown = startup, shutdown
    try:
        yield
    finally:
        driver.on_startup, driver.on_shutdown = on_startup, on_shutdown


def load_from_pyproject(
    path: str | Path = "pyproject.toml", env: Mapping[str, str] | None = None
) -> None:
    """NoneBot's built-in plugins, the listed plugins, then the plugin dirs (Pallas's own)."""
    table = plugin_table(path)
    driver = nonebot.get_driver()
    builtin = [str(name) for name in table.get("builtin_plugins", []) or []]
    if builtin:
        nonebot.load_builtin_plugins(*builtin)
    for module in listed_plugins(table, os.environ if env is None else env):
        if not installed(module):
            log.error(
                "plugin %s is listed but not installed (pip install it, or remove it from "
                "[tool.nonebot.plugins]); Pallas starts without it",
                module,
            )
            continue
        with guarded_hooks(driver, module):
            nonebot.load_plugin(module)  # a failed import: NoneBot's one ERROR record
    dirs = [str(d) for d in table.get("plugin_dirs", []) or []]
    if dirs:
        nonebot.load_plugins(*dirs)


def main() -> None:
    """`python -m pallas.onebot.plugin_loading`: the pip names of the listed plugins, one a
    line (the Dockerfile and `make run` install them)."""
    print("\n".join(requirements(plugin_table("pyproject.toml"))))


if __name__ == "__main__":
    main()


__all__ = [
    "guard",
    "guarded_hooks",
    "listed_plugins",
    "load_from_pyproject",
    "plugin_table",
    "requirements",
]
