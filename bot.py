"""Pallas entry point: `python bot.py` (or `make run`).

`PALLAS_PROFILE=path.pstats python bot.py` profiles the event-loop thread (start-up included)
with cProfile and writes the stats to `path.pstats` at exit; read them with
`python -m pstats path.pstats` (`sort cumtime`, `stats 30`) — see README "Performance".
"""

import atexit
import cProfile
import os

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

from pallas.onebot.adapter import GuardedAdapter as OneBotV11Adapter

# Route the core's stdlib logging ("pallas.*") through NoneBot's loguru sink: one log, one format.
_pallas_log = logging.getLogger("pallas")
_pallas_log.addHandler(LoguruHandler())
_pallas_log.setLevel(logging.INFO)
_pallas_log.propagate = False

nonebot.init()
nonebot.get_driver().register_adapter(OneBotV11Adapter)
nonebot.load_from_toml("pyproject.toml")

app = nonebot.get_asgi()

if __name__ == "__main__":
    nonebot.run()
