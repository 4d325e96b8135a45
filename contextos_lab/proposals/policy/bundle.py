"""Policy bundles: versioned, hashed rule sets in seed 000's shape, evaluated deterministically.

A rule is `{rule_id, applies_to, then: {allow, requires}, rationale}` (seed 000, Step 3), with
two optional extensions: `then.approval_above` (amounts above it need a human approval, evidence
kind `human_approval`: how an approval gate is expressed) and `then.redact` (output fields a
redaction rule removes; omitted from the serialised rule when empty, so bundles that never had
one keep their content hash). The gated amount is `inputs[then.amount_field]` (default
`amount`). Evaluation over
the facts a DecisionRecord recorded (its `inputs` and the evidence kinds of its `evidence_refs`):

1. the rules that apply (not deprecated, `applies_to` matches), in rule_id order;
2. any with `allow: false` → deny;
3. evidence required by any of them and not present → deny, naming what is missing;
4. amount above the lowest `approval_above` without `human_approval` evidence → escalate;
5. otherwise approve. No applicable rule → escalate (nothing covers the decision).

Bundles are frozen; `apply_patch` returns a new version and never touches the prior one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from contextos_lab.errors import ContextosError
from contextos_lab.schemas.base import canonical_json, sha256_hex
from contextos_lab.schemas.decision import DecisionRecord
from contextos_lab.schemas.strategy import Patch, PatchOp, PatchTarget

HUMAN_APPROVAL = "human_approval"
#: The input an approval gate compares with `approval_above`, unless the rule names another.
AMOUNT = "amount"
Decision = Literal["approve", "deny", "escalate"]
STATUS_OF: dict[str, str] = {"approve": "COMPLETED", "deny": "DENIED", "escalate": "ESCALATED"}
_OPS = {
    "gt": lambda a, b: a > b,
    "gte": lambda a, b: a >= b,
    "lt": lambda a, b: a < b,
    "lte": lambda a, b: a <= b,
    "in": lambda a, b: a in b,
}


class PatchError(ContextosError, ValueError):
    """A patch that does not apply to the bundle it names."""


class RuleThen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    allow: bool
    requires: tuple[str, ...] = ()
    approval_above: float | None = Field(default=None, ge=0)
    redact: tuple[str, ...] = ()
    amount_field: str = Field(default=AMOUNT, min_length=1)

    @model_serializer(mode="wrap")
    def _drop_defaults(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Extensions at their default are left out, so older bundles keep their hash."""
        data = handler(self)
        if not data.get("redact"):
            data.pop("redact", None)
        if data.get("amount_field") == AMOUNT:
            data.pop("amount_field", None)
        return data


class PolicyRule(BaseModel):
    """`applies_to.intent` matches a decision key or intent; other keys are conditions on
    `inputs`: a scalar means equality, a dict uses gt/gte/lt/lte/in."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rule_id: str = Field(min_length=1)
    applies_to: dict[str, Any] = Field(default_factory=dict)
    then: RuleThen
    rationale: str | None = None
    deprecated: bool = False

    def matches(self, record: DecisionRecord) -> bool:
        if self.deprecated:
            return False
        for key, want in self.applies_to.items():
            if key == "intent":
                if want not in (record.decision_key, record.intent):
                    return False
                continue
            have = record.inputs.get(key)
            if isinstance(want, dict):
                if have is None or not all(_OPS[op](have, v) for op, v in want.items()):
                    return False
            elif have != want:
                return False
        return True


class PolicyBundle(BaseModel):
    """A bundle's version n: the rules plus the hash of the version it came from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    bundle_id: str = Field(min_length=1, examples=["MY_POLICY_V1"])
    version: int = Field(ge=1)
    rules: tuple[PolicyRule, ...]
    parent_hash: str | None = None
    change: str | None = Field(default=None, description="the patch that produced this version")

    def content_hash(self) -> str:
        return sha256_hex(canonical_json(self.model_dump(mode="json")))

    @property
    def ref(self) -> str:
        """`BUNDLE_ID@v1#<sha256>`: what a StrategyRule pins as its baseline."""
        return f"{self.bundle_id}@v{self.version}#{self.content_hash()}"

    def rule(self, rule_id: str) -> PolicyRule | None:
        return next((r for r in self.rules if r.rule_id == rule_id), None)

    @classmethod
    def from_file(cls, path: Path) -> PolicyBundle:
        """A bundle file; a missing or malformed one is a UserError naming the file and field."""
        from pydantic import ValidationError

        from contextos_lab.errors import UserError

        try:
            return cls.model_validate(json.loads(Path(path).read_text(encoding="utf-8")))
        except OSError as exc:
            raise UserError(f"{path}: cannot read policy bundle ({exc.strerror or exc})") from None
        except json.JSONDecodeError as exc:
            raise UserError(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
        except ValidationError as exc:
            err = exc.errors(include_url=False)[0]
            field = ".".join(str(p) for p in err["loc"]) or "(file)"
            raise UserError(f"{path}: field {field}: {err['msg']}") from None


class PolicyDecision(BaseModel):
    """What a bundle decided; `outputs()` is the part that is hashed (see replay.py)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    decision: Decision
    status: str
    evidence_missing: tuple[str, ...]
    evidence_checked: tuple[str, ...]
    fired_rules: tuple[str, ...]
    #: output fields a redaction rule removed (of the record's `inputs.output_fields`)
    redacted: tuple[str, ...] = ()

    def outputs(self) -> dict[str, Any]:
        """The hashed outcome; `redacted` only when a rule redacted something, so outcomes
        of bundles without redaction rules keep their hashes."""
        out: dict[str, Any] = {
            "decision": self.decision,
            "status": self.status,
            "evidence_missing": list(self.evidence_missing),
        }
        if self.redacted:
            out["redacted"] = sorted(self.redacted)
        return out


def evidence_kinds(record: DecisionRecord) -> frozenset[str]:
    """Evidence present on a record: the kind before `:` of each ref (`lookup:ref_9`)."""
    return frozenset(ref.split(":", 1)[0] for ref in record.evidence_refs)


def evaluate(bundle: PolicyBundle, record: DecisionRecord) -> PolicyDecision:
    """The bundle's decision on the record's recorded facts (pure and deterministic)."""
    rules = sorted((r for r in bundle.rules if r.matches(record)), key=lambda r: r.rule_id)
    present = evidence_kinds(record)
    checked = tuple(sorted({e for r in rules for e in r.then.requires}))
    redacted = redacted_fields(rules, record)

    def out(decision: Decision, fired: list[str], missing: tuple[str, ...] = ()) -> PolicyDecision:
        return PolicyDecision(
            decision=decision,
            status=STATUS_OF[decision],
            evidence_missing=missing,
            evidence_checked=checked,
            fired_rules=tuple(fired),
            redacted=redacted,
        )

    if not rules:
        return out("escalate", [])
    denied = [r.rule_id for r in rules if not r.then.allow]
    if denied:
        return out("deny", denied)
    missing = tuple(e for e in checked if e not in present)
    if missing:
        fired = [r.rule_id for r in rules if set(r.then.requires) & set(missing)]
        return out("deny", fired, missing)
    if HUMAN_APPROVAL not in present:
        over = [
            r
            for r in rules
            if r.then.approval_above is not None
            and (amount := input_number(record, r.then.amount_field)) is not None
            and amount > float(r.then.approval_above)
        ]
        if over:
            gate = min(over, key=lambda r: (r.then.approval_above, r.rule_id))
            return out("escalate", [gate.rule_id])
    return out("approve", [r.rule_id for r in rules])


def redacted_fields(rules: Any, record: DecisionRecord) -> tuple[str, ...]:
    """Fields of the record's output (`inputs.output_fields`) that an applicable rule redacts:
    what a redaction rule changes, and so what its replay compares."""
    shown = record.inputs.get("output_fields")
    if not isinstance(shown, (list, tuple)):
        return ()
    redact = {f for r in rules for f in r.then.redact}
    return tuple(sorted(str(f) for f in shown if f in redact))


def input_number(record: DecisionRecord, field: str) -> float | None:
    """`inputs[field]` as a number; None when absent, boolean or not numeric."""
    return _number(record.inputs.get(field))


def _number(value: Any) -> float | None:
    try:
        return None if value is None or isinstance(value, bool) else float(value)
    except (TypeError, ValueError):
        return None


def apply_patch(bundle: PolicyBundle, patch: Patch) -> PolicyBundle:
    """The next version with the patch applied; the given bundle is left as it was."""
    rubric = patch.target == PatchTarget.intent_rubric and bundle.bundle_id.startswith("RUBRIC_")
    if patch.target != PatchTarget.policy_bundle and not rubric:
        raise PatchError(f"patch targets {patch.target.value}, not a policy bundle")
    if patch.target_id != bundle.bundle_id:
        raise PatchError(f"patch targets {patch.target_id}, bundle is {bundle.bundle_id}")
    rule_id = patch.body.get("rule_id")
    if not isinstance(rule_id, str) or not rule_id:
        raise PatchError("patch body needs a rule_id")
    existing = bundle.rule(rule_id)
    rules = list(bundle.rules)
    op = PatchOp(patch.op)
    if op == PatchOp.add:
        if existing is not None:
            raise PatchError(f"add: {rule_id} already exists in {bundle.bundle_id}")
        rules.append(PolicyRule.model_validate(patch.body))
    elif existing is None:
        raise PatchError(f"{op.value}: {rule_id} is not in {bundle.bundle_id}")
    elif op == PatchOp.modify:
        rules[rules.index(existing)] = PolicyRule.model_validate(patch.body)
    else:
        rules[rules.index(existing)] = existing.model_copy(update={"deprecated": True})
    return PolicyBundle(
        bundle_id=bundle.bundle_id,
        version=bundle.version + 1,
        rules=tuple(sorted(rules, key=lambda r: r.rule_id)),
        parent_hash=bundle.content_hash(),
        change=f"{op.value} {rule_id}",
    )
