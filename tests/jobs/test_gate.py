"""The gate job maps a failed notebook to an exit status by the class the kernel reports it
raised (`NotebookFailed.ename`), never by searching the notebook's output for names."""

from __future__ import annotations

from pathlib import Path

from contextos_lab.errors import EXIT_NOTEBOOK
from contextos_lab.jobs.gate import notebook_errors, notebook_exit_code
from contextos_lab.reports.render import NotebookFailed


def test_a_kit_error_raised_in_the_notebook_exits_with_its_class_s_status() -> None:
    for cls in notebook_errors():
        assert notebook_exit_code(cls.__name__) == cls.exit_code
    assert notebook_exit_code("StudyNotFound") == 8
    assert (
        notebook_exit_code("HeldoutOverlapError") == notebook_exit_code("HeldoutBudgetSpent") == 7
    )


def test_anything_else_is_a_failed_notebook_whatever_its_message_names() -> None:
    assert notebook_exit_code(None) == notebook_exit_code("KeyError") == EXIT_NOTEBOOK
    # the old rule searched the detail text: a KeyError whose message names a study class
    failed = NotebookFailed("03_heldout_gate", Path("p.ipynb"), "cell 3: KeyError: 'StudyNotFound'",
                            "KeyError")  # fmt: skip
    assert notebook_exit_code(failed.ename) == EXIT_NOTEBOOK == failed.code
