"""Vector retrieval at 10,000 memories per group: is the embedding path still fast?

A group gets `--rows` memory rows (generated sentences), each with its embedding stored the way
the service's backfill stores it (the fake server's deterministic 64-dimension vectors, so the
query vectors fetched over HTTP from the fake `/v1/embeddings` match). Then the real
`MemoryService.retrieve` runs with embeddings on (vector index + BM25 + concepts), result cache
off, and prints:

- the cold start (first read builds the group's index from the database),
- p50 / p99 of a read (query embedding over HTTP + index top-k + candidate window + scoring),
- a read right after a write (the index applies the delta, no rebuild),
- the bare index search at `--dims` (default 1536, a production embedding size) against the
  pure-Python cosine loop it replaces.

    python -m benchmarks.memory_vectors [--rows 10000] [--queries 200] [--dims 1536]
    python -m benchmarks.memory_vectors --best    # the blocked pass against one product

`--best`: one thread of BLAS (as the bot), a question of 2-4 parts against 500 to 50,000 unit
rows of 512 dims (the local encoder's), the pass `vector_index._best` makes by cache-sized
blocks against the one matrix product it replaced, alternating, with p50 / p90 and the ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from benchmarks.stats import describe, percentile
from pallas.core.clock import FakeClock
from pallas.core.db.models_memory import MemoryItemRow
from pallas.core.settings import PallasSettings
from pallas.core.state import MemoryStateStore
from pallas.features.memory.config import RetrievalConfig
from pallas.features.memory.embeddings import MemoryEmbeddings
from pallas.features.memory.isolation import group_scope
from pallas.features.memory.repository import MemoryRepository
from pallas.features.memory.service import MemoryService
from pallas.ranking.scoring import cosine_similarity
from pallas.ranking.text import warm_up
from pallas.ranking.vector_index import VectorIndex
from pallas.runtime import PallasRuntime
from tests.harness.fake_openai import FakeOpenAI, fake_embedding

BOT, GROUP = 2_900_000_001, 778_000_002
REPO = Path(__file__).resolve().parents[1]
NOW = 1_765_000_000.0
# the vectors' model tag as the service writes it for `pallas_embedding_model="fake-embed"`:
# rows without it would be re-embedded in the background and missing from the index meanwhile
MODEL = "api:fake-embed"
WHO = ["老王", "阿米娅", "七七", "石头", "柚子", "小林", "豆包", "芒果"]
WHAT = ["开黑", "抽卡", "线下聚会", "读书会", "剧本杀", "夜跑", "红包接龙", "追番", "做饭", "爬山"]
WHEN = ["周五晚上", "周末下午", "每天早上", "月底", "过年", "暑假", "国庆", "下班后"]
WHERE = ["杭州", "群里", "公司楼下", "学校", "网吧", "公园", "地铁站", "咖啡店"]


def sentence(rng: random.Random) -> str:
    return f"{rng.choice(WHO)}{rng.choice(WHEN)}在{rng.choice(WHERE)}{rng.choice(WHAT)}"


async def fill(rt: PallasRuntime, rows: int, rng: random.Random) -> list[str]:
    texts = [f"{sentence(rng)}（第{n}条）" for n in range(rows)]
    async with rt.sessions() as session, session.begin():
        session.add_all(
            MemoryItemRow(
                bot_id=BOT, scope=group_scope(BOT, GROUP), kind="group_memory", key=f"k{n}",
                fingerprint=f"f{n}", text=text, origin="admin", source={},
                embedding=fake_embedding(text), embedding_model=MODEL, created_at=NOW - n * 600,
                updated_at=NOW - n * 600, access_count=0, subject_name="",
            )
            for n, text in enumerate(texts)
        )  # fmt: skip
    return texts


def kept_bytes(items: Sequence[object]) -> int:
    """What `items` hold in memory: each object, its fields and what they hold (a dict's
    keys and values), every object counted once (interned strings, shared values)."""
    seen: set[int] = set()
    total = 0
    stack: list[object] = list(items)
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        if isinstance(obj, dict):
            stack += [*obj.keys(), *obj.values()]
        elif isinstance(obj, (list, tuple)):
            stack += list(obj)
        elif hasattr(obj, "__slots__") and not isinstance(obj, (str, int, float)):
            stack += [getattr(obj, name) for name in obj.__slots__ if hasattr(obj, name)]
    return total


async def timed(coro: object) -> float:
    started = time.perf_counter()
    await coro  # type: ignore[misc]
    return (time.perf_counter() - started) * 1000


async def run(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    workdir = Path(tempfile.mkdtemp(prefix="pallas-memvec-"))
    shutil.copytree(REPO / "config", workdir / "config")
    fake = FakeOpenAI()
    await fake.start()
    clock = FakeClock(NOW)
    settings = PallasSettings(
        database_url=f"sqlite+aiosqlite:///{workdir / 'v.db'}",
        pallas_config_dir=workdir / "config",
        openai_api_key="sk-bench",
        openai_base_url=fake.base_url,
        pallas_embedding_model="fake-embed",
    )
    rt = await PallasRuntime.start(settings, clock=clock, state=MemoryStateStore(clock))
    try:
        warm_up()
        texts = await fill(rt, args.rows, rng)
        # production caches (candidate window per write generation); every question is new,
        # so every read misses the result cache and fetches its query embedding over HTTP
        repo = MemoryRepository(rt.sessions)
        vectors = MemoryEmbeddings(repo, rt.state, clock, llm=rt.llm)
        service = MemoryService(repo, rt.state, clock, embeddings=vectors)
        config = RetrievalConfig()
        scope = group_scope(BOT, GROUP)

        async def read(question: str) -> object:
            return await service.retrieve(
                "group_memory", question, scopes={scope}, config=config, now=NOW,
                bot_id=BOT, group_id=GROUP,
            )  # fmt: skip

        cold = await timed(read("周五晚上谁在群里开黑"))
        reads = [await timed(read(f"{sentence(rng)}吗？{n}")) for n in range(args.queries)]
        old = texts[-1]  # the oldest row: far outside the 500-row recent window
        found = await read(old)
        reached = any(r.endswith(":" + str(args.rows)) for r in found.trace["vector_hits"])  # type: ignore[attr-defined]
        chosen = any(i.text == old for i in found.items)  # type: ignore[attr-defined]
        await service.remember(bot_id=BOT, scope=scope, kind="group_memory",
                               text="新写入的一条记忆：周六去爬山", origin="admin")  # fmt: skip
        await service.drain()
        after_write = await timed(read("周六去爬山吗"))
        print(f"{args.rows} memories in one group, {len(reads)} reads of new questions, "
              "embeddings on")  # fmt: skip
        print(f"cold first read (builds the index from the database): {cold:8.1f} ms")
        print(describe("read (embed+index+score)", reads))
        print(f"first read after a write (index delta)            : {after_write:8.1f} ms")
        print(f"oldest row asked by its own words: reaches scoring via the index {reached}, "
              f"chosen {chosen}")  # fmt: skip
        kept = vectors.kept_rows()
        size = kept_bytes(kept)
        per_row = size / max(1, len(kept))
        print(f"rows kept beside the index (its hits read no row): {len(kept)}, "
              f"{per_row:.0f} bytes a row → {per_row * 1e5 / 1e6:.0f} MB at 100,000 rows "
              "(vectors: 4 bytes a dimension)")  # fmt: skip
    finally:
        await rt.stop()
        await fake.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    bare_index(args)


def bare_index(args: argparse.Namespace) -> None:
    """VectorIndex.search vs the pure-Python cosine loop, at a production dimension."""
    gen = np.random.default_rng(args.seed)
    vectors = gen.standard_normal((args.rows, args.dims)).astype(np.float32)
    index = VectorIndex()
    started = time.perf_counter()
    index.add((i, None, vectors[i]) for i in range(args.rows))
    build = (time.perf_counter() - started) * 1000
    queries = gen.standard_normal((args.queries, args.dims)).astype(np.float32)
    times = []
    for q in queries:
        started = time.perf_counter()
        index.search(q, 20)
        times.append((time.perf_counter() - started) * 1000)
    as_lists = [v.tolist() for v in vectors[: min(args.rows, 2000)]]
    q = queries[0].tolist()
    started = time.perf_counter()
    for v in as_lists:
        cosine_similarity(q, v)
    loop = (time.perf_counter() - started) * 1000 * args.rows / len(as_lists)
    print(f"bare index, {args.rows} x {args.dims} float32: build {build:.0f} ms")
    print(describe("index.search top-20", times))
    print(f"pure-Python cosine over all {args.rows} rows (extrapolated): {loop:8.1f} ms "
          f"({loop / max(1e-9, sorted(times)[len(times) // 2]):.0f}x the index p50)")  # fmt: skip
    assert math.isfinite(loop)


def best_pass(args: argparse.Namespace) -> None:
    """`--best`: see the module docstring."""
    from threadpoolctl import threadpool_limits

    from pallas.ranking import vector_index

    threadpool_limits(limits=1, user_api="blas")
    gen = np.random.default_rng(args.seed)
    print("a row's best cosine over the question's parts, 512 dims, one BLAS thread (ms):")
    for rows in (500, 2_000, 5_000, 10_000, 50_000):
        matrix = gen.standard_normal((rows, 512)).astype(np.float32)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        repeats = max(20, min(args.queries, 2_000_000 // rows))
        for parts in (2, 3, 4):
            q = gen.standard_normal((parts, 512)).astype(np.float32)
            q /= np.linalg.norm(q, axis=1, keepdims=True)
            blocked, whole = [], []
            for _ in range(repeats):
                started = time.perf_counter()
                vector_index._best(matrix, q)
                blocked.append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                vector_index._best(matrix, q, one_call=True)
                whole.append((time.perf_counter() - started) * 1000)
            b50, w50 = percentile(blocked, 50), percentile(whole, 50)
            print(f"  {rows:6d} rows, {parts} parts: blocks p50 {b50:6.2f} p90 "
                  f"{percentile(blocked, 90):6.2f} · one product p50 {w50:6.2f} p90 "
                  f"{percentile(whole, 90):6.2f} · {b50 / w50:.2f}x")  # fmt: skip


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.memory_vectors")
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--dims", type=int, default=1536)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--best", action="store_true", help="the blocked pass (see above)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv or [])
    if args.best:
        best_pass(args)
        return 0
    asyncio.run(run(args))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
