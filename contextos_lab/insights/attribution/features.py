"""Generic features of each step of a run, the only input an attributor scores.

Step features are positions and signals relative to the run's own events (the first error,
the orchestrator's first loop/stall flag, the run's end; see `run_events` for the roles and
events), so they carry over to other multi-agent systems and speaker layouts.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from contextos_lab.insights.attribution import signals as sig
from contextos_lab.insights.attribution.memo import last_run, rows_copy
from contextos_lab.insights.attribution.provenance import (
    contradicted_soon_after,
    final_answer_share,
)
from contextos_lab.insights.attribution.provenance import figures as stated_figures
from contextos_lab.insights.attribution.run_events import (
    AGENT,
    ORCHESTRATOR,
    TOOL,
    USER,
    RunSignals,
    roles,
    run_signals,
)
from contextos_lab.insights.attribution.turns import RunTrace, agent_key

#: Step features, in the order of a feature vector (all in [0, 1]).
STEP_FEATURES = (
    "role_orchestrator",
    "role_user",
    "first_turn",
    "second_turn",
    "position",
    "first_turn_of_speaker",
    "same_speaker_as_previous",
    "issues_action",
    "action_fails",
    "last_actor_before_first_error",
    "before_first_error",
    "responds_to_error",
    # The turn reads an execution/tool result (it interprets output rather than plans).
    "responds_to_tool_output",
    "first_actor_after_last_error",
    "run_has_error",
    "workaround_language",
    "has_code",
    "length",
    "terminate_only",
    "last_actor_before_first_flag",
    "repeats_previous_action",
    "task_turn_issues_action",
    "speaker_share",
    "unsupported_figures",
    "figures_reach_the_end",
    "first_write_call",
    # Where the step is among the acting turns, and whether it is the first of its kind: the
    # decisive mistake is usually an early act (the first code, the first figure kept to the end).
    "actor_rank_0",
    "actor_rank_1",
    "actor_rank_2",
    "actor_rank_3",
    "actor_rank",
    "first_code",
    "first_action",
    "first_failing_action",
    "first_figure_reaching_the_end",
    "first_workaround",
    "first_unsupported_figures",
    "first_turn_of_speaker_with_code",
    "verify_language",
    "hedge_language",
    "answer_language",
    # Where the run's end came from and what others disputed (see `provenance`): the share of
    # the final turn's values this turn first stated; another speaker calls it wrong soon after.
    "final_answer_share",
    "contradicted_soon_after",
    # The requester (the user role) ends a run in which no agent ever acted with effect (no
    # executed code, no state-changing call): an omission, whose decisive step is the end.
    "requester_ends_without_effect",
)


def _last_before(candidates: list[int], event: int | None) -> int | None:
    if event is None:
        return None
    before = [i for i in candidates if i < event]
    return before[-1] if before else None


@last_run(rows_copy)
def step_features(run: RunTrace, signals: RunSignals | None = None) -> list[dict[str, float]]:
    """One feature row per turn (see STEP_FEATURES); tool turns get a row too, the
    attributor decides which turns are candidates."""
    steps = _Steps.of(run, signals or run_signals(run))
    seen: set[str] = set()
    rows = []
    for i, turn in enumerate(run.turns):
        key = agent_key(turn.speaker)
        rows.append(steps.row(i, key, first_of_speaker=key not in seen))
        seen.add(key)
    return rows


@dataclass(frozen=True)
class _Steps:
    """What each turn's features read about the whole run: roles, the acting turns, the
    error and flag events, the figures said, and the first turn of each kind."""

    run: RunTrace
    signals: RunSignals
    role_of: list[str]
    actors: list[int]
    new_figures: list[set[str]]
    final: set[str]
    answer_share: list[float]
    disputed: list[bool]

    @classmethod
    def of(cls, run: RunTrace, s: RunSignals) -> _Steps:
        turns = run.turns
        role_of = [s.role[agent_key(t.speaker)] for t in turns]
        actors = [i for i in range(len(turns)) if role_of[i] not in (TOOL, USER)]
        figures = [stated_figures(t.content) for t in turns]
        said: set[str] = set()
        new_figures = []
        for i in range(len(turns)):
            new_figures.append(figures[i] - said if role_of[i] != TOOL else set())
            said |= figures[i]
        last_actor = max((i for i in actors if len(turns[i].content.strip()) > 20), default=None)
        acting = [r not in (TOOL, USER) for r in role_of]
        return cls(
            run, s, role_of, actors, new_figures,
            final=figures[last_actor] if last_actor is not None else set(),
            answer_share=final_answer_share(turns, acting, last_actor),
            disputed=contradicted_soon_after(turns, acting),
        )  # fmt: skip

    @cached_property
    def without_effect(self) -> bool:
        """No acting turn had an effect: neither code that was executed nor a state-changing
        tool call (a read such as a look-up changes nothing the run was asked to change)."""
        writes = set(self.signals.writes)
        return not any(
            i in writes if self.run.turns[i].tool else self.issues(i) for i in self.actors
        )

    def issues(self, i: int) -> bool:
        turns = self.run.turns
        return bool(turns[i].tool) or (i + 1 < len(turns) and self.role_of[i + 1] == TOOL)

    @cached_property
    def events(self) -> dict[str, int | None]:
        """The run's own events each turn is placed against."""
        s, actors = self.signals, self.actors
        first_error = s.errors[0] if s.errors else None
        last_error = s.errors[-1] if s.errors else None
        agents = [i for i in actors if self.role_of[i] != ORCHESTRATOR] or actors
        return {
            "first_error": first_error,
            "before_error": _last_before(actors, first_error),
            "after_last": next(
                (i for i in actors if last_error is not None and i > last_error), None
            ),
            "before_flag": _last_before(agents, s.first_flag),
            "first_write": s.writes[0] if s.writes else None,
        }

    @cached_property
    def first_of(self) -> dict[str, int | None]:
        """The first acting turn of each kind (`first_code`, `first_action`, ...)."""
        turns, errors, new, final = (
            self.run.turns,
            set(self.signals.errors),
            self.new_figures,
            self.final,
        )
        tests: tuple[tuple[str, Callable[[int], bool]], ...] = (
            ("first_code", lambda i: bool(sig.CODE.search(turns[i].content))),
            ("first_action", self.issues),
            ("first_failing_action", lambda i: self.issues(i) and i + 1 in errors),
            ("first_figure_reaching_the_end", lambda i: bool(new[i] & final)),
            ("first_workaround", lambda i: bool(sig.WORKAROUND.search(turns[i].content))),
            ("first_unsupported_figures", lambda i: bool(new[i])),
        )
        return {name: next((i for i in self.actors if test(i)), None) for name, test in tests}

    @cached_property
    def share(self) -> dict[str, float]:
        counts = Counter(agent_key(self.run.turns[i].speaker) for i in self.actors)
        return {k: counts.get(k, 0) / max(1, len(self.actors)) for k in self.signals.role}

    @cached_property
    def rank(self) -> dict[int, int]:
        return {i: r for r, i in enumerate(self.actors)}

    @cached_property
    def error_set(self) -> set[int]:
        return set(self.signals.errors)

    @cached_property
    def repeated(self) -> set[int]:
        return set(self.signals.repeated_steps)

    def row(self, i: int, key: str, *, first_of_speaker: bool) -> dict[str, float]:
        """Turn `i`'s feature row (its speaker `key`, speaking for the first time or not)."""
        turns, role_of, ev = self.run.turns, self.role_of, self.events
        n, text, k = len(turns), turns[i].content, self.rank.get(i, -1)
        nxt = i + 1 if i + 1 < n else None
        issues = self.issues(i)
        error_set, first_error = self.error_set, ev["first_error"]
        return {
            "role_orchestrator": float(role_of[i] == ORCHESTRATOR),
            "role_user": float(role_of[i] == USER),
            "first_turn": float(i == 0),
            "second_turn": float(i == 1),
            "position": i / max(1, n - 1),
            "first_turn_of_speaker": float(first_of_speaker),
            "same_speaker_as_previous": float(i > 0 and agent_key(turns[i - 1].speaker) == key),
            "issues_action": float(issues),
            "action_fails": float(issues and nxt is not None and nxt in error_set),
            "last_actor_before_first_error": float(i == ev["before_error"]),
            "before_first_error": float(first_error is not None and i < first_error),
            "responds_to_error": float(i - 1 in error_set),
            "responds_to_tool_output": float(i > 0 and role_of[i - 1] == TOOL),
            "first_actor_after_last_error": float(i == ev["after_last"]),
            "run_has_error": float(first_error is not None),
            "workaround_language": float(bool(sig.WORKAROUND.search(text))),
            "has_code": float(bool(sig.CODE.search(text))),
            "length": min(1.0, math.log1p(len(text)) / 10),
            "terminate_only": float(text.strip().rstrip(".").upper() == "TERMINATE"),
            "last_actor_before_first_flag": float(i == ev["before_flag"]),
            "repeats_previous_action": float(i in self.repeated),
            "task_turn_issues_action": float(i == 0 and issues),
            "speaker_share": self.share[key],
            "unsupported_figures": min(1.0, len(self.new_figures[i]) / 5),
            "figures_reach_the_end": float(bool(self.new_figures[i] & self.final)),
            "first_write_call": float(i == ev["first_write"]),
            **{f"actor_rank_{r}": float(k == r) for r in range(4)},
            "actor_rank": min(8, max(0, k)) / 8,
            **{name: float(i == at) for name, at in self.first_of.items()},
            "first_turn_of_speaker_with_code": float(
                first_of_speaker and bool(sig.CODE.search(text))
            ),
            "verify_language": float(bool(sig.VERIFY.search(text))),
            "hedge_language": float(bool(sig.HEDGE.search(text))),
            "answer_language": float(bool(sig.ANSWER.search(text))),
            "final_answer_share": self.answer_share[i],
            "contradicted_soon_after": float(self.disputed[i]),
            "requester_ends_without_effect": float(
                i == n - 1 and role_of[i] == USER and self.without_effect
            ),
        }


__all__ = [
    "AGENT",
    "ORCHESTRATOR",
    "STEP_FEATURES",
    "TOOL",
    "USER",
    "RunSignals",
    "roles",
    "run_signals",
    "step_features",
]
