"""One error root: every exception class the kit defines subclasses `ContextosError` and carries
an exit status from the table in `contextos_lab.errors`; the CLI maps them in one place and a
bug keeps its traceback."""

from __future__ import annotations

import configparser
import importlib
import inspect
import pkgutil
import sys
from collections import Counter
from pathlib import Path

import pytest

import contextos_lab
from contextos_lab.cli.app import main
from contextos_lab.errors import EXIT_STATUSES, ContextosError

REPO = Path(__file__).resolve().parents[1]


def _kit_exceptions() -> list[type[BaseException]]:
    """Every exception class defined in the package (each module imported once)."""
    for info in pkgutil.walk_packages(contextos_lab.__path__, "contextos_lab."):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)
    found = {
        obj
        for name, module in list(sys.modules.items())
        if name == "contextos_lab" or name.startswith("contextos_lab.")
        for obj in vars(module).values()
        if inspect.isclass(obj)
        and issubclass(obj, BaseException)
        and obj.__module__.startswith("contextos_lab")
    }
    return sorted(found, key=lambda c: f"{c.__module__}.{c.__qualname__}")


KIT_EXCEPTIONS = _kit_exceptions()


def test_every_kit_exception_sits_under_the_root_with_an_exit_status() -> None:
    assert len(KIT_EXCEPTIONS) > 40  # the walk found the package's classes, not nothing
    outside = [f"{c.__module__}.{c.__qualname__}" for c in KIT_EXCEPTIONS
               if not issubclass(c, ContextosError)]  # fmt: skip
    assert not outside, f"not under ContextosError: {outside}"
    for cls in KIT_EXCEPTIONS:
        assert isinstance(cls.exit_code, int) and cls.exit_code in EXIT_STATUSES, cls
        assert cls.exit_code >= 2, f"{cls.__qualname__}: 0 and 1 are not errors"


def test_no_two_kit_exceptions_share_a_name() -> None:
    """A notebook's failure crosses the kernel boundary as its class's name only (`ename`):
    two classes of one name (there were two `HarnessFailure`s) would be told apart by luck."""
    names = Counter(c.__qualname__ for c in KIT_EXCEPTIONS)
    assert not [n for n, k in names.items() if k > 1]


def test_the_library_never_imports_the_cli() -> None:
    """`.importlinter` forbids every top-level package but `cli` to import `cli` (run by
    tests/test_import_contracts.py); the contract names them all."""
    parser = configparser.ConfigParser()
    parser.read(REPO / ".importlinter", encoding="utf-8")
    contract = parser["importlinter:contract:library-not-cli"]
    assert contract["type"] == "forbidden"
    assert contract["forbidden_modules"].split() == ["contextos_lab.cli"]
    package = REPO / "contextos_lab"
    children = {p.stem for p in package.glob("*.py") if not p.stem.startswith("__")}
    children |= {p.parent.name for p in package.glob("*/__init__.py")}
    named = {m.removeprefix("contextos_lab.") for m in contract["source_modules"].split()}
    assert named == children - {"cli"}


def test_a_kit_error_exits_with_its_class_s_status_as_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import contextos_lab.cli.gate as gate
    from contextos_lab.gate.heldout.ledger import HeldoutBudgetSpent

    def spent(*_a: object, **_k: object) -> str:
        raise HeldoutBudgetSpent("the held-out error budget is spent")

    monkeypatch.setattr(gate, "check_inputs", spent)
    code = main(["gate", "--spec", "s.yaml", "--out", str(tmp_path / "o"), "--study", "x"])
    err = capsys.readouterr().err
    assert code == HeldoutBudgetSpent.exit_code == 7
    assert err.strip().splitlines() == ["error: the held-out error budget is spent"]


def test_an_unexpected_runtime_error_keeps_its_traceback(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`cluster` used to turn any RuntimeError into exit 2: a bug is not the user's to fix."""
    import contextos_lab.insights.pipeline as pipeline

    def broken(*_a: object, **_k: object) -> None:
        raise RuntimeError("a bug in the analysis")

    monkeypatch.setattr(pipeline, "analyse", broken)
    with pytest.raises(RuntimeError, match="a bug in the analysis"):
        main(["cluster", "synthetic:60:3", "--out", str(tmp_path / "c")])


def test_an_instance_may_narrow_its_class_s_status() -> None:
    from contextos_lab.autotune.spec.load import OverlapProblem, SpecError
    from contextos_lab.harness.subprocess_harness import HarnessFailure

    assert SpecError([OverlapProblem("shared cases")]).code == 7
    assert SpecError(["bad field"]).code == SpecError.exit_code == 2
    # a protocol fault is typed by whoever found it, never read back from the message
    assert HarnessFailure("harness protocol error: not JSON").code == 4
    assert HarnessFailure("bad line", protocol=True).code == 9


def test_no_error_assigns_its_status_past_the_root() -> None:
    """`code` is read-only on ContextosError: a subclass passes `code=` up (an assignment
    would raise AttributeError at the moment the error is raised)."""
    from contextos_lab.cli.proposals import _Exit

    assert _Exit(3).code == 3
    offenders = [
        f"{path.relative_to(REPO)}:{n}"
        for path in sorted((REPO / "contextos_lab").rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if line.strip().startswith("self.code =")
    ]
    assert not offenders
