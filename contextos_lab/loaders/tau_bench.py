"""tau-bench historical trajectories → traces, DecisionRecords and a typed failure reason.

Public format (sierra-research/tau-bench, `historical_trajectories/<model>-<domain>.json`): a
JSON list of runs `{task_id, reward, info: {task: {user_id, actions: [{name, kwargs}],
instruction, outputs}, reward_info: {reward, info: {r_actions | r_outputs, outputs}}},
traj: [OpenAI chat messages, assistant `tool_calls` with JSON-string `arguments`, `tool`
replies], trial}`. A run passes when reward ≥ 1.

Runs carry no clock, so every run is stamped `NO_CLOCK` (no trend is fitted on them) rather than
placed on a timeline made up from file order. Nothing is read from the file's path: the domain
comes from the tool names, ids from the run's content, so moving or renaming a file changes no
key, id or split. Records that lack what the comparison needs are quarantined with the field
and reason, never guessed.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from contextos_lab.loaders.guard import guarded, loads, read_text
from contextos_lab.loaders.otlp import (
    OPERATION,
    TOOL_NAME,
    Span,
    Trace,
    TraceLoadResult,
    _files,
    new_result,
)
from contextos_lab.loaders.trace_text import CONTENT, CONTENT_CHARS
from contextos_lab.schemas.base import canonical_json
from contextos_lab.schemas.clock import NO_CLOCK
from contextos_lab.schemas.decision import DecisionRecord, TerminalStatus
from contextos_lab.schemas.ids import new_id

TRANSFER_TOOL = "transfer_to_human_agents"
STOP_TOKEN = "###STOP###"
#: Write tools of the public domains; others are recognised by a write-verb prefix.
WRITE_TOOLS: frozenset[str] = frozenset(
    {
        "book_reservation",
        "cancel_reservation",
        "update_reservation_baggages",
        "update_reservation_flights",
        "update_reservation_passengers",
        "send_certificate",
        "cancel_pending_order",
        "exchange_delivered_order_items",
        "modify_pending_order_address",
        "modify_pending_order_items",
        "modify_pending_order_payment",
        "modify_user_address",
        "return_delivered_order_items",
    }
)
_WRITE_PREFIX = re.compile(
    r"^(book|cancel|update|modify|send|exchange|return|create|delete|add|remove|set)_"
)
_READ_ONLY = frozenset({"think", "calculate", "respond", TRANSFER_TOOL})


def is_write(tool: str) -> bool:
    return tool in WRITE_TOOLS or (tool not in _READ_ONLY and bool(_WRITE_PREFIX.match(tool)))


@dataclass(frozen=True)
class Action:
    name: str
    kwargs: Mapping[str, Any]
    failed: bool = False  # the tool answered with an error, so it changed nothing

    @property
    def key(self) -> str:
        return canonical_json([self.name, _normalise(self.kwargs)])


def _normalise(value: Any) -> Any:
    """`250.0` and `250` are the same argument; JSON exports differ on that."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {str(k): _normalise(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normalise(v) for v in value]
    return value


@dataclass(frozen=True)
class FailureReason:
    reason_class: str
    detail: str
    action: str | None = None


def derive_reason(
    taken: Sequence[Action], expected: Sequence[Action], *, stopped: bool, outputs_ok: bool = True
) -> FailureReason:
    """Why a failed run failed, by comparing the actions taken with the ground truth.

    First match wins, in this order:
    1. transferred_to_human: the run called `transfer_to_human_agents` and the ground truth does
       not.
    2. step_limit: the conversation never reached the user's stop token (the run was cut off).
    3. Effective write calls (errored calls changed nothing and are left out) are matched to
       ground-truth writes exactly (name and arguments). For the first unmatched ground-truth
       write: wrong_arguments if an unmatched call of the same tool was made, wrong_tool if a
       different unmatched write was made instead; premature_end if the run ended without
       attempting any write at all, else missing_action.
    4. extra_write: every ground-truth write matched but an unmatched write remains.
    5. missing_action (detail `missing_output`): writes all match but a required output was
       never said to the user (tau-bench scores outputs through the agent's replies).
    6. wrong_arguments (detail `state_mismatch`): nothing above differs, yet the final state
       did not match; the nearest class is an argument or ordering difference.
    """
    gt_writes = [a for a in expected if is_write(a.name)]
    if any(a.name == TRANSFER_TOOL for a in taken) and not any(
        a.name == TRANSFER_TOOL for a in expected
    ):
        return FailureReason("transferred_to_human", "handed off instead of acting", TRANSFER_TOOL)
    if not stopped:
        return FailureReason("step_limit", "conversation ended without the stop token")
    remaining = Counter(a.key for a in taken if is_write(a.name) and not a.failed)
    by_key = {a.key: a for a in taken}
    unmatched_gt: list[Action] = []
    for action in gt_writes:
        if remaining[action.key] > 0:
            remaining[action.key] -= 1
        else:
            unmatched_gt.append(action)
    left = [by_key[k] for k, n in remaining.items() for _ in range(n)]
    if unmatched_gt:
        first = unmatched_gt[0]
        same = [a for a in left if a.name == first.name]
        if same:
            return FailureReason("wrong_arguments", _arg_diff(first, same[0]), first.name)
        if left:
            return FailureReason(
                "wrong_tool", f"called {left[0].name} instead of {first.name}", first.name
            )
        if not any(is_write(a.name) for a in taken):
            return FailureReason(
                "premature_end", f"ended before any write; {first.name} expected", first.name
            )
        return FailureReason("missing_action", f"{first.name} never called", first.name)
    if left:
        return FailureReason("extra_write", f"{left[0].name} not in ground truth", left[0].name)
    if not outputs_ok:
        return FailureReason("missing_action", "missing_output")
    return FailureReason("wrong_arguments", "state_mismatch")


def _arg_diff(expected: Action, taken: Action) -> str:
    keys = sorted(set(expected.kwargs) | set(taken.kwargs))
    differ = [k for k in keys if expected.kwargs.get(k) != taken.kwargs.get(k)]
    return f"{expected.name}: {', '.join(differ) or 'argument order'} differ"


def _actions(raw: Any) -> list[Action]:
    out = []
    for item in raw or []:
        if isinstance(item, Mapping) and item.get("name"):
            out.append(Action(str(item["name"]), dict(item.get("kwargs") or {})))
    return out


def _taken(traj: Sequence[Any]) -> tuple[list[Action], list[tuple[str, str]]]:
    """Tool calls in the trajectory, marking those whose tool reply was an error.

    Returns the actions and (call id, tool name) pairs; arguments that are not valid JSON are
    kept as `{"_raw": text}` so they never match the ground truth by accident.
    """
    replies: dict[str, str] = {}
    for msg in traj:
        if isinstance(msg, Mapping) and msg.get("role") == "tool" and msg.get("tool_call_id"):
            replies[str(msg["tool_call_id"])] = str(msg.get("content") or "")
    actions: list[Action] = []
    calls: list[tuple[str, str]] = []
    for msg in traj:
        if not isinstance(msg, Mapping) or msg.get("role") != "assistant":
            continue
        for call in msg.get("tool_calls") or []:
            fn = (call or {}).get("function") or {}
            name = fn.get("name")
            if not name:
                continue
            raw_args = fn.get("arguments")
            try:
                kwargs = json.loads(raw_args) if isinstance(raw_args, str) else dict(raw_args or {})
            except (json.JSONDecodeError, TypeError, ValueError):
                kwargs = {"_raw": str(raw_args)}
            reply = replies.get(str(call.get("id")), "")
            actions.append(Action(str(name), kwargs, failed=reply.startswith("Error")))
            calls.append((str(call.get("id") or ""), str(name)))
    return actions, calls


#: Tools only one public domain has: the domain is read from what the runs call, not the path.
DOMAIN_TOOLS: dict[str, frozenset[str]] = {
    "airline": frozenset(
        {
            "book_reservation",
            "cancel_reservation",
            "get_reservation_details",
            "search_direct_flight",
            "search_onestop_flight",
            "update_reservation_baggages",
            "update_reservation_flights",
            "update_reservation_passengers",
            "send_certificate",
        }
    ),
    "retail": frozenset(
        {
            "cancel_pending_order",
            "exchange_delivered_order_items",
            "find_user_id_by_email",
            "find_user_id_by_name_zip",
            "get_order_details",
            "get_product_details",
            "modify_pending_order_address",
            "modify_pending_order_items",
            "modify_pending_order_payment",
            "modify_user_address",
            "return_delivered_order_items",
        }
    ),
}


def _tool_names(runs: Sequence[Any]) -> set[str]:
    """Every tool a file's runs call or expect (what its domain is read from)."""
    names: set[str] = set()
    for run in runs:
        if not isinstance(run, Mapping):
            continue
        task = (run.get("info") or {}).get("task") if isinstance(run.get("info"), Mapping) else None
        for action in (task or {}).get("actions") or [] if isinstance(task, Mapping) else []:
            if isinstance(action, Mapping) and isinstance(action.get("name"), str):
                names.add(action["name"])
        for msg in run.get("traj") or run.get("trajectory") or []:
            for call in (msg.get("tool_calls") or []) if isinstance(msg, Mapping) else []:
                fn = call.get("function") if isinstance(call, Mapping) else None
                if isinstance(fn, Mapping) and isinstance(fn.get("name"), str):
                    names.add(fn["name"])
    return names


def _domain(names: set[str], default: str | None) -> str:
    """The domain whose own tools the file's runs use most (ties: alphabetical), else `tau`."""
    if default:
        return default
    hits = {d: len(names & tools) for d, tools in DOMAIN_TOOLS.items()}
    best = max(hits, key=lambda d: (hits[d], d))
    return best if hits[best] else "tau"


def action_diff(taken: Sequence[Action], expected: Sequence[Action]) -> dict[str, Any]:
    """Effective writes taken vs ground-truth writes: what is missing, what is extra, and for
    each missing write with an unmatched call of the same tool, the arguments that differ."""
    left = Counter(a.key for a in taken if is_write(a.name) and not a.failed)
    by_key = {a.key: a for a in taken}
    missing: list[Action] = []
    for action in (a for a in expected if is_write(a.name)):
        if left[action.key] > 0:
            left[action.key] -= 1
        else:
            missing.append(action)
    extra = [by_key[k] for k, n in sorted(left.items()) for _ in range(n)]
    arguments = {}
    for want in missing:
        same = next((a for a in extra if a.name == want.name), None)
        if same is not None:
            keys = sorted(set(want.kwargs) | set(same.kwargs))
            arguments[want.name] = [
                k for k in keys if _normalise(want.kwargs.get(k)) != _normalise(same.kwargs.get(k))
            ]
    return {
        "missing": [a.name for a in missing],
        "extra": [a.name for a in extra],
        "wrong_arguments": arguments,
        "errored_calls": [a.name for a in taken if a.failed],
    }


def failing_step(traj: Sequence[Any], reason: FailureReason, diff: Mapping[str, Any]) -> int:
    """Index of the message a reviewer should read first: the call that went wrong (transfer,
    extra or wrongly argued write), else the run's last message (something was never done)."""
    wanted = {TRANSFER_TOOL} if reason.reason_class == "transferred_to_human" else set()
    wanted |= set(diff.get("extra") or ()) | set(diff.get("wrong_arguments") or ())
    for i, msg in enumerate(traj):
        if not isinstance(msg, Mapping) or msg.get("role") != "assistant":
            continue
        for call in msg.get("tool_calls") or []:
            if ((call or {}).get("function") or {}).get("name") in wanted:
                return i
    return max(0, len(traj) - 1)


def ground_truth_verdict(reward_info: Mapping[str, Any]) -> str | None:
    """tau-bench's own reading of a failed run: `actions` (final database state differs from
    the ground truth's), `outputs` (a required output never said), or None if not recorded."""
    info = reward_info.get("info") if isinstance(reward_info.get("info"), Mapping) else {}
    if info.get("r_actions") == 0:
        return "actions"
    if info.get("r_outputs") == 0:
        return "outputs"
    return None


def _trace(trace_id: str, traj: Sequence[Any], start: datetime, attrs: dict[str, Any]) -> Trace:
    spans = [
        Span(
            trace_id,
            "root",
            "invoke_agent tau-bench",
            start,
            None,
            None,
            {OPERATION: "invoke_agent", **attrs},
        )
    ]
    for i, msg in enumerate(traj):
        if not isinstance(msg, Mapping):
            continue
        at = start + timedelta(seconds=i)
        role = str(msg.get("role") or "unknown")
        for j, call in enumerate(msg.get("tool_calls") or []):
            name = ((call or {}).get("function") or {}).get("name") or "unknown"
            spans.append(
                Span(
                    trace_id,
                    f"s{i}_{j}",
                    f"execute_tool {name}",
                    at,
                    None,
                    "root",
                    {
                        OPERATION: "execute_tool",
                        TOOL_NAME: name,
                        "tau.message_index": i,
                        CONTENT: str(((call or {}).get("function") or {}).get("arguments"))[
                            :CONTENT_CHARS
                        ],
                    },
                )
            )
        if role in ("user", "assistant") and msg.get("content"):
            spans.append(
                Span(
                    trace_id,
                    f"s{i}",
                    f"chat {role}",
                    at,
                    None,
                    "root",
                    {
                        OPERATION: "chat",
                        "gen_ai.message.role": role,
                        "tau.message_index": i,
                        CONTENT: str(msg.get("content"))[:CONTENT_CHARS],
                    },
                )
            )
    return Trace(trace_id, "tau-bench", tuple(spans), attrs)


def load_tau_bench(
    paths: str | Path | Iterable[str | Path], *, domain: str | None = None
) -> TraceLoadResult:
    """Load tau-bench trajectory files (or folders of them): one trace and one DecisionRecord
    per run; `details[record_id]` holds the FailureReason of a failed run.

    decision_key comes from the task, never from what the run did: `<domain>.<final write tool
    of the ground truth>`, `<domain>.transfer_to_human_agents` when the ground truth only
    transfers, else `<domain>.read_only` (a task with no expected write). A failed run carries
    its reason class and the full `action_diff` (taken vs expected writes) in `inputs`.
    """
    result = new_result(paths, "tau-bench")
    for path in _files(paths, ("*.json",)):
        try:
            data = loads(read_text(path))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            result.reject(path, None, None, f"not readable JSON: {exc}")
            continue
        if isinstance(data, Mapping):
            data = data.get("results") or data.get("runs") or [data]
        if not isinstance(data, list):
            result.reject(path, None, None, "expected a JSON list of runs")
            continue
        try:
            dom = _domain(_tool_names(data), domain)
        except (TypeError, AttributeError):  # odd runs are quarantined one by one below
            dom = domain or "tau"
        for index, raw in enumerate(data):
            made, problem = guarded(_runner(path, index, dom), raw, NO_CLOCK)
            if made is None:
                result.reject(path, index + 1, problem[0], problem[1], raw)
                continue
            trace, record, reason = made
            result.traces.append(trace)
            result.records.append(record)
            if reason is not None:
                result.details[record.record_id] = reason
    return result


def _runner(path: Path, index: int, domain: str | None):
    return lambda raw, at: _run(path, index, raw, domain, at)


def _run(
    path: Path, index: int, raw: Any, domain: str | None, at: datetime
) -> tuple[tuple[Trace, DecisionRecord, FailureReason | None] | None, tuple[str | None, str]]:
    if not isinstance(raw, Mapping):
        return None, (None, "run is not an object")
    reward = raw.get("reward")
    if reward is None:
        reward = ((raw.get("info") or {}).get("reward_info") or {}).get("reward")
    if not isinstance(reward, (int, float)):
        return None, ("reward", f"reward missing or not a number: {reward!r}")
    traj = raw.get("traj", raw.get("trajectory", raw.get("messages")))
    if not isinstance(traj, list):
        return None, ("traj", "trajectory missing or not a list")
    info = raw.get("info") if isinstance(raw.get("info"), Mapping) else {}
    task = info.get("task") if isinstance(info.get("task"), Mapping) else None
    reward_info = info.get("reward_info") if isinstance(info.get("reward_info"), Mapping) else {}
    gt_raw = (task or {}).get("actions")
    if gt_raw is None:
        gt_raw = reward_info.get("actions")
    if gt_raw is None and reward < 1:
        return None, ("info.task.actions", "failed run without ground-truth actions")
    expected = _actions(gt_raw)
    taken, _ = _taken(traj)
    dom = domain or "tau"
    task_id = raw.get("task_id", index)
    trial = raw.get("trial", 0)
    # Content, not the path, names the run: two files of the same tasks (two models) differ in
    # their trajectories, and a moved file keeps its ids.
    digest = hashlib.sha256(canonical_json(traj).encode("utf-8")).hexdigest()[:8]
    trace_id = f"tau:{dom}:{task_id}:{trial}:{digest}"
    passed = float(reward) >= 1.0
    stopped = any(
        isinstance(m, Mapping) and m.get("role") == "user" and STOP_TOKEN in str(m.get("content"))
        for m in traj
    )
    outputs = (reward_info.get("info") or {}) if isinstance(reward_info, Mapping) else {}
    outputs_ok = not (isinstance(outputs, Mapping) and outputs.get("r_outputs") == 0.0)
    reason = (
        None if passed else derive_reason(taken, expected, stopped=stopped, outputs_ok=outputs_ok)
    )
    gt_writes = [a.name for a in expected if is_write(a.name)]
    taken_writes = [a.name for a in taken if is_write(a.name) and not a.failed]
    if gt_raw is None:
        final = "no_ground_truth"
    elif gt_writes:
        final = gt_writes[-1]
    elif any(a.name == TRANSFER_TOOL for a in expected):
        final = TRANSFER_TOOL
    else:
        final = "read_only"
    transferred = any(a.name == TRANSFER_TOOL for a in taken)
    status = (
        TerminalStatus.completed
        if passed
        else TerminalStatus.escalated
        if transferred
        else TerminalStatus.failed
    )
    inputs: dict[str, Any] = {
        "source": "tau-bench",
        "file": path.name,
        "task_id": task_id,
        "trial": trial,
        "reward": float(reward),
        "failed": not passed,
        "expected_writes": gt_writes,
        "taken_writes": taken_writes,
        "expected_decision": "transfer"
        if TRANSFER_TOOL in {a.name for a in expected}
        else "complete",
    }
    if reason is not None:
        diff = action_diff(taken, expected)
        inputs.update(
            reason_class=reason.reason_class,
            reason_detail=reason.detail,
            action_diff=diff,
            ground_truth_verdict=ground_truth_verdict(reward_info),
            failing_step=failing_step(traj, reason, diff),
        )
    record = DecisionRecord(
        record_id=new_id("dr", at=at, seed=trace_id),
        trace_id=trace_id,
        decision_key=f"{dom}.{final}",
        intent=dom,
        status=status,
        decision=taken_writes[-1] if taken_writes else ("transfer" if transferred else "respond"),
        inputs=inputs,
        tool_calls=tuple(a.name for a in taken),
        session_id=str((task or {}).get("user_id") or "") or None,
        decided_at=at,
    )
    attrs = {"file": path.name, "task_id": task_id, "trial": trial, "reward": float(reward)}
    return (_trace(trace_id, traj, at, attrs), record, reason), (None, "")
