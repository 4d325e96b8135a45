"""The typed shape of a project folder (see `contextos_lab.domain` for the layout)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from contextos_lab.errors import ContextosError
from contextos_lab.schemas.surface import TunableSurface
from contextos_lab.schemas.vocabulary import AdjustmentLayer

#: Shapes the declarative compiler table covers; `python` names an entry point for the rest.
Shape = Literal[
    "tighten_evidence",
    "raise_approval_threshold",
    "lower_approval_threshold",
    "add_policy_rule",
    "add_redaction_rule",
    "adjust_intent_rubric",
    "layer",
    "python",
]


class ProjectError(ContextosError, ValueError):
    """A project folder that cannot be used; the message names the file and the field."""


class DecisionKey(BaseModel):
    """What governs one decision key: its policy bundle and the stem of that bundle's rule ids."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    bundle: str | None = Field(default=None, description="policy bundle id governing the key")
    rule_stem: str = Field(default="R", min_length=1, description="prefix of generated rule ids")
    intent: str | None = Field(default=None, description="the workflow (target.intent) it is in")
    description: str | None = None


class ReasonClassInfo(BaseModel):
    """One entry of `reason-classes.json`; `signal` routes its insights (seed 001 table)."""

    model_config = ConfigDict(frozen=True, extra="allow")

    description: str = Field(min_length=1)
    decision_keys: tuple[str, ...] = ()
    signal: str | None = None


class CompilerSpec(BaseModel):
    """One row of `harness/compilers.yaml`: how insights of a reason class become a change.

    Text fields are templates over `{insight_id} {count} {key} {reason_class} {stem}` (and
    `{threshold} {current}` for thresholds). Policy shapes emit a StrategyProposal patching the
    key's bundle; `layer` emits a StrategyRule on one of the six adjustment layers; `python`
    calls `entry` (`module:function`, the module resolved inside the project folder first).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    shape: Shape
    rule_id: str | None = None
    op: Literal["auto", "add", "modify"] = Field(
        default="auto", description="auto: modify the live rule of that id, else add it"
    )
    applies_to: dict[str, Any] | None = None
    requires: tuple[str, ...] = ()
    merge: bool = Field(default=True, description="keep the live rule's requirements too")
    then: dict[str, Any] | None = None
    redact: tuple[str, ...] = ()
    amount_field: str = "amount"
    hint_field: str = "approval_above"
    step: float = Field(default=50.0, gt=0)
    layer: AdjustmentLayer | None = None
    type: str | None = None
    value: dict[str, Any] = Field(default_factory=dict)
    rubric: dict[str, Any] | None = None
    entry: str | None = Field(default=None, pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
    rule_rationale: str | None = None
    rationale: str | None = None

    @model_validator(mode="after")
    def _complete(self) -> CompilerSpec:
        need = {
            "tighten_evidence": ("requires",),
            "add_policy_rule": ("then",),
            "add_redaction_rule": ("redact",),
            "adjust_intent_rubric": ("rubric",),
            "layer": ("layer",),
            "python": ("entry",),
        }.get(self.shape, ())
        missing = [name for name in need if not getattr(self, name)]
        if missing:
            raise ValueError(f"shape {self.shape} needs {', '.join(missing)}")
        return self


class ReplaySafetyRule(BaseModel):
    """One row of the manifest's `replay_safety`: the replay gate scores safety 0 for an
    approval whose numeric input `input` exceeds `above` with no evidence of kind `requires`
    (a non-numeric or absent input never fires). `decision_keys` limits it; empty: every key."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: str = Field(min_length=1, description="the DecisionRecord input field compared")
    above: float = Field(description="approvals with the input strictly above this are checked")
    requires: str = Field(min_length=1, description="evidence kind that makes it safe")
    decision_keys: tuple[str, ...] = Field(default=(), description="keys it covers; empty: all")

    def covers(self, decision_key: str) -> bool:
        return not self.decision_keys or decision_key in self.decision_keys


class DomainConfig(BaseModel):
    """A loaded project: its registry, decision keys, compilers and where its data lives."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    root: Path
    name: str = Field(min_length=1)
    description: str = ""
    decision_keys: dict[str, DecisionKey] = Field(default_factory=dict)
    reason_classes: dict[str, ReasonClassInfo] = Field(default_factory=dict)
    compilers: dict[str, CompilerSpec] = Field(default_factory=dict)
    tunable_surfaces: tuple[TunableSurface, ...] = ()
    #: intent -> pandas expression over a case's facts (and `amount`): approving is a violation
    #: where it holds. The policy evaluator's "true rules" of the domain.
    policy_evaluation: dict[str, str] = Field(default_factory=dict)
    #: target.intent -> the `intent` values its replay cases carry, when they are not the
    #: workflow name or a dotted child of it (autotune and the gate scope to these cases).
    case_intents: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    #: The replay gate's safety rules (`contextos_lab.proposals.replay.replay`); none: safety is 1.
    replay_safety: tuple[ReplaySafetyRule, ...] = ()

    @property
    def registry_path(self) -> Path:
        return self.root / "harness" / "feedback" / "reason-classes.json"

    @property
    def bundles_dir(self) -> Path:
        return self.root / "harness" / "policy" / "bundles"

    @property
    def goldens_dir(self) -> Path:
        return self.root / "harness" / "goldens"

    @property
    def replay_dir(self) -> Path:
        return self.root / "harness" / "replay"

    @property
    def compilers_path(self) -> Path:
        return self.root / "harness" / "compilers.yaml"

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    @property
    def specs_dir(self) -> Path:
        return self.root / "specs"

    def bundle_for_key(self, decision_key: str) -> str:
        """The bundle governing a decision key; an unknown key is an error naming the file."""
        spec = self.decision_keys.get(decision_key)
        if spec is None or spec.bundle is None:
            known = ", ".join(sorted(k for k, v in self.decision_keys.items() if v.bundle))
            raise ProjectError(
                f"no policy bundle governs decision key {decision_key} in project {self.name} "
                f"({self.root / 'contextos-project.yaml'}: decision_keys; known: {known or 'none'})"
            )
        return spec.bundle

    def rule_stem(self, decision_key: str) -> str:
        spec = self.decision_keys.get(decision_key)
        return spec.rule_stem if spec else "R"

    def intent_of(self, decision_key: str) -> str | None:
        spec = self.decision_keys.get(decision_key)
        return spec.intent if spec else None

    def bundle_path(self, bundle_id: str) -> Path:
        return self.bundles_dir / f"{bundle_id}.json"

    def goldens_path(self, bundle_id: str) -> Path:
        return self.goldens_dir / f"{bundle_id}.jsonl"
