"""A big batch is handed to Spark as one Parquet file per staging thread: consecutive slices
that hold every row once, in order; a small batch stays one file."""

from __future__ import annotations

import pyarrow as pa
import pytest

from spark_destination.runtime.batch import staging


def _table(rows: int) -> pa.Table:
    return pa.table({"seq": pa.array(range(rows), pa.int64())})


@pytest.mark.parametrize("rows", [0, 1, 100])
def test_a_small_batch_stays_one_piece(rows: int) -> None:
    pieces = staging._pieces(_table(rows))
    assert len(pieces) == 1 and pieces[0].num_rows == rows


@pytest.mark.parametrize(("workers", "rows"), [(2, 1_000_000), (3, 1_000_001), (8, 600_000)])
def test_a_big_batch_is_split_into_consecutive_pieces(
    workers: int, rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(staging, "WORKERS", workers)
    pieces = staging._pieces(_table(rows))
    least = staging._ROW_GROUP_ROWS * staging._ROW_GROUPS_PER_PIECE
    assert 2 <= len(pieces) <= workers
    # Every piece but the last is full-sized and worth its own file; together they are the batch.
    assert all(p.num_rows >= least for p in pieces[:-1])
    assert pa.concat_tables(pieces).column("seq").to_pylist() == list(range(rows))
