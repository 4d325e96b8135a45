"""What a gate record holds beside its verdicts: which run it is, what it copies from the
spec and the case sets, how often each held-out set was read, and the candidates with their
means. Split from `gate.run_gate`, which decides; this module only shapes the record."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import optuna
import pandas as pd

from contextos_lab.autotune.context import RunContext
from contextos_lab.autotune.study.storage import redact
from contextos_lab.gate.gate_record import GateCandidate
from contextos_lab.gate.heldout import ledger
from contextos_lab.gate.heldout.heldout import HeldoutSet


@dataclass(frozen=True)
class GateRunContext:
    """Which gate run this is: what the ledger entries and the record name it by."""

    ctx: RunContext
    run_id: str
    study: str
    spec_hash: str
    ledger_file: str | Path | None
    url: str
    spec_path: str


def identity(q: GateRunContext, study: optuna.Study) -> dict[str, Any]:
    """Which run of which study and spec the gate record is."""
    return {
        "run_id": q.run_id,
        "created_at": datetime.now(UTC),
        "study": q.study,
        "storage": redact(q.url),
        "spec_name": q.ctx.spec.name,
        "spec_path": q.spec_path,
        "spec_hash": q.spec_hash,
        "baseline_trial": study.user_attrs.get("baseline_trial"),
    }


def reads(prior: int, research: int | None) -> dict[str, Any]:
    """How often each held-out set was read before, and the warning each count calls for."""
    return {
        "prior_heldout_reads": prior,
        "reads_warning": ledger.reads_warning(prior),
        "research_prior_heldout_reads": research,
        "research_reads_warning": (
            ledger.reads_warning(research) if research is not None else None
        ),
    }


def candidates(ranked: pd.DataFrame) -> list[GateCandidate]:
    """The front's trials in the seed's ranking, as the gate records them (held-out means
    come after the re-run)."""
    cands: list[GateCandidate] = []
    for row in ranked.to_dict(orient="records"):
        search = {k: row[k] for k in ("policy", "safety", "utility", "latency", "economics")}
        cands.append(
            GateCandidate(
                candidate_id=f"trial_{int(row['number'])}",
                trial_number=int(row["number"]),
                rank=int(row.get("rank", len(cands) + 1)),
                params=dict(row["params"]),
                config_diff=dict(row["config_diff"]),
                layers=list(row.get("layers") or []),
                proposer=row.get("proposer") if isinstance(row.get("proposer"), dict) else None,
                n_changed=int(row.get("n_changed") or len(row["config_diff"])),
                n_control_flow=int(row.get("n_control_flow") or 0),
                diff_size=float(row.get("diff_size") or 0.0),
                search_scores=means(pd.Series(search, dtype=float)),
                heldout_means={},
            )
        )
    return cands


def spec_fields(ctx: RunContext, heldout: HeldoutSet) -> dict[str, Any]:
    """What the gate record copies from the spec and the two case sets."""
    spec = ctx.spec
    return {
        "target": spec.tuning_target().model_dump(mode="json"),
        "guardrails": spec.guardrails.model_dump(mode="json"),
        "guardrail_strings": list(spec.guardrails.as_strings()),
        "baseline_tuple": spec.baseline_tuple.model_dump(mode="json"),
        "tunable_surfaces": [s.name for s in spec.surface_specs],
        "rollback_target": spec.rollback_target,
        "search_set": {
            "path": spec.search_set,
            "manifest_hash": ctx.search.manifest_hash,
            "n_cases": len(ctx.search),
        },
        "heldout": {
            "path": spec.heldout_test_set,
            "manifest_hash": heldout.manifest_hash,
            "n_cases": len(heldout.cases),
        },
    }


def means(frame: pd.DataFrame | pd.Series) -> dict[str, float | None]:
    """Means per evaluator (a Series: the values); None where nothing was scored (policy with
    no rule for any case's intent), which JSON keeps as null and reports show as not scored."""
    means = frame.mean() if isinstance(frame, pd.DataFrame) else frame
    return {str(k): (None if v != v else float(v)) for k, v in means.items()}


def with_heldout_means(
    cands: list[GateCandidate], frames: dict[str, pd.DataFrame]
) -> list[GateCandidate]:
    """The candidates with the means of their held-out re-run."""
    return [c.model_copy(update={"heldout_means": means(frames[c.candidate_id])}) for c in cands]


__all__ = [
    "GateRunContext",
    "candidates",
    "identity",
    "means",
    "reads",
    "spec_fields",
    "with_heldout_means",
]
