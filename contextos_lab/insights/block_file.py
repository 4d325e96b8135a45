"""Arrow record batches kept in an anonymous temporary file, read back a few columns at a time.

A corpus' records, as Arrow blocks in memory, were about 0.5 KB a trace held from the first
file read to the end of the analysis, although the analysis reads fewer than half of their
columns and decodes the two largest (JSON text) once (docs/scale.md, "Blocks on disk"). Each
block is written as one IPC message (`RecordBatch.serialize`: no schema, no footer, so blocks
can be appended after a read) and only its offset and length are kept. Reading copies the
columns asked for out of each block, one block at a time, so a column never keeps the whole
block's buffer alive. The file lives and dies like `attribution.spilled`'s: gone when closed,
or when the process ends however it ends.
"""

from __future__ import annotations

import io
import tempfile
from array import array
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa


class BlockFile:
    """Record batches of one schema, appended and read back in order (picklable: a worker's
    blocks travel as their bytes)."""

    def __init__(self, schema: pa.Schema) -> None:
        self.schema = schema
        self._file: io.BufferedRandom | None = None  # made at the first block (a worker: none)
        self._spans = array("q")  # offset, length, rows per block

    def append(self, batch: pa.RecordBatch) -> None:
        self._write(batch.serialize().to_pybytes(), batch.num_rows)

    def _write(self, data: bytes | memoryview, rows: int) -> None:
        if self._file is None:
            self._file = tempfile.TemporaryFile()  # noqa: SIM115 - open as long as the blocks are
        self._file.seek(0, 2)
        self._spans.extend((self._file.tell(), len(data), rows))
        self._file.write(data)

    def _raw(self) -> Iterator[tuple[memoryview, int]]:
        """Each block's bytes and rows. The bytes are a view of one buffer, refilled from block
        to block (copy what is kept): a fresh bytes object per block read left the C heap a
        block larger at each read, pinned by the small column copies made in between."""
        if not self._spans:
            return
        assert self._file is not None
        view = memoryview(bytearray(max(self._spans[1::3])))
        for i in range(0, len(self._spans), 3):
            self._file.seek(self._spans[i])
            data = view[: self._spans[i + 1]]
            if self._file.readinto(data) != len(data):
                raise OSError("a block of the corpus' temporary file was cut short")
            yield data, self._spans[i + 2]

    def extend(self, other: BlockFile) -> None:
        """`other`'s blocks appended as they are (their bytes copied, not decoded)."""
        for data, rows in other._raw():
            self._write(data, rows)

    def __len__(self) -> int:
        """Rows in all blocks."""
        return sum(self._spans[2::3])

    @property
    def blocks(self) -> int:
        return len(self._spans) // 3

    def table(self, columns: Sequence[str] | None = None) -> pa.Table:
        """The blocks' rows, only `columns` (all when None), each column's chunks copied out of
        their block."""
        schema = (
            self.schema if columns is None else pa.schema([self.schema.field(c) for c in columns])
        )
        chunks: dict[str, list[pa.Array]] = {n: [] for n in schema.names}
        for data, _ in self._raw():
            batch = pa.ipc.read_record_batch(pa.py_buffer(data), self.schema)
            for name, kept in chunks.items():
                kept.append(pa.concat_arrays([batch.column(name)]))  # a copy: not the block
        return pa.table({n: pa.chunked_array(c, schema.field(n).type) for n, c in chunks.items()})

    def __getstate__(self) -> dict[str, Any]:
        return {"schema": self.schema, "blocks": [(bytes(d), n) for d, n in self._raw()]}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["schema"])  # type: ignore[misc]
        for data, rows in state["blocks"]:
            self._write(data, rows)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()


__all__ = ["BlockFile"]
