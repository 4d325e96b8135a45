"""Who&When-shaped traces for the attribution tests, written by hand (no external data).

`orchestrated_run` is a Magentic-One-style run: an orchestrator writes its progress ledger, a
web-surfing agent (spelled `WebSurfer` or `Websurfer`) clicks a result that does not load, the
orchestrator says it loops and the run ends on the round limit. `group_chat_run` is an
AutoGen-style expert group chat whose code fails in a terminal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def _ledger(loop: bool, progress: bool, speaker: str) -> str:
    return json.dumps(
        {
            "is_request_satisfied": {"reason": "not yet", "answer": False},
            "is_in_loop": {"reason": "same click again", "answer": loop},
            "is_progress_being_made": {"reason": "page does not load", "answer": progress},
            "next_speaker": {"reason": "browse", "answer": speaker},
            "instruction_or_question": {"reason": "", "answer": "Open the first result."},
        }
    )


def orchestrated_run(i: int, surfer: str = "WebSurfer") -> dict[str, Any]:
    history = [
        {"role": "human", "content": f"Find the opening hours of museum number {i}."},
        {"role": "Orchestrator (thought)", "content": "Initial plan: search, open a result."},
        {"role": "Orchestrator (-> WebSurfer)", "content": "Search for the museum."},
        {"role": surfer, "content": f"I typed 'museum {i} opening hours' into the search bar."},
        {"role": "Orchestrator (thought)", "content": _ledger(False, True, surfer)},
        {"role": surfer, "content": "I clicked the first result. The page did not load."},
        {"role": "Orchestrator (thought)", "content": _ledger(True, False, surfer)},
        {"role": surfer, "content": "I clicked the first result. The page did not load."},
        {"role": "Orchestrator (thought)", "content": _ledger(True, False, surfer)},
        {
            "role": "Orchestrator (termination condition)",
            "content": "No agent selected. Max rounds reached; the round limit was hit.",
        },
    ]
    return {"question": f"museum {i}", "ground_truth": "9-5", "history": history}


def group_chat_run(i: int) -> dict[str, Any]:
    history = [
        {
            "name": "Data_Expert",
            "role": "assistant",
            "content": f"You are given a task: count the rows of table {i}. Plan: load and count.",
        },
        {
            "name": "Data_Expert",
            "role": "user",
            "content": f"```python\nimport pandas as pd\nprint(len(pd.read_csv('t{i}.csv')))\n```",
        },
        {
            "name": "Computer_terminal",
            "role": "user",
            "content": "exitcode: 1 (execution failed)\nCode output: Traceback (most recent call "
            f"last):\nFileNotFoundError: [Errno 2] No such file: 't{i}.csv'",
        },
        {
            "name": "Verification_Expert",
            "role": "user",
            "content": "The file is missing, so I will assume a sample dataset of 42 rows.",
        },
        {"name": "Verification_Expert", "role": "user", "content": "TERMINATE"},
    ]
    return {"question": f"table {i}", "ground_truth": "7", "history": history}


def annotate(run: dict[str, Any], agent: str, step: int, reason: str) -> dict[str, Any]:
    return {**run, "mistake_agent": agent, "mistake_step": str(step), "mistake_reason": reason}


def write_runs(folder: Path, runs: list[dict[str, Any]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i, run in enumerate(runs):
        (folder / f"{i}.json").write_text(json.dumps(run), encoding="utf-8")
    return folder
