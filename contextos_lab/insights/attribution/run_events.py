"""Who plays which role in a run, and what happened in it, with the step each event was at.

Roles come from what a speaker does, not from who it is: a *tool* speaker's turns are mostly
execution output (or its name says executor/terminal, or the turn is a tau-bench tool call's
result); an *orchestrator* writes a progress ledger or is named as a manager/planner; *user* is
the simulated customer of a tool-calling run; everyone else is an *agent*. In a run where no
speaker's name says its role, the turns' layout may (`name_free.fallback_roles`): a
speaker that only ever answers others' actions is a tool, the caller's only counterpart in a
tool-calling chat is the user. The run's state-changing calls are `name_free.write_calls`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from contextos_lab.insights.attribution import signals as sig
from contextos_lab.insights.attribution.memo import last_run
from contextos_lab.insights.attribution.name_free import fallback_roles, write_calls
from contextos_lab.insights.attribution.turns import RunTrace, agent_key

TOOL, ORCHESTRATOR, USER, AGENT = "tool", "orchestrator", "user", "agent"
USER_NAMES = ("user", "human", "customer")


def roles(run: RunTrace) -> dict[str, str]:
    """Role of each speaker key (see the module docstring)."""
    texts: dict[str, list[str]] = {}
    names: dict[str, str] = {}
    for turn in run.turns:
        key = agent_key(turn.speaker)
        texts.setdefault(key, []).append(turn.content)
        names.setdefault(key, turn.speaker)
    out: dict[str, str] = {}
    unnamed: set[str] = set()  # neither name nor content said anything
    named = False  # some speaker's name said its role: the run's names speak
    for key, contents in texts.items():
        name = names[key]
        output_like = sum(bool(sig.TOOL_OUTPUT.match(c)) for c in contents)
        head = sig.name_head(name)
        named = named or bool(
            sig.TOOL_NAME.match(head)
            or sig.ORCHESTRATOR_NAME.match(head)
            or name.lower() in USER_NAMES
        )
        if sig.TOOL_NAME.match(head) or output_like * 2 >= len(contents):
            out[key] = TOOL
        elif sig.ORCHESTRATOR_NAME.match(head) or any(sig.LEDGER.search(c) for c in contents):
            out[key] = ORCHESTRATOR
        elif name.lower() in USER_NAMES:
            out[key] = USER
        else:
            out[key] = AGENT
            unnamed.add(key)
    return out if named else fallback_roles(run, out, unnamed)


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
    #: Positions of the state-changing tool calls (`name_free.write_calls`).
    writes: list[int] = field(default_factory=list)

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
    out = RunSignals(role, writes=write_calls(run.turns))
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


__all__ = ["AGENT", "ORCHESTRATOR", "TOOL", "USER", "RunSignals", "roles", "run_signals"]
