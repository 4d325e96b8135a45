"""Load a file and append its valid records to the experience store, in one transaction.

Accepted semantics: `accepted` counts the valid rows that are in the store after the run,
whether written now (`new`) or already stored with identical content (`unchanged`), so
ingesting the same file twice reports the same `accepted` and writes nothing the second time.
Rows the store refuses (unauthorised signer, a trace that does not resolve, an id already
stored with other content) are quarantined with the store's reason and their source line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from contextos_lab.loaders.quarantine import LoadResult, QuarantinedRow, write_quarantine
from contextos_lab.loaders.records import load_records
from contextos_lab.schemas.base import Envelope
from contextos_lab.store.experience_store import ExperienceStore, StoreRefusal

#: Store-refusal wording to the field it is about (first match wins; "" means the id field,
#: which is also the default).
_REFUSAL_FIELDS: tuple[tuple[str, str | None], ...] = (
    ("already stored with different content", ""),
    ("signer", "signed_by"),
    ("authorised-overrider", "signed_by"),
    ("trace_id", "trace_id"),
    ("supersedes", "supersedes"),
    ("signature", "signature"),
    ("upstream artifact", None),
)


@dataclass
class IngestReport:
    source: Path
    kind: str
    new: int
    unchanged: int
    quarantined: list[QuarantinedRow]
    quarantine_file: Path | None
    notes: list[str] = field(default_factory=list)

    @property
    def accepted(self) -> int:
        return self.new + self.unchanged

    def summary(self) -> str:
        return (
            f"accepted {self.accepted}, quarantined {len(self.quarantined)} "
            f"({self.new} new, {self.unchanged} already stored)"
        )


def ingest_file(
    kind: str, path: Path | str, store: ExperienceStore, fmt: str | None = None
) -> IngestReport:
    """Load `path` as `kind` and store it; raises `UnreadableSource` if it cannot be read."""
    return store_loaded(kind, load_records(kind, path, fmt), store)


def store_loaded(kind: str, result: LoadResult[Envelope], store: ExperienceStore) -> IngestReport:
    """Append a loaded file's records in one transaction, refusals skipped, and write its
    quarantine file (loader and store refusals) inside that transaction, before the commit:
    the file's rows are stored all together or not at all, and never before their quarantine
    is on disk (if writing it fails, nothing is stored and the error propagates)."""
    loader_rows = list(result.quarantined)
    written: dict[str, object] = {}

    def quarantine_first(refusals: list[StoreRefusal]) -> None:
        result.quarantined[:] = loader_rows
        for refusal in refusals:
            origin = result.origins[refusal.artifact_id]
            result.quarantine(origin, _refusal_field(result, refusal), refusal.reason, "store")
        rows = sorted(result.quarantined, key=lambda q: q.line)
        written["rows"], written["file"] = rows, write_quarantine(result.source, rows)

    if result.records:
        outcomes = store.append_many(
            result.records, on_refusal="skip", before_commit=quarantine_first
        )
    else:
        outcomes = []
        quarantine_first([])
    return IngestReport(
        source=result.source,
        kind=kind,
        new=sum(o.status == "stored" for o in outcomes),
        unchanged=sum(o.status == "unchanged" for o in outcomes),
        quarantined=written["rows"],  # type: ignore[arg-type]
        quarantine_file=written["file"],  # type: ignore[arg-type]
        notes=list(result.notes),
    )


def _refusal_field(result: LoadResult[Envelope], refusal: StoreRefusal) -> str | None:
    model = result.records.model
    id_field = model.id_field if model is not None else None
    for needle, name in _REFUSAL_FIELDS:
        if needle in refusal.reason:
            return name or id_field
    return id_field
