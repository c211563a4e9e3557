"""The no-model fallback's choice by meaning (`pallas.features.memory.meaning`): one fact, close
and clearly nearest, or none — a lost fact is worse than a missed update."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from pallas.features.memory.denials import chat_denials
from pallas.features.memory.embedder import ActiveModel
from pallas.features.memory.meaning import (
    clearly_nearest,
    deny_by_meaning,
    meaning_text,
    related,
)
from pallas.features.memory.records import MemoryItem
from pallas.providers.encoder_process import EncoderUnavailable
from pallas.providers.sentence_encoder import Matrix


@pytest.mark.parametrize(
    ("cosines", "chosen"),
    [
        ([0.1, 0.69, 0.42], 1),  # close, 0.27 ahead
        ([0.45, 0.3], 0),  # at the bar, 0.15 ahead
        ([0.59, 0.56, 0.1], None),  # close but no lead ("换了新的床垫" / "换了新的窗帘")
        ([0.34, 0.1], None),  # a lead, not close
        ([0.8], 0),  # the only fact
        ([], None),
    ],
)
def test_clearly_nearest(cosines: list[float], chosen: int | None) -> None:
    assert clearly_nearest(cosines) == chosen


def test_the_encoder_compares_facts_without_their_subject() -> None:
    assert meaning_text("TA的血型是A型") == meaning_text("我的血型是A型") == "的血型是A型"


class _Encoder:
    """Answers each text's vector so that fact i has cosine `cosines[i]` with the line."""

    model_id = "stub@1"

    def __init__(self, cosines: Sequence[float], *, down: bool = False) -> None:
        self.cosines = list(cosines)
        self.down = down
        self.asked: list[list[str]] = []

    async def encode(self, texts: Sequence[str]) -> Matrix:
        if self.down:
            raise EncoderUnavailable("restarting")
        self.asked.append(list(texts))
        dims = len(texts)
        rows = np.zeros((dims, dims), dtype=np.float32)
        rows[0, 0] = 1.0
        for i, cos in enumerate(self.cosines[: dims - 1], start=1):
            rows[i, 0], rows[i, i] = cos, np.sqrt(1 - cos * cos)
        return rows


def _model(encoder: _Encoder) -> ActiveModel:
    async def no_embed(texts: Sequence[str], bot_id: int, group_id: int) -> list[list[float]]:
        return []

    return ActiveModel("stub@1", "local", no_embed, encoder)  # type: ignore[arg-type]


def _facts(*texts: str) -> list[MemoryItem]:
    return [
        MemoryItem(id=n, bot_id=1, scope="group:1:2", kind="person_facts", key=f"k{n}", text=t,
                   origin="teach", created_at=0.0, updated_at=0.0, subject_user_id=7)
        for n, t in enumerate(texts, start=1)
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("line", "facts", "cosines", "retired"),
    [
        # no rule matched it (晚上 is not in 每晚): the encoder's clear choice
        ("我现在晚上不玩手机了", ("TA住在杭州", "TA每晚都玩手机到很晚"), [0.1, 0.73], (2,)),
        # the clear nearest names another drink: not what is denied
        ("我已经不喝咖啡了", ("TA每天喝奶茶", "TA住在杭州"), [0.6, 0.1], ()),
        # two facts name the thing, neither clearly nearer: nothing retired
        ("我现在晚上不玩手机了", ("TA每晚都玩手机到很晚", "TA的手机是华为"), [0.6, 0.55], ()),
    ],
)
async def test_a_chat_denial_no_rule_matched_retires_the_fact_it_denies(
    line: str, facts: tuple[str, ...], cosines: list[float], retired: tuple[int, ...]
) -> None:
    (denial,) = chat_denials(line)
    judged = await deny_by_meaning(_model(_Encoder(cosines)), denial, _facts(*facts))
    assert judged.retire_ids == retired
    assert judged.op == ("deny" if retired else "add")


async def test_without_a_local_encoder_nothing_is_retired() -> None:
    (denial,) = chat_denials("我现在晚上不玩手机了")
    facts = _facts("TA每晚都玩手机到很晚")
    assert (await deny_by_meaning(None, denial, facts)).op == "add"
    down = await deny_by_meaning(_model(_Encoder([0.9], down=True)), denial, facts)
    assert down.op == "add"


@pytest.mark.parametrize(
    ("line", "fact", "is_related"),
    [
        ("我把头发染成栗色了", "TA的头发是黑色的", True),  # a shared word
        ("我换手机号了，新号尾号是1314", "TA的手机号尾号是0521", True),
        ("我改学西班牙语了", "TA在学韩语", True),  # two instances of one class (languages)
        ("我上周换了新的床垫", "TA去年换了新的窗帘", False),  # 换了 / 新的 / time words: no
        ("我改喝奶茶了", "TA每天早上一杯咖啡", True),  # two drinks: a change
        ("我现在用iPad了", "TA用的是华为平板", True),  # one kind of device (平板|ipad)
        ("我现在开车上班了", "TA用的是华为平板", False),  # instances of two classes
    ],
)
def test_what_a_change_or_a_denial_can_be_about(line: str, fact: str, is_related: bool) -> None:
    assert related(line, fact) is is_related


@pytest.mark.parametrize(
    ("denied", "fact", "is_related"),
    [
        ("玩原神", "TA每天打两小时王者荣耀", False),  # another game: not what is denied
        ("学韩语", "TA在学西班牙语", False),
        ("喝咖啡", "TA每天喝奶茶", False),  # another drink
        ("吃花生", "TA对坚果过敏", True),  # peanuts are among the nuts (one instance)
        ("养狗", "TA养了一只柯基", True),  # the same instance (a kind of dog)
        ("喝咖啡", "TA每天早上喝一杯咖啡", True),  # a shared word
    ],
)
def test_what_a_denial_can_be_about(denied: str, fact: str, is_related: bool) -> None:
    """A denial names what it denies: a sibling instance of its class is no match (a change
    from one to another is, above)."""
    assert related(denied, fact, change=False) is is_related
