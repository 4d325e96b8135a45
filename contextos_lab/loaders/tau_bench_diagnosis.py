"""What went wrong in a tau-bench run, from its own ground truth: the actions taken against the
expected ones (write tools decide the outcome), the typed failure reason and the failing step."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from contextos_lab.schemas.base import canonical_json

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
    #: The expected write the class is about (for `extra_write`, the write made).
    action: str | None = None
    #: `wrong_tool` only: the write made in place of `action`.
    called: str | None = None


def derive_reason(
    taken: Sequence[Action], expected: Sequence[Action], *, stopped: bool, outputs_ok: bool = True
) -> FailureReason:
    """Why a failed run failed, read off the diff of effective writes (`action_diff`), so the
    class never contradicts the stored diff. A write the run made decides first, even when the
    run then handed off or was cut off; first match wins:

    1. wrong_arguments: an expected write is missing and an unmatched call of the same tool was
       made (the diff's `wrong_arguments`); the first such write in ground-truth order.
    2. wrong_tool: an expected write is missing with no call of its tool, and an unmatched write
       of another tool (one that is not itself a wrongly argued expected write) was made: a
       wrong tool called in place of an expected one.
    3. extra_write: no expected write is missing, yet an unmatched write was made.
    4. transferred_to_human: the run called `transfer_to_human_agents`, the ground truth does
       not, and made no wrong or extra write.
    5. step_limit: the conversation never reached the user's stop token.
    6. premature_end (no write attempted at all) or missing_action: an expected write never made.
    7. missing_action (detail `missing_output`): writes all match but a required output was
       never said to the user (tau-bench scores outputs through the agent's replies).
    8. state_mismatch: the writes match by name and arguments, yet the final state did not.
    Errored calls changed nothing and count as not made.
    """
    diff = action_diff(taken, expected)
    missing, extra = unpaired(diff)
    argued = [name for name in diff["missing"] if name in diff["wrong_arguments"]]
    if argued:
        keys = diff["wrong_arguments"][argued[0]]
        detail = f"{argued[0]}: {', '.join(keys) or 'argument order'} differ"
        return FailureReason("wrong_arguments", detail, argued[0])
    if missing and extra:
        return FailureReason(
            "wrong_tool", f"called {extra[0]} instead of {missing[0]}", missing[0], extra[0]
        )
    if extra:
        return FailureReason("extra_write", f"{extra[0]} not in ground truth", extra[0])
    if any(a.name == TRANSFER_TOOL for a in taken) and not any(
        a.name == TRANSFER_TOOL for a in expected
    ):
        return FailureReason("transferred_to_human", "handed off instead of acting", TRANSFER_TOOL)
    if not stopped:
        return FailureReason("step_limit", "conversation ended without the stop token")
    if missing:
        if not any(is_write(a.name) for a in taken):
            return FailureReason(
                "premature_end", f"ended before any write; {missing[0]} expected", missing[0]
            )
        return FailureReason("missing_action", f"{missing[0]} never called", missing[0])
    if not outputs_ok:
        return FailureReason("missing_action", "missing_output")
    return FailureReason("state_mismatch", "state_mismatch")


def unpaired(diff: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """(missing, extra) write names of a diff once each wrongly argued call is paired with the
    expected write of its tool: what was never attempted and what was made instead or on top."""
    missing = Counter(diff.get("missing") or ())
    extra = Counter(diff.get("extra") or ())
    paired = missing & extra
    missing_left, extra_left = missing - paired, extra - paired
    return (
        [n for n in dict.fromkeys(diff.get("missing") or ()) for _ in range(missing_left[n])],
        [n for n in dict.fromkeys(diff.get("extra") or ()) for _ in range(extra_left[n])],
    )


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
    info = got if isinstance(got := reward_info.get("info"), Mapping) else {}
    if info.get("r_actions") == 0:
        return "actions"
    if info.get("r_outputs") == 0:
        return "outputs"
    return None
