"""Pallas entry point: `python bot.py` (or `make run`).

`PALLAS_PROFILE=path.pstats python bot.py` profiles the event-loop thread (start-up included)
with cProfile and writes the stats to `path.pstats` at exit; read them with
`python -m pstats path.pstats` (`sort cumtime`, `stats 30`) — see docs/performance.md.
"""

import atexit
import cProfile
import os

from pallas.core import gc_tuning, gil_tuning, malloc_tuning

# Before the threads and the big loads (see pallas/core/malloc_tuning.py); PALLAS_MALLOC_DEFAULTS=1
# keeps glibc's defaults, e.g. to compare footprints.
if not os.environ.get("PALLAS_MALLOC_DEFAULTS"):
    malloc_tuning.tune()
# The event loop waits at most 1 ms for the GIL held by a worker thread (gil_tuning.py).
if not os.environ.get("PALLAS_SWITCH_INTERVAL_DEFAULT"):
    gil_tuning.tune()
# The start-up heap is frozen once the bot is up (pallas/core/gc_tuning.py, onebot/lifecycle.py).
if os.environ.get("PALLAS_GC_THRESHOLDS"):
    gc_tuning.tune()

if _trace_path := os.environ.get("PALLAS_TRACEMALLOC"):
    # Memory diagnostics: the first SIGUSR2 starts tracemalloc, each later one dumps a
    # snapshot to PATH.1, PATH.2, ... (compare them with tracemalloc.Snapshot.load).
    import signal
    import tracemalloc

    _dumps = iter(range(1, 1000))

    def _on_sigusr2(*_: object) -> None:
        if not tracemalloc.is_tracing():
            tracemalloc.start(int(os.environ.get("PALLAS_TRACEMALLOC_FRAMES", "1")))
        else:
            tracemalloc.take_snapshot().dump(f"{_trace_path}.{next(_dumps)}")

    signal.signal(signal.SIGUSR2, _on_sigusr2)

if _profile_path := os.environ.get("PALLAS_PROFILE"):
    _profiler = cProfile.Profile()
    _profiler.enable()

    def _dump_profile() -> None:
        _profiler.disable()
        _profiler.dump_stats(_profile_path)

    atexit.register(_dump_profile)

import logging

import nonebot
from nonebot.log import LoguruHandler

from pallas.core.secrets_file import edge_environment_for_start
from pallas.onebot import lifespan, log_setup, plugin_loading
from pallas.onebot.adapter import GuardedAdapter as OneBotV11Adapter

# Route the core's stdlib logging ("pallas.*") through NoneBot's loguru sink: one log, one format.
_pallas_log = logging.getLogger("pallas")
_pallas_log.addHandler(LoguruHandler())
_pallas_log.setLevel(logging.INFO)
_pallas_log.propagate = False

# The superusers and the OneBot token saved on the console's 模型 page (data/secrets.toml), for
# whichever of them neither the environment nor .env sets: NoneBot reads them once, here.
os.environ.update(edge_environment_for_start(os.environ))
nonebot.init()
# NoneBot's sink at LOG_LEVEL itself, its per-message lines at DEBUG (pallas/onebot/log_setup.py)
log_setup.install(nonebot.get_driver().config.log_level)
# and, when PALLAS_LOG_FILE is set, a rotating file with the same lines (size-capped)
log_setup.install_file_from_env(os.environ, nonebot.get_driver().config.log_level)
# and the newest lines in memory, for the web console's log tail (/console/logs)
log_setup.install_ring(nonebot.get_driver().config.log_level)
driver = nonebot.get_driver()
driver.register_adapter(OneBotV11Adapter)
# Pallas's start-up / ready / shut-down and its one message entry; the plugins declare their
# parts in their metadata and the lifespan collects them when the app is up.
lifespan.install(driver)
# [tool.nonebot] of pyproject.toml as NoneBot's load_from_toml reads it, plus builtin_plugins and
# PALLAS_PLUGINS; a plugin that is missing, fails to import or whose start-up hook raises is an
# ERROR line and the bot starts without it (pallas/onebot/plugin_loading.py)
plugin_loading.load_from_pyproject("pyproject.toml")

app = nonebot.get_asgi()

if __name__ == "__main__":
    nonebot.run()
