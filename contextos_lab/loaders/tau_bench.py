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
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from contextos_lab.loaders.guard import guarded, loads_list, read_text
from contextos_lab.loaders.otlp import (
    OPERATION,
    TOOL_NAME,
    Span,
    Trace,
    TraceLoadResult,
    _files,
    new_result,
)
from contextos_lab.loaders.tau_bench_diagnosis import (
    STOP_TOKEN,
    TRANSFER_TOOL,
    Action,
    FailureReason,
    _actions,
    _taken,
    action_diff,
    derive_reason,
    failing_step,
    ground_truth_verdict,
    is_write,
)
from contextos_lab.loaders.trace_text import CONTENT, CONTENT_CHARS
from contextos_lab.schemas.base import canonical_json
from contextos_lab.schemas.clock import NO_CLOCK
from contextos_lab.schemas.decision import DecisionRecord, TerminalStatus
from contextos_lab.schemas.ids import new_id

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
        if role in ("user", "assistant", "tool") and msg.get("content"):
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
            data = loads_list(read_text(path))
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


def _reason(
    traj: list[Any], taken: list[Action], expected: list[Action], reward_info: Mapping[str, Any]
) -> FailureReason:
    """Why a failed run with ground truth failed: the action diff, read with whether the user
    stopped the conversation and whether the outputs check failed."""
    stopped = any(
        isinstance(m, Mapping) and m.get("role") == "user" and STOP_TOKEN in str(m.get("content"))
        for m in traj
    )
    outputs = (reward_info.get("info") or {}) if isinstance(reward_info, Mapping) else {}
    outputs_ok = not (isinstance(outputs, Mapping) and outputs.get("r_outputs") == 0.0)
    return derive_reason(taken, expected, stopped=stopped, outputs_ok=outputs_ok)


def _final_action(has_truth: bool, gt_writes: list[str], expected: list[Action]) -> str:
    """What the task was to end with (it names the decision key)."""
    if not has_truth:
        return "no_ground_truth"
    if gt_writes:
        return gt_writes[-1]
    if any(a.name == TRANSFER_TOOL for a in expected):
        return TRANSFER_TOOL
    return "read_only"


def _diagnosis(
    traj: list[Any],
    taken: list[Action],
    expected: list[Action],
    reward_info: Mapping[str, Any],
    reason: FailureReason,
) -> dict[str, Any]:
    diff = action_diff(taken, expected)
    return {
        "reason_class": reason.reason_class,
        "reason_detail": reason.detail,
        "reason_action": reason.action,
        "reason_called": reason.called,
        "action_diff": diff,
        "ground_truth_verdict": ground_truth_verdict(reward_info),
        "failing_step": failing_step(traj, reason, diff),
    }


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
    info = got if isinstance(got := raw.get("info"), Mapping) else {}
    task = got if isinstance(got := info.get("task"), Mapping) else None
    reward_info = got if isinstance(got := info.get("reward_info"), Mapping) else {}
    gt_raw = (task or {}).get("actions")
    if gt_raw is None:
        gt_raw = reward_info.get("actions")
    # A failed run without ground truth is analysed from its trajectory alone (no action diff).
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
    reason = None if passed or gt_raw is None else _reason(traj, taken, expected, reward_info)
    gt_writes = [a.name for a in expected if is_write(a.name)]
    taken_writes = [a.name for a in taken if is_write(a.name) and not a.failed]
    final = _final_action(gt_raw is not None, gt_writes, expected)
    transferred = any(a.name == TRANSFER_TOOL for a in taken)
    ended = TerminalStatus.escalated if transferred else TerminalStatus.failed
    status = TerminalStatus.completed if passed else ended
    inputs: dict[str, Any] = {
        "source": "tau-bench", "file": path.name, "task_id": task_id, "trial": trial,
        "reward": float(reward), "failed": not passed, "expected_writes": gt_writes,
        "taken_writes": taken_writes,
        "expected_decision": "transfer" if any(a.name == TRANSFER_TOOL for a in expected)
        else "complete",
    }  # fmt: skip
    if reason is not None:
        inputs.update(_diagnosis(traj, taken, expected, reward_info, reason))
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
