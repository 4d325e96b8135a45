"""`parquet_ids`: ids read in file order whatever their Arrow string type, then taken into
per-cluster lists by row position."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from contextos_lab.insights.parquet_ids import FILE_STRIDE, cluster_id_lists, file_starts, row_index


def test_ids_of_any_string_type_taken_by_position(tmp_path: Path) -> None:
    tables = {
        "a": pa.array(["fb_a", "fb_bb"], pa.string()),
        "b": pa.array(["fb_c"], pa.large_string()),
        "c": pa.array(["fb_d", "fb_e"]).dictionary_encode(),
        "d": pa.array([], pa.string()),
    }
    files = []
    for name, ids in tables.items():
        pq.write_table(pa.table({"id": ids}), tmp_path / f"{name}.parquet")
        files.append(str(tmp_path / f"{name}.parquet"))
    starts = file_starts(files)
    assert starts.tolist() == [0, 2, 3, 5, 5]
    # (file, row) positions as DuckDB streams them, in output order: two clusters of 3 and 2
    pos = np.array([2 * FILE_STRIDE + 1, 0, 1 * FILE_STRIDE, 1, 2 * FILE_STRIDE], dtype=np.int64)
    batches = [pa.record_batch([pa.array(pos[:2])], names=["pos"]),
               pa.record_batch([pa.array(pos[2:])], names=["pos"])]  # fmt: skip
    index = row_index(batches, len(pos), starts)
    assert index.tolist() == [4, 0, 2, 1, 3]
    lists = cluster_id_lists(files, starts, index, np.array([3, 2]))
    assert lists.to_pylist() == [["fb_e", "fb_a", "fb_c"], ["fb_bb", "fb_d"]]
