"""The local sentence encoder's cost, measured in a fresh process (issue 47): load time, RSS
added (budget +150 MB), one short encode's latency. `benchmarks.member_recall` prints it after
the recall tables; a fresh interpreter, so nothing the bench loaded before counts.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

_ENCODER_PROBE = r"""
import json, time, statistics
def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
import numpy  # the product imports numpy anyway (vector index)
r0 = rss_mb()
t0 = time.perf_counter()
from pallas.providers.sentence_encoder import load_local_encoder
enc = load_local_encoder()
load_s = time.perf_counter() - t0
if enc is None:
    print(json.dumps({"available": False}))
    raise SystemExit(0)
enc.encode_sync(["我喜欢打羽毛球"])
times = []
for i in range(50):
    t = time.perf_counter()
    enc.encode_sync([f"我最喜欢的那个运动是啥{i}"])
    times.append((time.perf_counter() - t) * 1000)
print(json.dumps({"available": True, "model_id": enc.model_id, "dim": enc.dim,
                  "load_s": load_s, "rss_delta_mb": rss_mb() - r0,
                  "encode_ms_p50": statistics.median(times), "encode_ms_max": max(times)}))
"""


def encoder_figures() -> dict[str, Any] | None:
    """The local encoder measured in a fresh process, or None when the module does not exist."""
    if importlib.util.find_spec("pallas.providers.sentence_encoder") is None:
        return None
    done = subprocess.run(
        [sys.executable, "-c", _ENCODER_PROBE], cwd=REPO, capture_output=True, text=True,
        timeout=600, check=False,
    )  # fmt: skip
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"available": False, "error": (done.stderr.strip().splitlines() or ["?"])[-1]}
    figures: dict[str, Any] = json.loads(lines[-1])
    return figures
