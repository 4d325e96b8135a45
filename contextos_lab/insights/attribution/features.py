"""Generic features of a run and of each of its steps, the only input an attributor scores.

Roles come from what a speaker does, not from who it is: a *tool* speaker's turns are mostly
execution output (or its name says executor/terminal, or the turn is a tau-bench tool call's
result); an *orchestrator* writes a progress ledger or is named as a manager/planner; *user* is
the simulated customer of a tool-calling run; everyone else is an *agent*. Step features are
positions and signals relative to the run's own events (the first error, the orchestrator's
first loop/stall flag), so they carry over to other multi-agent systems and speaker layouts.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

from contextos_lab.insights.attribution import signals as sig
from contextos_lab.insights.attribution.memo import last_run, rows_copy
from contextos_lab.insights.attribution.provenance import (
    contradicted_soon_after,
    final_answer_share,
)
from contextos_lab.insights.attribution.provenance import figures as stated_figures
from contextos_lab.insights.attribution.turns import RunTrace, agent_key

TOOL, ORCHESTRATOR, USER, AGENT = "tool", "orchestrator", "user", "agent"

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
)


def roles(run: RunTrace) -> dict[str, str]:
    """Role of each speaker key (see the module docstring)."""
    texts: dict[str, list[str]] = {}
    names: dict[str, str] = {}
    for turn in run.turns:
        key = agent_key(turn.speaker)
        texts.setdefault(key, []).append(turn.content)
        names.setdefault(key, turn.speaker)
    out: dict[str, str] = {}
    for key, contents in texts.items():
        name = names[key]
        output_like = sum(bool(sig.TOOL_OUTPUT.match(c)) for c in contents)
        head = sig.name_head(name)
        if sig.TOOL_NAME.match(head) or output_like * 2 >= len(contents):
            out[key] = TOOL
        elif sig.ORCHESTRATOR_NAME.match(head) or any(sig.LEDGER.search(c) for c in contents):
            out[key] = ORCHESTRATOR
        elif name.lower() in ("user", "human", "customer"):
            out[key] = USER
        else:
            out[key] = AGENT
    return out


@dataclass
class RunSignals:
    """What happened in the run as a whole, with the step each event was first seen at."""

    role: dict[str, str]
    errors: list[int] = field(default_factory=list)
    error_types: dict[int, str] = field(default_factory=dict)
    loop_steps: list[int] = field(default_factory=list)
    stall_steps: list[int] = field(default_factory=list)
    limit: bool = False
    terminated: bool = False
    transferred: bool = False
    repeated_steps: list[int] = field(default_factory=list)

    @property
    def first_flag(self) -> int | None:
        flags = self.loop_steps + self.stall_steps
        return min(flags) if flags else None

    @property
    def ending(self) -> str:
        if self.limit:
            return "on a round or time limit"
        if self.transferred:
            return "with a transfer to a human"
        if self.terminated:
            return "with TERMINATE"
        return "without a termination signal"


def _action(turn_text: str, tool: str | None) -> str:
    return f"{tool}:{turn_text}" if tool else turn_text.strip()


@last_run()
def run_signals(run: RunTrace) -> RunSignals:
    role = roles(run)
    out = RunSignals(role)
    seen: Counter[str] = Counter()
    for i, turn in enumerate(run.turns):
        r = role[agent_key(turn.speaker)]
        text = turn.content
        if r == TOOL and sig.is_error(text):
            out.errors.append(i)
            out.error_types[i] = sig.error_type(text) or "error"
        if sig.LOOP.search(text):
            out.loop_steps.append(i)
        if sig.NO_PROGRESS.search(text) or (r == ORCHESTRATOR and sig.STALL.search(text)):
            out.stall_steps.append(i)
        if sig.LIMIT.search(text) and i >= len(run.turns) - 3:
            out.limit = True
        if sig.TRANSFER.search(text) or (turn.tool and sig.TRANSFER.search(turn.tool)):
            out.transferred = True
        if (r != TOOL and len(text.strip()) > 20) or turn.tool:
            action = _action(text, turn.tool)
            if seen[action]:
                out.repeated_steps.append(i)
            seen[action] += 1
    tail = run.turns[-2:] if run.turns else ()
    out.terminated = any(sig.TERMINATE.search(t.content) for t in tail)
    return out


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

    def issues(self, i: int) -> bool:
        turns = self.run.turns
        return bool(turns[i].tool) or (i + 1 < len(turns) and self.role_of[i + 1] == TOOL)

    @cached_property
    def events(self) -> dict[str, int | None]:
        """The run's own events each turn is placed against."""
        s, actors, turns = self.signals, self.actors, self.run.turns
        first_error = s.errors[0] if s.errors else None
        last_error = s.errors[-1] if s.errors else None
        writes = [i for i, t in enumerate(turns) if t.tool and sig.WRITE_CALL.match(t.tool)]
        agents = [i for i in actors if self.role_of[i] != ORCHESTRATOR] or actors
        return {
            "first_error": first_error,
            "before_error": _last_before(actors, first_error),
            "after_last": next(
                (i for i in actors if last_error is not None and i > last_error), None
            ),
            "before_flag": _last_before(agents, s.first_flag),
            "first_write": writes[0] if writes else None,
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
