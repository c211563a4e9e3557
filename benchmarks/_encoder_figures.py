"""The local sentence encoder's cost, measured in a fresh process (issue 47): load time, RSS
added (budget +150 MB), one short encode's latency, and the bot's encoder process's whole
resident set, with the embedding table in memory and read from its file (`encoder_table`).
`benchmarks.member_recall` prints it after the recall tables; a fresh interpreter, so nothing
the bench loaded before counts.
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
import asyncio, json, sys, time, statistics
from pathlib import Path
TABLE_DIR = Path(sys.argv[1]) if len(sys.argv) > 1 else None
def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
import numpy  # the product imports numpy anyway (vector index)
r0 = rss_mb()
t0 = time.perf_counter()
from pallas.providers.sentence_encoder import load_local_encoder
enc = load_local_encoder(TABLE_DIR)
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
rss_delta = rss_mb() - r0
enc.close()
from pallas.providers.encoder_process import ProcessEncoder
async def worker_rss():
    worker = await ProcessEncoder.start(table_dir=TABLE_DIR)
    try:
        for i in range(50):
            await worker.encode([f"我最喜欢的那个运动是啥{i}", "周末一起去爬山吧"])
        status = Path(f"/proc/{worker.pid}/status").read_text().splitlines()
        return next(int(l.split()[1]) / 1024 for l in status if l.startswith("VmRSS:"))
    finally:
        await worker.aclose()
print(json.dumps({"available": True, "model_id": enc.model_id, "dim": enc.dim,
                  "load_s": load_s, "rss_delta_mb": rss_delta, "table": enc.table,
                  "worker_rss_mb": asyncio.run(worker_rss()),
                  "encode_ms_p50": statistics.median(times), "encode_ms_max": max(times)}))
"""


def encoder_figures(table_dir: Path | None = None) -> dict[str, Any] | None:
    """The local encoder measured in a fresh process, its embedding table kept in a file in
    `table_dir` (None: in memory); None when the module does not exist."""
    if importlib.util.find_spec("pallas.providers.sentence_encoder") is None:
        return None
    table = [str(table_dir)] if table_dir is not None else []
    done = subprocess.run(
        [sys.executable, "-c", _ENCODER_PROBE, *table], cwd=REPO, capture_output=True,
        text=True, timeout=600, check=False,
    )  # fmt: skip
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"available": False, "error": (done.stderr.strip().splitlines() or ["?"])[-1]}
    figures: dict[str, Any] = json.loads(lines[-1])
    return figures


def print_encoder_figures(encoder: dict[str, Any] | None) -> None:
    """One line of `encoder_figures`' answer."""
    if encoder is None:
        print("\nencoder: pallas.providers.sentence_encoder does not exist (nothing to measure)")
    elif not encoder.get("available"):
        print(f"\nencoder: unavailable ({encoder.get('error', 'load_local_encoder() is None')})")
    else:
        dim = int(encoder["dim"])
        print(
            f"\nencoder {encoder['model_id']}, embedding table {encoder['table']}: load "
            f"{encoder['load_s']:.2f} s, RSS in this process +{encoder['rss_delta_mb']:.0f} MB "
            f"(budget +150 MB), the bot's encoder process {encoder['worker_rss_mb']:.0f} MB in "
            f"all; one short encode p50 {encoder['encode_ms_p50']:.1f} ms (max "
            f"{encoder['encode_ms_max']:.1f} ms), dim {dim}: float32 vectors at 100,000 facts "
            f"= {100_000 * dim * 4 / 1e6:.0f} MB"
        )
