"""Pallas entry point: `python bot.py` (or `make run`)."""

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
