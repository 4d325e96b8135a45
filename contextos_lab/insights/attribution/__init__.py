"""Failure attribution from trace content: who caused a failed run, at which step, doing what.

Reads only the trace (turns, speakers, tool calls and results, errors, the orchestrator's
ledger, termination); annotations are the answer key that scores it, never an input.
"""

from contextos_lab.insights.attribution.protocol import Attribution, Attributor
from contextos_lab.insights.attribution.registry import get_attributor, register
from contextos_lab.insights.attribution.turns import RunTrace, Turn, agent_key, run_trace

__all__ = [
    "Attribution",
    "Attributor",
    "RunTrace",
    "Turn",
    "agent_key",
    "get_attributor",
    "register",
    "run_trace",
]
