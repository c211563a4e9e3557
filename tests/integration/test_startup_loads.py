"""The start-up loads leave nothing for a turn to load on the event loop.

Each check runs in a fresh interpreter (this test process has loaded everything long ago): the
bot's start-up loaders (`pallas.onebot.lifespan.startup_loaders`) run, then what a turn does
with its memory rows; any module imported only then was a load the first turn paid on the loop
(jieba's word tags, ~1 s, were one: `stake_words` imported `jieba.posseg` on first use).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

_SCRIPT = textwrap.dedent(
    """
    import json, sys
    from types import SimpleNamespace
    from pallas.onebot.lifespan import startup_loaders
    from pallas.features.memory_commands import stake_words
    from pallas.ranking import tokenize

    app = SimpleNamespace(runtime=SimpleNamespace(llm=SimpleNamespace(warm_client=lambda: None)))
    for loader in startup_loaders(app):
        if loader.__module__.startswith(("pallas.ranking", "tiktoken")):
            loader()  # the text loads; the SDK's need no check here
    before = set(sys.modules)
    stake_words("我在学日语，周末去海淀区上课")
    tokenize("我在学日语，周末去海淀区上课")
    print(json.dumps(sorted(m for m in set(sys.modules) - before if m.split(".")[0] == "jieba")))
    """
)


def test_a_turns_text_work_loads_no_jieba_module_after_the_start_up_loads() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
