"""Notebook 02 runs headless under papermill in smoke mode and produces its results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.autotune.conftest import toy_spec_dict

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "notebooks" / "02_autotune_sweep.ipynb"


def _outputs_text(nb: dict) -> str:
    parts = []
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            parts.append(out.get("text", ""))
            parts.extend(str(v) for v in out.get("data", {}).values())
    return "\n".join(p if isinstance(p, str) else "".join(p) for p in parts)


@pytest.mark.notebook
def test_notebook_02_smoke(case_dir: Path) -> None:
    papermill = pytest.importorskip("papermill")
    spec = case_dir / "run.yaml"
    spec.write_text(yaml.safe_dump(toy_spec_dict()))
    out_nb, out_dir = case_dir / "02.ipynb", case_dir / "out"
    papermill.execute_notebook(
        str(NOTEBOOK),
        str(out_nb),
        parameters={"spec_path": str(spec), "out_dir": str(out_dir), "smoke": True},
        kernel_name="python3",
        cwd=str(REPO),
        progress_bar=False,
    )
    front = json.loads((out_dir / "front.json").read_text())
    assert front["trials"]["total"] == 12 and front["candidates"]
    nb = json.loads(out_nb.read_text())
    text = _outputs_text(nb)
    assert "normalised hypervolume" in text and "image/png" in json.dumps(nb)
    assert "target gain" in text and "what changes" in text  # the candidate table rendered
    # the trials table: each trial's racing stage (racing is the default; 12 cases race in
    # one full stage) and why racing dropped it
    assert "dropped because" in text and "stage 1/1: full set (12 cases)" in text
