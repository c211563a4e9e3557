"""`pallas learn now|status --bot B --group G`: group learning from the server's shell.

Same core as `/pallas learn …` in a group. `now` runs one sweep over every group in this process
(the sweep lock lives in the process's StateStore: do not run it while the bot runs with the
default in-memory store, or two sweeps may label the same batch — stored data stays
de-duplicated, but that batch's spend is counted once).
"""

from __future__ import annotations

import argparse

from pallas.admin import AdminContext, learn_command
from pallas.app_wiring import admin_services_for, memory_service_for
from pallas.core.settings import PallasSettings
from pallas.runtime import PallasRuntime


async def _learn(args: argparse.Namespace) -> int:
    runtime = await PallasRuntime.start(PallasSettings.from_env())
    try:
        services = admin_services_for(runtime, memory=memory_service_for(runtime))
        cmd = AdminContext(services, args.bot, args.group, 0, (args.action,))
        print(await learn_command(cmd))
    finally:
        await runtime.stop()
    return 0


def register_learn(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("learn", help="group learning: run a sweep now / show a group's state")
    parser.add_argument("action", choices=("now", "status"))
    parser.add_argument("--bot", type=int, required=True, help="the bot's QQ id")
    parser.add_argument("--group", type=int, required=True, help="group id")
    parser.set_defaults(handler=_learn)
