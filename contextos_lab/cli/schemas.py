"""`contextos-lab schema --out DIR`: one JSON Schema file per envelope, `<ModelName>.json`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from contextos_lab.cli.conventions import add_command


def write_json_schemas(out_dir: Path) -> list[Path]:
    from contextos_lab.schemas.envelopes import ENVELOPES  # every envelope: not for --help

    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, model in sorted(ENVELOPES.items()):
        path = out_dir / f"{name}.json"
        schema = model.model_json_schema(by_alias=True)
        path.write_text(json.dumps(schema, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        written.append(path)
    return written


def _run(args: argparse.Namespace) -> int:
    paths = write_json_schemas(Path(args.out))
    print(f"wrote {len(paths)} JSON Schema files to {args.out}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = add_command(
        subparsers,
        "schema",
        example="contextos-lab schema --out out/schemas",
    )
    p.add_argument("--out", required=True, help="directory for <ModelName>.json files")
    p.set_defaults(func=_run, loads_project=False)  # the envelopes alone, no project
