"""A calibrated weights file: what `attribution calibrate --out` writes and `--weights` reads.

JSON validated by pydantic, so a hand-edited or truncated file fails with its path and the
field at fault instead of a traceback; an unknown feature name is refused (a typo would
otherwise silently weigh nothing). Per-system features (`speaker:…`, `tool:…`, see
`system_features`) are names a calibration learned from the user's runs.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from contextos_lab.errors import UserError
from contextos_lab.insights.attribution.features import STEP_FEATURES
from contextos_lab.insights.attribution.system_features import is_system_feature

FORMAT = "contextos-attribution-weights/1"


class WeightsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: str = FORMAT
    weights: dict[str, float]
    temperature: float = Field(default=1.0, gt=0)
    #: Annotated runs the calibration was fitted on, and how many had a candidate answer.
    runs: int = Field(default=0, ge=0)
    used_runs: int = Field(default=0, ge=0)
    prior: str = "bundled"
    #: How strongly the prior held (None: its ranking kept, only its scale fitted).
    prior_strength: float | None = Field(default=0.0, ge=0)
    #: The prior's score multiplied by this before the moves (the system's own sharpness).
    scale: float = Field(default=1.0, gt=0)
    #: Leave-one-run-out step agreement of the calibration and of its prior on those runs.
    loo_step_top1: float | None = None
    prior_step_top1: float | None = None

    @field_validator("format")
    @classmethod
    def _format(cls, v: str) -> str:
        if v != FORMAT:
            raise ValueError(f"expected {FORMAT!r}")
        return v

    @field_validator("weights")
    @classmethod
    def _known(cls, v: dict[str, float]) -> dict[str, float]:
        unknown = sorted(k for k in v if k not in STEP_FEATURES and not is_system_feature(k))
        if unknown:
            raise ValueError(f"unknown features {', '.join(unknown)}")
        bad = sorted(k for k, w in v.items() if not math.isfinite(w))
        if bad:
            raise ValueError(f"not a finite number for {', '.join(bad)}")
        return v


def read_weights(path: str | Path) -> WeightsFile:
    """The weights file at `path`; UserError naming the file (and field) when it is not one."""
    p = Path(path)
    try:
        raw = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise UserError(f"{p}: no such weights file") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{p}: cannot read the weights file ({exc})") from exc
    except json.JSONDecodeError as exc:
        raise UserError(f"{p}: line {exc.lineno}: not JSON ({exc.msg})") from exc
    try:
        return WeightsFile.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "(top level)"
        raise UserError(f"{p}: field {where}: {first['msg']}") from exc


def write_weights(path: str | Path, weights: WeightsFile) -> Path:
    p = Path(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(weights.model_dump(), indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise UserError(f"{p}: cannot write the weights file ({exc.strerror or exc})") from exc
    return p


__all__ = ["FORMAT", "WeightsFile", "read_weights", "write_weights"]
