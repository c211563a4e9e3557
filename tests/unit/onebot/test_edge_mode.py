"""Which mode the edge runs in: reading at parse under `GuardedAdapter`, else the stock adapter
mode (`pallas.onebot.edge`), picked by the lifespan from the registered adapters."""

from __future__ import annotations

import pytest
from nonebot.adapters.onebot.v11 import Adapter

from pallas.onebot.adapter import GuardedAdapter
from pallas.onebot.lifespan import _reads_at_parse


def _bare(cls: type) -> object:
    return object.__new__(cls)  # only its class matters here


@pytest.mark.parametrize(
    ("adapters", "reads_at_parse"),
    [
        ((GuardedAdapter,), True),  # bot.py
        ((Adapter,), False),  # NoneBot's own adapter: nonebug plugin tests, another bot.py
        ((), False),
        ((Adapter, GuardedAdapter), True),
    ],
    ids=["guarded", "stock", "none", "both"],
)
def test_the_edge_reads_at_parse_only_behind_the_guarded_adapter(
    adapters: tuple[type, ...], reads_at_parse: bool
) -> None:
    assert _reads_at_parse([_bare(cls) for cls in adapters]) is reads_at_parse
