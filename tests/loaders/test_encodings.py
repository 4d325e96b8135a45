"""Every encoding x damage: never a traceback; a UTF-16 file with a stray trailing byte keeps
the rows that decode and quarantines the rest naming the encoding its BOM names."""

from __future__ import annotations

import random
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextos_lab.loaders.records import load_records
from contextos_lab.store import ExperienceStore
from tests.loaders.encodings import DAMAGE, ENCODINGS, encoding_case
from tests.loaders.malformed import run_case


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    encoding=st.sampled_from(list(ENCODINGS)),
    damage=st.sampled_from(DAMAGE),
    seed=st.integers(0, 10**6),
)
def test_no_encoding_or_damage_escapes(
    tmp_path: Path, encoding: str, damage: str, seed: int
) -> None:
    store = ExperienceStore(
        f"sqlite:///{tmp_path / 'store.db'}", authorised_overriders=["user_finance_lead_77"]
    )
    case = encoding_case(tmp_path, seed, random.Random(seed), encoding, damage)
    out = run_case(case, store)
    assert out.traceback is None, out.traceback
    assert out.unaccounted == 0 and out.altered == 0, out.details


def test_utf16_with_a_stray_byte_keeps_the_rows_that_decode(tmp_path: Path) -> None:
    lines = ["scorecard_id,subject_id", "sc1,a", "sc2,b"]
    for encoding, bom in (("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff")):
        path = tmp_path / f"{encoding}.csv"
        path.write_bytes(bom + ("\r\n".join(lines) + "\r\n").encode(encoding) + b"\n")
        loaded = load_records("scorecards", path)
        parsed = [q for q in loaded.quarantined if q.stage == "parse"]
        assert len(parsed) == 1 and parsed[0].line == 4, parsed
        assert f"not valid {encoding.upper()} (the encoding its byte-order mark names)" in (
            parsed[0].message
        )
        assert {q.line for q in loaded.quarantined} - {4} == {2, 3}  # too few fields: validated


def test_utf16_json_lines_load_line_by_line(tmp_path: Path) -> None:
    decisions = Path(__file__).parents[2] / "examples" / "coding_agent" / "data" / "decisions.jsonl"
    text = "".join(decisions.read_text().splitlines(keepends=True)[:3])
    path = tmp_path / "d.jsonl"
    path.write_bytes(b"\xfe\xff" + text.encode("utf-16-be") + b"\n")  # and a stray byte
    loaded = load_records("decisions", path)
    assert len(loaded.records) == 3
    assert [q.line for q in loaded.quarantined] == [4]
    assert "UTF-16-BE" in loaded.quarantined[0].message
