"""How much of the search set a trial pays for: `full`, or `racing` on growing subsets.

The spec declares it (`fidelity:` and `racing:`); `autotune.racing.racing` runs it. Kept apart from
the
racing engine so the spec model does not import the harness path.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Fidelity = Literal["full", "racing"]
Promotion = Literal["estimated_gain", "possible"]


class RacingSchedule(BaseModel):
    """The subsets a racing trial grows through before the full search set.

    `stages` are fractions of the search set (< 1) or case counts (>= 1), increasing; the full
    set is always the last stage and is not listed. Stage sizes below `min_cases` are raised to
    it, and sizes that reach the full set are dropped (a 12-case set races in one full stage).
    `z` is the width of the confidence bounds in standard errors: a config is dropped only when
    even its optimistic bound breaches a floor or an accepted delta, or is dominated by a fully
    evaluated feasible trial.

    The defaults come from benchmarks/search_cost.py on the reference harness: with bounds
    paired case by case, five looks at z = 2 reached 0.95 of the true front in a median 12,172
    case evaluations on seeds 0-4 (11,420 once also paired with the nearest completed trial),
    three looks at z = 3 in 15,698 (a config with a small
    regression is proved out at 10-40 % of the set instead of completing); on seeds 10-11,
    z = 1.645 or eight looks changed that cost by under 4 %. With promotion estimated_gain,
    four rounds a stage took seeds 0-4 from 4,409 to 4,258 (seeds 0-19: 4,511.5 to 4,336.5).
    On the noisy stand-in LLM harness (issue 33) most spend went to configs completed for a
    sliver of hypervolume and to 30-case smoke stages of configs the front already beat:
    `promotion_min_gain` 0.002 and `min_cases` 12 are what search_cost.json now measures
    (development seeds 2 and 3: 6,007 and 7,266 case evaluations to 0.95 against 7,018 and
    16,246 before). With that bar fixed, stand-in racing gained only 0.0051 from 50 to 100
    trials' worth of case evaluations (0.9864 at 100; Optuna's default TPE reaches 0.9941 at 200):
    the front's remaining points are slivers the bar never lets through. `promotion_patience` 20
    halves the bar after 20 sliver verdicts in a row: 0.9936 at 100 and 0.9973 at 200 (median,
    seeds 0-9), with the median case evaluations to 0.95 unchanged (5,504), and on the reference
    harness every seed's unchanged (its bar never halved within 25 trials' worth).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    stages: tuple[float, ...] = Field(
        default=(0.05, 0.1, 0.2, 0.4, 0.7), min_length=0, max_length=8
    )
    min_cases: int = Field(
        default=12,
        ge=2,
        description="smallest smoke stage, in cases (12: a config the front already beats stops "
        "after about one concurrent batch on a small set; the stand-in's 194 cases race "
        "12/19/39/78/136, the reference harness's 684 are untouched by it)",
    )
    z: float = Field(default=2.0, gt=0.0, description="confidence-bound width, standard errors")
    stratify_by: tuple[str, ...] = Field(
        default=(), description="case columns whose strata every subset keeps in proportion"
    )
    seed: int | None = Field(default=None, description="None = the sampler's seed (or 0)")
    rounds: int = Field(
        default=4,
        ge=1,
        le=8,
        description="rounds each subset stage's new cases run in, doubling in size (4: 1/8, "
        "1/8, 1/4, 1/2 of them; only a stage's last round may be smaller than the harness's "
        "concurrency). "
        "After each round a breach the cases already run prove, whatever the rest would "
        "score, ends the trial (autotune.racing.proof); the statistical checks run at stage "
        "ends, and the full set runs in one call. 1 = one call a stage",
    )
    promotion: Promotion = Field(
        default="estimated_gain",
        description="which configs that can still reach the front go on: `estimated_gain` (the "
        "default and what every benchmark measures: only while the point estimate adds feasible "
        "hypervolume; the rest stop as not promoted, see autotune.racing.promotion) or "
        "`possible` (all; drops only on evidence, so it completes more configs per trial for "
        "the gate at a budget in trials, and pays more case evaluations for each)",
    )

    promotion_min_gain: float = Field(
        default=0.002,
        ge=0.0,
        lt=1.0,
        description="with promotion estimated_gain: the least share of the feasible front's "
        "hypervolume a config's point estimate must add to go on (0 = any gain). Stops the "
        "configs near a noisy front that would be completed for a sliver "
        "(benchmarks/search_cost.py, both harnesses)",
    )

    promotion_patience: int = Field(
        default=20,
        ge=0,
        description="with promotion estimated_gain: sliver verdicts (a config stopped only "
        "because it adds under the bar) in a row, with no config completed between, after which "
        "`promotion_min_gain` halves for the rest of the study (0 = a fixed bar). The bar holds "
        "back slivers while new proposals still open regions; once a study has run out of "
        "those, slivers are the front's remaining gain (autotune.racing.promotion.promotion_bar)",
    )

    promotion_z: float = Field(
        default=0.5,
        ge=0.0,
        description="with promotion estimated_gain: standard errors of benefit of the doubt "
        "the estimate promotion judges gets on each evaluator whose runs are noisy (a case's "
        "repeats disagree; 0 = the point estimate, as on a deterministic or once-run harness): "
        "on a noisy harness a config on the true front stops on a few unlucky cases otherwise "
        "(autotune.racing.promotion.promotion_estimate)",
    )

    @field_validator("stages")
    @classmethod
    def _increasing(cls, value: tuple[float, ...]) -> tuple[float, ...]:
        if any(v <= 0 for v in value):
            raise ValueError("racing stages must be > 0 (fractions < 1 or case counts >= 1)")
        if list(value) != sorted(set(value)):
            raise ValueError("racing stages must be strictly increasing")
        return value

    def sizes(self, n_cases: int) -> list[int]:
        """Case counts of every stage for a set of `n_cases`, the full set last."""
        out: list[int] = []
        for stage in self.stages:
            size = max(self.min_cases, round(stage * n_cases) if stage < 1 else int(stage))
            if size < n_cases and (not out or size > out[-1]):
                out.append(size)
        return [*out, n_cases]

    def round_ends(self, start: int, end: int, concurrency: int = 1) -> list[int]:
        """Where the rounds of a stage from case `start` to `end` end, `end` last.

        Rounds double in size (1/8, 1/8, 1/4, 1/2 of the stage's new cases for 4), so a
        config that breaches a floor on its k-th new case pays for about 2k new cases, or the
        whole first round if k falls in it, at no more than `rounds` harness calls a stage.
        No round but the stage's last is smaller than `concurrency` (so the last can be more
        than half: 30 cases at concurrency 8 run as 8 + 22): a smaller one would leave slots
        idle and save nothing.
        """
        new = end - start
        if new <= 0:
            return []
        ends, last = [], start
        for j in range(1, self.rounds):
            cut = start + -(-new // 2 ** (self.rounds - j))
            if cut - last >= concurrency and cut < end:
                ends.append(cut)
                last = cut
        return [*ends, end]
