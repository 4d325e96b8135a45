"""Feedback ids gathered from Parquet into per-cluster Arrow lists, by row position.

Why not let DuckDB sort the ids themselves (`list(id ORDER BY ...)` or `ORDER BY ... id`): with
the strings riding along, 50M entries spill the sort to disk (48 s of a 70 s run) or exhaust
DuckDB's memory limit building lists it cannot spill. DuckDB sorts only row positions (in
memory), and Arrow then reads the one `id` column into a single buffer and takes the ids in
that order: the ids are held twice at most (input column and output), never as one Python
object each, and no step concatenates (which would hold them a third time).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

#: `pos` = file index * FILE_STRIDE + row number in that file (see out_of_core's `raw` view).
FILE_STRIDE = 1 << 40


def file_starts(files: Sequence[str]) -> np.ndarray:
    """Row number, in all files concatenated, of each file's first row; last = total rows."""
    rows = [pq.ParquetFile(f).metadata.num_rows for f in files]
    return np.concatenate(([0], np.cumsum(rows, dtype=np.int64)))


def row_index(batches: Iterable[pa.RecordBatch], n: int, starts: np.ndarray) -> np.ndarray:
    """The streamed `pos` column (one per kept entry, in output order) as rows of all files
    concatenated (int32 while they fit: 4 bytes per entry)."""
    out = np.empty(n, dtype=np.int32 if starts[-1] < 2**31 else np.int64)
    at = 0
    for batch in batches:
        pos = batch.column(0).to_numpy(zero_copy_only=False)
        out[at : at + len(pos)] = starts[pos // FILE_STRIDE] + pos % FILE_STRIDE
        at += len(pos)
    if at != n:
        raise RuntimeError(f"DuckDB returned {at} positions, expected {n}")
    return out


def cluster_id_lists(
    files: Sequence[str], starts: np.ndarray, index: np.ndarray, sizes: np.ndarray
) -> pa.Array:
    """One list per cluster: cluster i holds the next `sizes[i]` ids in `index` order."""
    values = _all_ids(files, int(starts[-1])).take(pa.array(index))
    bounds = np.concatenate(([0], np.cumsum(sizes)))
    if len(values) >= 2**31:
        return pa.LargeListArray.from_arrays(pa.array(bounds.astype(np.int64)), values)
    return pa.ListArray.from_arrays(pa.array(bounds.astype(np.int32)), values)


def _all_ids(files: Sequence[str], n: int) -> pa.Array:
    """Every file's `id` column, in file order, copied chunk by chunk into one buffer."""
    guess = sum(_id_bytes_guess(f) for f in files)
    data = np.empty(max(guess, 1), dtype=np.uint8)  # pages never written are never resident
    offsets = np.empty(n + 1, dtype=np.int64)
    offsets[0] = row = at = 0
    for f in files:
        col = pq.read_table(f, columns=["id"]).column("id")
        if col.null_count:
            raise ValueError(f"{f}: a feedback entry has no id")
        for chunk in col.chunks:
            if not (pa.types.is_string(chunk.type) or pa.types.is_large_string(chunk.type)):
                chunk = chunk.cast(pa.large_string())  # e.g. dictionary-encoded or numeric ids
            if chunk.offset:  # a slice: rebase its buffers
                chunk = pa.concat_arrays([chunk])
            width = np.int32 if pa.types.is_string(chunk.type) else np.int64
            src = np.frombuffer(chunk.buffers()[1], dtype=width)[: len(chunk) + 1].astype(np.int64)
            size = int(src[-1] - src[0])
            if at + size > len(data):  # the guess was short (dictionary-encoded ids)
                data = np.concatenate((data[:at], np.empty(max(size, at), dtype=np.uint8)))
            body = np.frombuffer(chunk.buffers()[2], dtype=np.uint8) if size else data[:0]
            data[at : at + size] = body[src[0] : src[0] + size]
            offsets[row + 1 : row + len(chunk) + 1] = src[1:] - src[0] + at
            row, at = row + len(chunk), at + size
    if at < 2**31:  # 32-bit offsets while the ids fit: 4 bytes less per id
        small = offsets.astype(np.int32)
        del offsets
        return pa.StringArray.from_buffers(n, pa.py_buffer(small), pa.py_buffer(data[:at]))
    return pa.LargeStringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data[:at]))


def _id_bytes_guess(path: str) -> int:
    """The `id` column's uncompressed size in the file's metadata (PLAIN strings: a little
    over their bytes)."""
    meta = pq.ParquetFile(path).metadata
    names = [meta.schema.column(i).name for i in range(meta.num_columns)]
    if "id" not in names:
        return 0
    col = names.index("id")
    return sum(
        meta.row_group(g).column(col).total_uncompressed_size for g in range(meta.num_row_groups)
    )
