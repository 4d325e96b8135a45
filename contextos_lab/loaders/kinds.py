"""The names `ingest` accepts (file formats, record kinds), as plain data.

They are argparse choices: `contextos-lab ingest --help` lists them without importing pydantic
or the schemas (issue 40). `readers.FORMATS` and `records.KINDS` are built from these names.
"""

from __future__ import annotations

from typing import Literal, get_args

Format = Literal["jsonl", "json", "csv", "parquet"]
FORMATS: tuple[str, ...] = get_args(Format)
#: `contextos-lab ingest KIND`, in `records.KINDS` order (which pairs each with its envelope).
KIND_NAMES: tuple[str, ...] = (
    "decisions",
    "feedback",
    "feedback-records",
    "scorecards",
    "preferences",
)
