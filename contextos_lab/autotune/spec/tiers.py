"""Fidelity tiers a spec may declare: a cheap `screen` harness and the `target` one it stands for.

Declared, not hard-coded (issue 46): each tier is a harness (or the spec's own harness with other
`harness_kwargs`) with its price. Only the target tier's scores reach the gate, the front and
every proposal; the screen tier is evidence for where to spend target calls, trusted only as far
as its measured agreement earns (`autotune.tiers`, docs/tiers.md). Kept apart from the run spec
so the spec model does not import the harness path.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from contextos_lab.autotune.budget import Prices


class Tier(BaseModel):
    """One harness tier: None fields fall back to the spec's own `harness` / `prices`;
    `harness_kwargs` are merged over the spec's when the harness is the spec's own."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    harness: str | None = Field(default=None, min_length=3, description="'package.module:factory'")
    harness_kwargs: dict[str, Any] = Field(default_factory=dict)
    prices: Prices | None = None


class Tiers(BaseModel):
    """`tiers: {screen: {...}, target: {...}}` plus how far the screen is trusted.

    Defaults: the screen runs a config on the first `screen_cases` of racing's case order (the
    same cases the target's first stages run). Agreement is the smallest, over objectives, of
    the rank correlation between the two tiers on configs run on both, with its `level`
    interval. Until `min_pairs` configs ran on both every config goes on to the target; once
    the interval's upper bound is below `min_agreement` the screen stops (the study is then
    racing on the target alone); while its lower bound is above 0, a config goes on unless a
    member of the target's current front leads it on the screen, on every objective, by more
    than that objective's doubt (`autotune.tiers.steer`), and every `audit_every`-th trial goes
    on whatever the screen says, so the agreement keeps being measured on configs the screen
    did not pick. Under `steer: surrogate` (the default) the screen also runs `pool` configs
    drawn from the search space, and every trial but the audits runs on the target the pooled
    config a surrogate fitted on the configs run on both tiers expects to raise the target's
    front most (`mean - optimism x spread`), until the screen is off (`autotune.tiers.pick`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    screen: Tier
    target: Tier = Field(default_factory=Tier)
    screen_cases: float = Field(
        default=0.2, gt=0, description="share of the search set (< 1) or a case count (>= 1)"
    )
    min_pairs: int = Field(default=10, ge=4, description="configs on both tiers before trusting")
    level: float = Field(default=0.9, gt=0.5, lt=1.0, description="agreement interval level")
    min_agreement: float = Field(
        default=0.2, gt=-1.0, lt=1.0, description="screen stops when the upper bound is below"
    )
    audit_every: int = Field(default=5, ge=2, description="every n-th trial skips the screen")
    steer: Literal["front", "surrogate"] = Field(
        default="surrogate", description="surrogate: the target runs what a surrogate fitted "
        "on both tiers expects to raise its front most, from a pool screened wide "
        "(autotune.tiers.pick); front: only stop configs a target front member leads on the "
        "screen",
    )  # fmt: skip
    pool: int = Field(default=150, ge=1, description="configs the surrogate steer screens wide")
    optimism: float = Field(
        default=1.0, ge=0.0, description="surrogate picks by mean - optimism x spread"
    )

    @model_validator(mode="after")
    def _two_harnesses(self) -> Tiers:
        if self.screen == self.target:
            raise ValueError("tiers: screen and target declare the same harness and price")
        return self

    def n_screen_cases(self, n_cases: int) -> int:
        """Cases the screen runs for a search set of `n_cases` (at least 4, at most all)."""
        share = self.screen_cases
        size = round(share * n_cases) if share < 1 else int(share)
        return max(4, min(n_cases, size))
