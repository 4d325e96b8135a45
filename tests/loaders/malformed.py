"""A seeded generator of malformed input files for every loader (fuzz benchmark + property tests).

Each `Case` is one file on disk plus what an honest loader must report about it: how many rows
it holds (`rows_in`, None when the damage makes the count unknowable, e.g. a CSV cut inside a
quoted cell) and, per row number, the value that was written (`inputs`), so a stored record can
be compared with what was read. Damage comes from the classes a hardening review found:
non-finite and overflowing numbers, lone surrogates, undecodable bytes, deep nesting, ids with a
trailing newline, repeated keys, wrong types, truncation, byte-order marks and binary garbage.
"""

from __future__ import annotations

import io
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from contextos_lab.loaders.records import KINDS
from tests.loaders.fixtures import (
    _flatten,
    _tabular,
    decision_row,
    feedback_record_row,
    feedback_row,
    scorecard_row,
)

BASE_ROWS: dict[str, Callable[[int], dict[str, Any]]] = {
    "decisions": decision_row,
    "feedback": feedback_row,
    "feedback-records": feedback_record_row,
    "scorecards": scorecard_row,
}
#: Raw JSON number tokens a Python value cannot spell; written in place of a marker string.
RAW_TOKENS = ("1e400", "-1e999", "1e999", "NaN", "Infinity", "-Infinity", "1" + "0" * 400)
BOM = b"\xef\xbb\xbf"


@dataclass
class Case:
    path: Path
    loader: str  # a record kind, or "otlp" | "tau-bench" | "who-and-when"
    fmt: str
    rows_in: int | None
    inputs: dict[int, Any] = field(default_factory=dict)  # row number -> value written
    damage: list[str] = field(default_factory=list)


def _marker(token: str) -> str:
    return f"@@RAW{RAW_TOKENS.index(token)}@@"


def _dumps(value: Any, rng: random.Random) -> str:
    text = json.dumps(value, ensure_ascii=rng.random() < 0.5)
    return _unmark(text, quoted=True)


def _unmark(text: str, *, quoted: bool) -> str:
    q = '"' if quoted else ""
    for i, token in enumerate(RAW_TOKENS):
        text = text.replace(f"{q}@@RAW{i}@@{q}", token)
    while "@@DEEP" in text:
        start = text.index(f"{q}@@DEEP")
        end = text.index(f"@@{q}", start + len(q) + 2) + 2 + len(q)
        depth = int(text[start + len(q) + 6 : end - 2 - len(q)])
        text = text[:start] + '{"k":[' * depth + "1" + "]}" * depth + text[end:]
    return text


def _deep(depth: int) -> str:
    """A marker that `_dumps` spells as `depth` levels of nested objects and arrays (text,
    because json.dumps itself cannot write 5000 levels)."""
    return f"@@DEEP{depth}@@"


def _bad_value(rng: random.Random, current: Any) -> tuple[Any, str]:
    """A replacement value and the name of its damage class."""
    choice = rng.randrange(16)
    if choice == 0:
        token = rng.choice(RAW_TOKENS)
        return _marker(token), f"raw number {token[:8]}"
    if choice == 1:
        return "\ud800" if rng.random() < 0.5 else f"x\udfffy{current}", "lone surrogate"
    if choice == 2:
        return _deep(rng.choice((40, 120, 300, 600, 5000))), "deep nesting"
    if choice == 3:
        return f"{current}\n" if isinstance(current, str) else "\n", "trailing newline"
    if choice == 4:
        return rng.choice(([], {}, True, None, 0, -1, 2**63, 3.5, "")), "wrong type"
    if choice == 5:
        return rng.choice(("1e400", "NaN", "inf", "-Infinity", "1e999")), "non-finite text"
    if choice == 6:
        return "x" * rng.choice((10, 1_000_001)), "long string"
    if choice == 7:
        return "\u202e\u200b\x00\x1b[31m" + str(current), "control characters"
    if choice == 8:
        return {"\ud801": 1, "a": [1e308, -1e308, 5e-324]}, "surrogate key"
    if choice == 9:
        return [rng.random() for _ in range(3)], "list"
    if choice == 10:
        return f" {current} ", "padded"
    if choice == 11:
        return rng.choice(("2026-13-40T00:00:00Z", "2026-05-01", "yesterday", "1e10")), "bad date"
    if choice == 12:
        return 10 ** rng.choice((19, 30, 309)), "huge int"
    if choice == 13:
        return "ＡＢＣ\uff10" + "é" * 3, "unicode"
    if choice == 14:
        return {"nested": {"x": _marker("1e400")}}, "nested overflow"
    return current, "unchanged"


def _damage_row(rng: random.Random, row: dict[str, Any]) -> tuple[dict[str, Any], str]:
    row = dict(row)
    roll = rng.random()
    if roll < 0.08:
        key = rng.choice(list(row))
        del row[key]
        return row, "missing field"
    if roll < 0.14:
        row[rng.choice(("extra", "\ud83d", "a.b"))] = 1
        return row, "unknown field"
    key = rng.choice(list(row))
    value, what = _bad_value(rng, row[key])
    if isinstance(row[key], dict) and row[key] and rng.random() < 0.5:
        inner = dict(row[key])
        inner_key = rng.choice(list(inner))
        inner[inner_key] = value
        row[key] = inner
    else:
        row[key] = value
    return row, what


def _rows(kind: str, rng: random.Random, start: int) -> tuple[list[dict[str, Any]], list[str]]:
    n = rng.choice((1, 2, 3, 5, 8))
    rows, damage = [], []
    for i in range(n):
        row = BASE_ROWS[kind]((start + i) % 50)
        row = _reid(kind, row, start + i)
        if rng.random() < 0.7:
            row, what = _damage_row(rng, row)
            damage.append(what)
        rows.append(row)
    return rows, damage


_ID_FIELDS = {
    "decisions": ("record_id", "dr_2026_05_01_f{}"),
    "feedback": ("id", "fb_2026_05_10_f{}"),
    "feedback-records": ("feedback_id", "fb_2026_05_10_g{}"),
    "scorecards": ("scorecard_id", "sc_f{}"),
}


def _reid(kind: str, row: dict[str, Any], n: int) -> dict[str, Any]:
    """A fresh id per generated row, so files never collide in the store by accident."""
    name, shape = _ID_FIELDS[kind]
    if kind == "feedback":
        return row  # signed: a new id would break the signature; the store sorts repeats
    return {**row, name: shape.format(n)}


def _encode(text: str, rng: random.Random) -> bytes:
    return text.encode("utf-8", "surrogatepass" if rng.random() < 0.3 else "backslashreplace")


def _jsonl(case: Case, rows: list[dict[str, Any]], rng: random.Random) -> bytes:
    lines = []
    for number, row in enumerate(rows, start=1):
        text = _dumps(row, rng)
        roll = rng.random()
        if roll < 0.05:
            text = text[: rng.randrange(max(1, len(text)))]
            case.damage.append("cut line")
        elif roll < 0.08:
            text = text.replace('":', '":' + '"a":', 1) if '":' in text else text
            case.damage.append("repeated key")
        elif roll < 0.11:
            text = rng.choice(("[1,2]", '"text"', "42", "null", "{", "}"))
            case.damage.append("not an object")
        case.inputs[number] = text
        data = _encode(text, rng)
        if rng.random() < 0.05:
            at = rng.randrange(len(data) + 1)
            data = data[:at] + rng.choice((b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00")) + data[at:]
            case.damage.append("bad byte")
            case.inputs.pop(number, None)
        lines.append(data)
    sep = b"\r\n" if rng.random() < 0.2 else b"\n"
    return sep.join(lines) + (sep if rng.random() < 0.8 else b"")


def _json(case: Case, rows: list[dict[str, Any]], rng: random.Random) -> bytes:
    items: list[Any] = list(rows)
    if rng.random() < 0.1:
        items.append(rng.choice((1, "x", None, [1])))
        case.damage.append("non-object item")
    for number, item in enumerate(items, start=1):
        case.inputs[number] = _dumps(item, rng)
    text = "[" + ",\n".join(case.inputs[n] for n in sorted(case.inputs)) + "]"
    if len(items) == 1 and rng.random() < 0.3:
        text = case.inputs[1]
    case.rows_in = len(items)
    return _encode(text, rng)


def _csv_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return _unmark(json.dumps(value, ensure_ascii=False), quoted=True)
    return _unmark(str(value), quoted=False)


def _quote(cell: str) -> str:
    if any(ch in cell for ch in ',"\r\n') or cell != cell.strip():
        return '"' + cell.replace('"', '""') + '"'
    return cell


def _csv(case: Case, rows: list[dict[str, Any]], rng: random.Random) -> bytes:
    model = KINDS[case.loader]
    flat = [{k: _csv_cell(v) for k, v in _flatten(model, row).items()} for row in rows]
    header = list(dict.fromkeys(name for row in flat for name in row))
    if not header:
        header = ["x"]
    lines = [",".join(_quote(h) for h in header)]
    surrogates = "surrogatepass" if rng.random() < 0.3 else "backslashreplace"
    number = 2
    for row in flat:
        cells = [row.get(name, "") for name in header]
        roll = rng.random()
        if roll < 0.05:
            cells = cells[:-1]
            case.damage.append("short row")
        elif roll < 0.08:
            cells = [*cells, "extra"]
            case.damage.append("long row")
        line = ",".join(_quote(c) for c in cells)
        if not line.strip(","):
            line = '"",' + line  # an all-empty row would be skipped as blank; keep it a row
        case.inputs[number] = {
            h: c.encode("utf-8", surrogates).decode("utf-8", "surrogateescape")
            for h, c in zip(header, cells, strict=False)
        }
        number += len(io.StringIO(line + "\n", newline="").readlines())
        lines.append(line)
    data = ("\n".join(lines) + "\n").encode("utf-8", surrogates)
    if rng.random() < 0.05:
        at = data.find(b"\n") + 1 + rng.randrange(max(1, len(data) - data.find(b"\n") - 1))
        data = data[:at] + b"\xff" + data[at:]
        case.damage.append("bad byte")
        case.inputs.clear()
    return data


def _parquet(case: Case, rows: list[dict[str, Any]], rng: random.Random) -> bytes | None:
    model = KINDS[case.loader]
    clean = [_tabular(model, _parquet_safe(row)) for row in rows]
    try:
        table = pa.Table.from_pylist(clean)
        pq.write_table(table, case.path)
    except (pa.ArrowException, OverflowError, TypeError, ValueError, UnicodeError):
        return b"PAR1 not really parquet"
    for number, row in enumerate(pq.read_table(case.path).to_pylist(), start=1):
        case.inputs[number] = row  # what Arrow wrote (it keeps the first row's columns only)
    return None


def _parquet_safe(value: Any) -> Any:
    """Arrow cannot hold lone surrogates, markers or ints past int64: keep what it can."""
    if isinstance(value, dict):
        return {_parquet_safe(k): _parquet_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_parquet_safe(v) for v in value]
    if isinstance(value, str):
        if value.startswith("@@RAW"):
            return float("inf") if "RAW0" in value or "RAW2" in value else float("nan")
        return value.encode("utf-8", "replace").decode("utf-8", "replace").replace("?", "")
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 2**63:
        return float(value) if value < 10**300 else 0
    return value


def _file_damage(data: bytes, case: Case, rng: random.Random) -> bytes:
    roll = rng.random()
    if roll < 0.12:
        case.damage.append("BOM")
        return BOM + data
    if roll < 0.17 and case.fmt == "jsonl":
        case.damage.append("cut file")
        cut = data[: rng.randrange(len(data) + 1)]
        case.inputs = {}
        case.rows_in = _physical_rows(cut)
        return cut
    if roll < 0.19:
        case.damage.append("garbage")
        case.inputs, case.rows_in = {}, None
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
    if roll < 0.2:
        case.damage.append("empty")
        case.inputs, case.rows_in = {}, 0
        return rng.choice((b"", b"\n\n", b"  \r\n", BOM))
    return data


def _physical_rows(data: bytes) -> int:
    lines = data.split(b"\n")
    if lines and lines[0].startswith(BOM):
        lines[0] = lines[0][len(BOM) :]
    return sum(1 for line in lines if line.rstrip(b"\r\n").strip())


def record_case(root: Path, index: int, rng: random.Random) -> Case:
    """One malformed file of a record kind in a random format."""
    kind = rng.choice(list(BASE_ROWS))
    fmt = rng.choices(("jsonl", "json", "csv", "parquet"), weights=(4, 2, 3, 1))[0]
    path = root / f"f{index}.{fmt}"
    case = Case(path, kind, fmt, None)
    rows, case.damage = _rows(kind, rng, index * 10)
    case.rows_in = len(rows)
    if fmt == "parquet":
        data = _parquet(case, rows, rng)
        if data is not None:
            case.inputs, case.rows_in = {}, None
            path.write_bytes(data)
        elif rng.random() < 0.1:
            raw = path.read_bytes()
            path.write_bytes(raw[: rng.randrange(len(raw))])
            case.inputs, case.rows_in = {}, None
            case.damage.append("cut parquet")
        return case
    data = {"jsonl": _jsonl, "json": _json, "csv": _csv}[fmt](case, rows, rng)
    if fmt == "jsonl":
        case.rows_in = _physical_rows(data)
    data = _file_damage(data, case, rng)
    if fmt == "json" and "BOM" not in case.damage and case.damage[-1:] != ["garbage"]:
        pass
    path.write_bytes(data)
    return case


# -- trace formats ------------------------------------------------------------------------------


def _span(rng: random.Random, i: int) -> dict[str, Any]:
    span: dict[str, Any] = {
        "traceId": f"t{i % 3}",
        "spanId": f"s{i}",
        "name": "chat",
        "startTimeUnixNano": str(1_700_000_000_000_000_000 + i),
        "endTimeUnixNano": 1_700_000_000_100_000_000 + i,
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
            {"key": "gen_ai.tool.name", "value": {"stringValue": "lookup"}},
            {"key": "n", "value": {"intValue": "3"}},
        ],
        "status": {"code": rng.choice((0, 1, 2, "STATUS_CODE_ERROR"))},
    }
    if rng.random() < 0.7:
        key = rng.choice(list(span))
        span[key], _what = _trace_bad(rng)
    return span


def _trace_bad(rng: random.Random) -> tuple[Any, str]:
    return rng.choice(
        (
            (_marker("1e400"), "overflow"),
            (_marker("NaN"), "nan"),
            ("1" + "9" * 40, "huge nanos"),
            (-(10**30), "negative huge"),
            ([{"key": 1, "value": {"intValue": "x"}}], "bad attribute"),
            ([{"key": "a", "value": {"intValue": _marker("1e400")}}], "overflow attribute"),
            ({"code": [1]}, "bad status"),
            ({"code": "x"}, "bad status"),
            ({"code": 10**20}, "bad status"),
            (_deep(rng.choice((50, 3000))), "deep"),
            ([], "list"),
            ({}, "dict"),
            (True, "bool"),
            ("\ud800", "surrogate"),
            (None, "null"),
            (3.5, "float"),
        )
    )


def otlp_case(root: Path, index: int, rng: random.Random) -> Case:
    spans = [_span(rng, index * 10 + i) for i in range(rng.choice((1, 2, 4)))]
    scope: Any = {"spans": spans}
    request: Any = {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [scope]}]}
    if rng.random() < 0.15:
        request["resourceSpans"][0], _what = _trace_bad(rng)
    elif rng.random() < 0.1:
        scope["spans"], _what = _trace_bad(rng)
    fmt = rng.choice(("json", "jsonl"))
    path = root / f"o{index}.{fmt}"
    case = Case(path, "otlp", fmt, None)
    data = _encode(_dumps(request, rng), rng)
    path.write_bytes(_file_damage(data, case, rng))
    return case


def tau_case(root: Path, index: int, rng: random.Random) -> Case:
    runs = []
    for i in range(rng.choice((1, 2, 3))):
        run: dict[str, Any] = {
            "task_id": index * 10 + i,
            "reward": rng.choice((0.0, 1.0)),
            "info": {"task": {"user_id": "u1", "actions": [{"name": "get", "kwargs": {}}]}},
            "traj": [
                {"role": "user", "content": "hi"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"function": {"name": "get", "arguments": "{}"}}],
                },
            ],
            "trial": 0,
        }
        if rng.random() < 0.8:
            target = rng.choice(("run", "info", "task", "traj", "msg", "call"))
            value, _ = _trace_bad(rng)
            key_pool = {
                "run": (run, list(run)),
                "info": (run["info"], ["task", "reward_info"]),
                "task": (run["info"]["task"], ["user_id", "actions"]),
                "traj": (run, ["traj"]),
                "msg": (run["traj"][1], ["role", "content", "tool_calls"]),
                "call": (run["traj"][1]["tool_calls"][0], ["function"]),
            }[target]
            key_pool[0][rng.choice(key_pool[1])] = value
        runs.append(run)
    path = root / f"tau{index}.json"
    case = Case(path, "tau-bench", "json", len(runs))
    data = _encode(_dumps(runs, rng), rng)
    path.write_bytes(_file_damage(data, case, rng))
    return case


def ww_case(root: Path, index: int, rng: random.Random) -> Case:
    row: dict[str, Any] = {
        "question_ID": f"q{index}",
        "question": "what?",
        "mistake_agent": "Planner",
        "mistake_step": "2",
        "mistake_reason": "wrong plan",
        "history": [{"role": "user", "name": "Planner", "content": "x"}],
        "ground_truth": "42",
        "level": 1,
    }
    if rng.random() < 0.8:
        key = rng.choice(list(row))
        row[key], _ = _trace_bad(rng)
    fmt = rng.choice(("json", "jsonl"))
    path = root / f"ww{index}.{fmt}"
    case = Case(path, "who-and-when", fmt, 1)
    data = _encode(_dumps(row, rng), rng)
    path.write_bytes(_file_damage(data, case, rng))
    return case


def make_case(root: Path, index: int, rng: random.Random) -> Case:
    roll = rng.random()
    if roll < 0.7:
        return record_case(root, index, rng)
    if roll < 0.8:
        return otlp_case(root, index, rng)
    if roll < 0.9:
        return tau_case(root, index, rng)
    return ww_case(root, index, rng)


# -- checking one case --------------------------------------------------------------------------

#: Messages of whole-row problems, where no single field is to blame (field None is right).
WHOLE_ROW = (
    "invalid JSON",
    "JSON ends early",
    "JSON is nested too deeply",
    "not valid UTF-8",
    "not valid UTF-16",  # bytes the encoding a BOM names cannot decode (issue 44)
    "not valid UTF-32",
    "expected a JSON object",
    "malformed CSV",
    "row has",
    "not an OTLP",
    "run is not an object",
    "span is not an object",
    "not a JSON object",
    "unreadable",
    "not readable JSON",
    "expected a JSON list",
    "(row):",  # a model-level rule over several fields (pydantic reports no single field)
)


@dataclass
class Outcome:
    traceback: str | None = None
    unreadable: bool = False
    rows_checked: bool = False
    unaccounted: int = 0
    without_field: int = 0
    altered: int = 0
    accepted: int = 0
    quarantined: int = 0
    details: list[str] = field(default_factory=list)


def run_case(case: Case, store: Any) -> Outcome:
    """Load (and, for record kinds, ingest) one case; never raises."""
    import traceback

    from contextos_lab.loaders import UnreadableSource
    from contextos_lab.loaders.ingest import store_loaded
    from contextos_lab.loaders.records import load_records

    out = Outcome()
    try:
        if case.loader in KINDS:
            loaded = load_records(case.loader, case.path)
            report = store_loaded(case.loader, loaded, store)
            accepted, quarantined = report.accepted, report.quarantined
            refused = {q.line for q in quarantined if q.stage == "store"}
            _check_values(case, loaded, store, out, refused)
        else:
            loaded = _trace_loader(case.loader)(case.path)
            accepted, quarantined = len(loaded.records), loaded.quarantined
            if case.loader == "otlp":
                case.rows_in = None  # spans in, traces out: no row-for-row count
            # a whole file refused as one entry counts the rows it held (`QuarantinedRow.rows`)
    except UnreadableSource:
        out.unreadable = True
        return out
    except Exception:
        out.traceback = traceback.format_exc(limit=-3)
        return out
    out.accepted, out.quarantined = accepted, sum(q.rows for q in quarantined)
    for q in quarantined:
        if q.field is None and not q.message.startswith(WHOLE_ROW):
            out.without_field += 1
            out.details.append(f"no field: {q.message[:120]}")
    if case.rows_in is not None and (case.loader in KINDS or case.loader != "otlp"):
        out.rows_checked = True
        out.unaccounted = abs(case.rows_in - accepted - out.quarantined)
    return out


def _trace_loader(name: str) -> Callable[[Path], Any]:
    from contextos_lab.loaders.otlp import load_otlp
    from contextos_lab.loaders.tau_bench import load_tau_bench
    from contextos_lab.loaders.who_and_when import load_who_and_when

    return {"otlp": load_otlp, "tau-bench": load_tau_bench, "who-and-when": load_who_and_when}[name]


def _check_values(case: Case, loaded: Any, store: Any, out: Outcome, refused: set[int]) -> None:
    for record in loaded.records:
        origin = loaded.origins.get(record.artifact_id)
        written = case.inputs.get(origin.line) if origin is not None else None
        if written is None or origin.line in refused:
            continue
        stored = store.find(record.artifact_id)
        if stored is None:
            continue  # refused by the store: quarantined, counted above
        body = json.loads(stored.canonical())
        if case.fmt in ("jsonl", "json"):
            try:
                written = json.loads(written)
            except ValueError:
                out.altered += 1
                out.details.append(f"accepted a row that is not JSON: {written[:80]!r}")
                continue
        elif case.fmt == "csv":
            written = _uncsv(written)
        elif case.fmt == "parquet":
            written = _no_nulls(written)  # a Parquet null is an absent field (readers.py)
        problem = differs(written, body)
        if problem is not None:
            out.altered += 1
            out.details.append(f"{case.path.name} {record.artifact_id}: {problem}")


def _no_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _no_nulls(v) for k, v in value.items() if v is not None}
    return value


def _uncsv(cells: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, cell in cells.items():
        if cell == "":
            continue
        *parents, leaf = name.split(".")
        target = out
        for part in parents:
            target = target.setdefault(part, {})
        target[leaf] = _Cell(cell)
    return out


class _Cell(str):
    """A CSV cell: text that may stand for a number, a bool or JSON."""


def differs(written: Any, stored: Any, path: str = "") -> str | None:
    """Why `stored` does not mean what `written` said (None: it does)."""
    import math

    where = path or "(row)"
    if isinstance(written, dict):
        if not isinstance(stored, dict):
            return f"{where}: object became {stored!r:.60}"
        for key, value in written.items():
            if key not in stored:
                if value is None:
                    continue
                return f"{where}.{key}: dropped"
            problem = differs(value, stored[key], f"{path}.{key}" if path else str(key))
            if problem:
                return problem
        return None
    if isinstance(written, list):
        if not isinstance(stored, list) or len(stored) != len(written):
            return f"{where}: list became {stored!r:.60}"
        for i, (a, b) in enumerate(zip(written, stored, strict=True)):
            problem = differs(a, b, f"{path}.{i}")
            if problem:
                return problem
        return None
    if written is None or isinstance(written, bool):
        return (
            None
            if stored is written or stored == written
            else f"{where}: {written!r} -> {stored!r:.60}"
        )
    if isinstance(written, (int, float)):
        if isinstance(stored, bool) or not isinstance(stored, (int, float)):
            return f"{where}: number {written!r:.40} -> {stored!r:.60}"
        if not math.isfinite(written) or written != stored:
            return f"{where}: number {written!r:.40} -> {stored!r:.60}"
        return None
    if isinstance(written, _Cell):
        if isinstance(stored, str):
            return _same_text(written, stored, where)
        if isinstance(stored, bool):
            ok = written.strip().lower() in (
                {"true", "1", "yes", "on", "t", "y"}
                if stored
                else {"false", "0", "no", "off", "f", "n"}
            )
            return None if ok else f"{where}: {written!r} -> {stored!r}"
        if isinstance(stored, (int, float)):
            try:
                number = float(written)
            except ValueError:
                return f"{where}: {written!r:.40} -> {stored!r}"
            return (
                None
                if math.isfinite(number) and number == stored
                else f"{where}: {written!r:.40} -> {stored!r}"
            )
        try:
            return differs(json.loads(written), stored, path)
        except ValueError:
            return f"{where}: {written!r:.40} -> {stored!r:.60}"
    if isinstance(written, str):
        if not isinstance(stored, str):
            return differs(_Cell(written), stored, path)  # "0.5" for a number, JSON text
        return _same_text(written, stored, where)
    return None


def _same_text(written: str, stored: str, where: str) -> str | None:
    from datetime import datetime

    if written == stored:
        return None
    try:
        if datetime.fromisoformat(written) == datetime.fromisoformat(stored):
            return None
    except ValueError:
        pass
    return f"{where}: {written!r:.40} -> {stored!r:.60}"
