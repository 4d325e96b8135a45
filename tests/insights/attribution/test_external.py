"""On the real Who&When runs: unannotated copies are analysed, and permuting the annotations
leaves the clusters unchanged."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from contextos_lab.insights.pipeline import analyse
from contextos_lab.insights.sources import load_sources

KEYS = ("mistake_agent", "mistake_step", "mistake_reason")


def _copy(src: Path, dst: Path, labels: list[tuple] | None) -> Path:
    dst.mkdir(parents=True)
    for i, path in enumerate(sorted(src.glob("*.json"))):
        raw = json.loads(path.read_text(encoding="utf-8"))
        for k in KEYS:
            raw.pop(k, None)
        if labels is not None:
            raw.update(dict(zip(KEYS, labels[i], strict=True)))
        (dst / path.name).write_text(json.dumps(raw), encoding="utf-8")
    return dst


@pytest.mark.external
def test_real_runs_are_clustered_alike_with_without_or_permuted_annotations(
    tmp_path, external_dir: Path
) -> None:
    src = external_dir / "who-and-when" / "Algorithm-Generated"
    raws = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(src.glob("*.json"))]
    labels = [tuple(r[k] for k in KEYS) for r in raws]
    permuted = labels[:]
    random.Random(0).shuffle(permuted)
    reports = []
    for name, lab in (("none", None), ("true", labels), ("permuted", permuted)):
        loaded = load_sources([str(_copy(src, tmp_path / name, lab))])
        assert len(loaded.records) == len(raws) and not loaded.quarantined
        reports.append(analyse(loaded, text_backend=None))
    ids = [r.runs.set_index("record_id")["trace_id"] for r in reports]
    clusters = [
        [(c.title, sorted(i[m] for m in c.members)) for c in r.mechanisms.itertuples()]
        for r, i in zip(reports, ids, strict=True)
    ]
    assert clusters[0] == clusters[1] == clusters[2] and len(clusters[0]) >= 3
    attributed = reports[0].attributions
    assert len(attributed) == int((reports[0].runs["split"] == "search").sum())
    assert attributed["signal"].notna().all() and attributed["excerpt"].str.len().gt(0).all()
