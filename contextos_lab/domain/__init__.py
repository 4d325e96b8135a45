"""A domain is configuration: one project folder the whole kit reads, never code in the package.

The core (schemas, store, loaders, evaluators, insights, proposals, gate, autotune) knows no
business domain. Everything domain-specific — which override reason classes exist, which policy
bundle governs a decision key, the goldens a patch is replayed on, the cases a harness is scored
on, which surfaces autotune may change and how an insight becomes a proposal — lives in a project
folder with this layout (only `contextos-project.yaml` or the reason-class registry is required):

    my-domain/
      contextos-project.yaml              name, description, decision_keys, policy_evaluation,
                                          case_intents, replay_safety (the replay gate's rule)
      harness/feedback/reason-classes.json  override_reason_class registry (seed 000's place)
      harness/policy/bundles/<BUNDLE>.json  each policy bundle's first version (seeds the registry)
      harness/goldens/<BUNDLE>.jsonl        golden cases the replay gate replays a patch on
      harness/goldens/LAYER_<layer>.jsonl   golden cases a layer rule is replayed on
      harness/layer_replay.py               replay(record, adjustments): what a layer does
      harness/replay/cases.jsonl            replay cases (ReplayPackets) + manifest.json
      harness/tunable-surfaces.json         the surfaces autotune may change (TunableSurface list)
      harness/compilers.yaml                the proposal-compiler table, reason class -> shape
      harness/compilers.py                  optional Python compilers the table names (`entry:`)
      data/                                 raw decision / feedback files for `ingest` (optional)
      specs/                                autotune run specs (optional)

Which project a command uses: `--project DIR`, else `$CONTEXTOS_PROJECT`, else the current
directory when it has the layout, else the bundled example domain (the reference refund desk,
`contextos_lab/harness/reference/project/`). `load_project(path)` is the one loader;
`use_project` makes a project the active one for the registry and the compilers.
"""

from __future__ import annotations

import importlib
from typing import Any

#: The environment variable naming the project folder (here, not in `domain.active`, so the
#: CLI can name it in `--help` without loading pydantic and the schemas)
ENV = "CONTEXTOS_PROJECT"

_WHERE = {
    "active_project": "active",
    "resolve_project_path": "active",
    "use_project": "active",
    "CompilerSpec": "config",
    "DecisionKey": "config",
    "DomainConfig": "config",
    "ProjectError": "config",
    "ReasonClassInfo": "config",
    "ReplaySafetyRule": "config",
    "BUNDLED_PROJECT": "loader",
    "is_project": "loader",
    "load_project": "loader",
}
__all__ = ["ENV", *sorted(_WHERE)]


def __getattr__(name: str) -> Any:
    """Names load on first use (PEP 562): `import contextos_lab.domain` stays cheap."""
    if name in _WHERE:
        return getattr(importlib.import_module(f"contextos_lab.domain.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'contextos_lab.domain' has no attribute {name!r}")
