"""The envelope base: frozen, versioned, canonically hashed, and readable in a notebook.

Every artifact the seeds name derives from `Envelope`. Canonical JSON (sorted keys, no
whitespace, UTF-8) is what the experience store hashes and chains, so two processes on two
machines agree byte for byte on what an artifact is.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from datetime import datetime
from enum import Enum
from types import UnionType
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    ClassVar,
    Generic,
    Literal,
    TypeVar,
    Union,
    get_args,
    get_origin,
)

from pydantic import AwareDatetime, BaseModel, ConfigDict

from contextos_lab.schemas.canonical import canonical_json, sha256_hex

if TYPE_CHECKING:  # pandas only where a frame is built: every command imports the schemas
    import pandas as pd

SCHEMA_VERSION = "1.0"


class Envelope(BaseModel):
    """Base of every typed artifact: immutable once built, unknown fields refused."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    #: Field holding the artifact's id (each subclass names its own, as the seeds do).
    id_field: ClassVar[str] = ""
    #: The experience-store kind of this envelope.
    store_kind: ClassVar[str] = ""

    schema_version: str = SCHEMA_VERSION

    @property
    def artifact_id(self) -> str:
        return str(getattr(self, self.id_field))

    def canonical(self) -> str:
        return canonical_json(self.model_dump(mode="json"))

    def content_hash(self) -> str:
        return sha256_hex(self.canonical())

    def _repr_html_(self) -> str:
        """Field, value rows; nested objects flattened to one `a.b: value` line each, floats
        to 4 significant digits, text wrapped, no MathJax on `$` (`mathjax_ignore` for
        JupyterLab 4's MathJax 3, `tex2jax_ignore` for MathJax 2)."""
        rows = "".join(
            f"<tr><th style='text-align:left;vertical-align:top'>{html.escape(name)}</th>"
            f"<td style='text-align:left;white-space:pre-wrap;overflow-wrap:anywhere'>"
            f"{html.escape(_flat_text(value))}</td></tr>"
            for name, value in self.model_dump(mode="json").items()
        )
        title = html.escape(f"{type(self).__name__} {self.artifact_id}")
        table = "<table class='tex2jax_ignore mathjax_ignore'>"
        return f"{table}<caption>{title}</caption>{rows}</table>"

    def to_frame(self) -> pd.DataFrame:
        return envelopes_to_frame([self], type(self))


E = TypeVar("E", bound=Envelope)


class EnvelopeList(list[E], Generic[E]):
    """A list of envelopes that renders as a table and converts to a typed DataFrame."""

    def __init__(self, items: Iterable[E] = (), model: type[E] | None = None) -> None:
        super().__init__(items)
        self.model = model or (type(self[0]) if self else None)

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        if self.model is None:
            return pd.DataFrame()
        return envelopes_to_frame(self, self.model)

    def _repr_html_(self) -> str:
        name = self.model.__name__ if self.model else "Envelope"
        frame = self.to_frame()
        body = frame.to_html(index=False, max_rows=50, escape=True)
        return f"<div><strong>{len(self)} × {html.escape(name)}</strong>{body}</div>"


def _flat_text(value: Any, prefix: str = "") -> str:
    """A field's value for a person: dicts as `key: value` lines (dotted keys at depth), lists
    of scalars comma-joined, floats to 4 significant digits."""
    if isinstance(value, dict):
        if not value:
            return "{}"
        lines = []
        for k, v in value.items():
            key = f"{prefix}{k}"
            lines.append(
                _flat_text(v, f"{key}.") if isinstance(v, dict) and v else f"{key}: {_flat_text(v)}"
            )
        return "\n".join(lines)
    if isinstance(value, list):
        if all(not isinstance(v, dict | list) for v in value):
            return ", ".join(_flat_text(v) for v in value)
        return "\n".join(f"- {_flat_text(v)}".replace("\n", "\n  ") for v in value)
    if isinstance(value, float):
        return f"{value:.4g}"
    return "" if value is None else str(value)


def _cell_text(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return canonical_json(value)
    return "" if value is None else str(value)


def _unwrap(annotation: Any) -> Any:
    """Strip `Annotated[...]` and `X | None` down to the value type."""
    while True:
        origin = get_origin(annotation)
        args = get_args(annotation)
        if origin is Annotated:
            annotation = args[0]
        elif origin in (Union, UnionType) and type(None) in args and len(args) == 2:
            annotation = next(a for a in args if a is not type(None))
        else:
            return annotation


def _dtype_for(annotation: Any) -> str:
    """Stable pandas dtype for a field annotation, so empty and full frames agree."""
    annotation = _unwrap(annotation)
    origin = get_origin(annotation)
    if origin is Literal:
        return "string"
    if isinstance(annotation, type):
        if issubclass(annotation, bool):
            return "boolean"
        if issubclass(annotation, Enum):
            return "string"
        if issubclass(annotation, int):
            return "Int64"
        if issubclass(annotation, float):
            return "Float64"
        if issubclass(annotation, str):
            return "string"
        if issubclass(annotation, (datetime, AwareDatetime)):
            return "datetime64[us, UTC]"
    return "object"


def frame_dtypes(model: type[Envelope]) -> dict[str, str]:
    return {name: _dtype_for(f.annotation) for name, f in model.model_fields.items()}


def envelopes_to_frame(items: Sequence[Envelope], model: type[Envelope]) -> pd.DataFrame:
    """One row per envelope, one column per field, dtypes fixed by the model (not the data).

    Nested values (lists, dicts, sub-models) stay Python objects in `object` columns.
    """
    return columns_to_frame(frame_columns(items, model), model)


def frame_columns(
    items: Iterable[Envelope],
    model: type[Envelope],
    columns: dict[str, list[Any]] | None = None,
) -> dict[str, list[Any]]:
    """`envelopes_to_frame`'s columns before the frame (appended to `columns` when given), so a
    long stream of envelopes can be kept as plain columns, not one model object each."""
    columns = columns if columns is not None else {name: [] for name in frame_dtypes(model)}
    for item in items:
        for name, column in columns.items():
            value = getattr(item, name)
            if isinstance(value, BaseModel):
                value = value.model_dump(mode="json")
            elif isinstance(value, tuple):
                value = [
                    v.model_dump(mode="json") if isinstance(v, BaseModel) else v for v in value
                ]
            elif isinstance(value, Enum):
                value = value.value
            column.append(value)
    return columns


def columns_to_frame(columns: dict[str, list[Any]], model: type[Envelope]) -> pd.DataFrame:
    """The frame of `frame_columns` (or of some of its columns), dtypes fixed by the model."""
    import pandas as pd

    frame = pd.DataFrame(columns)
    for name, dtype in frame_dtypes(model).items():
        if name not in frame:
            continue
        if dtype.startswith("datetime64"):
            frame[name] = pd.to_datetime(frame[name], utc=True).astype(dtype)
        else:
            frame[name] = frame[name].astype(dtype)
    return frame
