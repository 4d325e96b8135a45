"""The search/held-out overlap check compares normalised content, ignoring ids."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from contextos_lab.autotune.cases import case_set_from_frame, load_case_set, overlap
from contextos_lab.gate.heldout.heldout import HeldoutOverlapError, check_heldout


def _cases(prefix: str, texts: list[str], amounts: list[object] | None = None) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "case_id": [f"{prefix}-{i}" for i in range(len(texts))],
            "request": texts,
            "amount": amounts or [10.0 * (i + 1) for i in range(len(texts))],
            "facts": [{"shipped": True, "note": t} for t in texts],
        }
    )


SEARCH = _cases("s", ["Refund my order please", "Where is my parcel?", "Cancel the plan"])


@pytest.mark.parametrize(
    "variant",
    [
        lambda t: t + " ",  # trailing space
        lambda t: t.upper(),  # case
        lambda t: "  ".join(t.split()),  # inner whitespace
        lambda t: t.replace("e", "\uff45"),  # full-width letters (NFKC folds them)
    ],
)
def test_near_copies_under_new_ids_are_refused_naming_both_ids(variant) -> None:
    heldout = _cases("h", ["Something new entirely", variant("Where is my parcel?")], [5.0, 20.0])
    shared = overlap(case_set_from_frame(SEARCH), case_set_from_frame(heldout))
    assert shared == ["s-1=h-1"]


def test_distinct_content_passes() -> None:
    heldout = _cases("h", ["Something new entirely", "Where is my parcel now?"])
    assert overlap(case_set_from_frame(SEARCH), case_set_from_frame(heldout)) == []


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_single_file_held_out_sets_are_checked_the_same_way(tmp_path: Path, suffix: str) -> None:
    heldout = _cases("h", ["Cancel the plan ", "fresh case"], [30.0, 1.5])[
        ["case_id", "request", "amount"]
    ]
    search = SEARCH[["case_id", "request", "amount"]]
    path = tmp_path / f"heldout{suffix}"
    if suffix == ".csv":
        heldout.to_csv(path, index=False)
    else:
        heldout.to_json(path, orient="records", lines=True)
    with pytest.raises(HeldoutOverlapError, match="s-2=h-0"):
        check_heldout(load_case_set(path), case_set_from_frame(search))
