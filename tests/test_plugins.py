"""The plug-in registry: names, `module:factory`, installed entry points, no silent overwrite."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from contextos_lab.evaluators.registry import EVALUATORS, get_evaluate
from contextos_lab.insights.attribution.linear import LastActorBeforeErrorRule
from contextos_lab.insights.attribution.protocol import Attributor
from contextos_lab.insights.attribution.registry import ATTRIBUTORS, get_attributor, register
from contextos_lab.plugins import DuplicateName, PluginError, Registry


class Rule:
    name = "rule"

    def attribute(self, run: object) -> None:
        return None


def make_rule() -> Rule:
    return Rule()


def _registry() -> Registry[Attributor]:
    return Registry(
        "attributor", "contextos_lab.test_group", lambda o: isinstance(o, Attributor),
        {"builtin": LastActorBeforeErrorRule},
    )  # fmt: skip


def test_a_taken_name_is_refused_unless_replaced() -> None:
    reg = _registry()
    reg.register("mine", Rule)
    with pytest.raises(DuplicateName, match=r"'mine' is already registered.*replace=True"):
        reg.register("mine", LastActorBeforeErrorRule)
    with pytest.raises(DuplicateName):
        reg.register("builtin", Rule)
    assert isinstance(reg.get("mine"), Rule)
    reg.register("mine", LastActorBeforeErrorRule, replace=True)
    assert isinstance(reg.get("mine"), LastActorBeforeErrorRule)


def test_a_temporary_registration_restores_what_was_there() -> None:
    reg = _registry()
    with reg.registered("builtin", Rule, replace=True):
        assert isinstance(reg.get("builtin"), Rule)
    assert isinstance(reg.get("builtin"), LastActorBeforeErrorRule)
    with reg.registered("new", Rule):
        assert "new" in reg.names()
    assert "new" not in reg.names()


def test_module_paths_name_a_factory_a_class_or_an_instance() -> None:
    reg = _registry()
    assert isinstance(reg.get(f"{__name__}:make_rule"), Rule)
    assert isinstance(reg.get(f"{__name__}:Rule"), Rule)  # a class is called, not returned
    with pytest.raises(PluginError, match="no attribute 'nope'"):
        reg.get(f"{__name__}:nope")
    with pytest.raises(PluginError, match="cannot import attributor module"):
        reg.get("no_such_module_xyz:make")
    with pytest.raises(PluginError, match="did not produce a attributor"):
        reg.get("collections:OrderedDict")
    with pytest.raises(PluginError, match=r"unknown attributor 'nope' \(known: builtin"):
        reg.get("nope")


@pytest.fixture
def installed_plugin(tmp_path: Path) -> Iterator[Path]:
    """A distribution installed on sys.path (a dist-info folder), as pip would leave it."""
    (tmp_path / "plug_mod_41.py").write_text(
        "class Judge:\n"
        "    name = 'plugged'\n"
        "    def attribute(self, run):\n"
        "        return None\n"
        "def evaluate(cases, results):\n"
        "    return None\n",
        encoding="utf-8",
    )
    info = tmp_path / "plug_41-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: plug-41\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[contextos_lab.attributors]\nplugged = plug_mod_41:Judge\nlast-actor-before-error = "
        "plug_mod_41:Judge\n\n[contextos_lab.evaluators]\nplugged-eval = plug_mod_41:evaluate\n",
        encoding="utf-8",
    )
    sys.path.insert(0, str(tmp_path))
    ATTRIBUTORS.refresh()
    EVALUATORS.refresh()
    try:
        yield tmp_path
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("plug_mod_41", None)
        ATTRIBUTORS.refresh()
        EVALUATORS.refresh()


def test_installed_plugins_are_found_by_name(installed_plugin: Path) -> None:
    assert "plugged" in ATTRIBUTORS.names()
    judge = get_attributor("plugged")
    assert type(judge).__name__ == "Judge" and isinstance(judge, Attributor)
    assert get_evaluate("plugged-eval").__module__ == "plug_mod_41"
    with pytest.raises(DuplicateName, match="installed plug-in"):
        register("plugged", Rule)
    # a plug-in claiming a built-in's name is refused, naming the distribution
    with pytest.raises(DuplicateName, match=r"plug-41 1\.0"):
        get_attributor("last-actor-before-error")


def test_the_built_in_names_resolve() -> None:
    assert {"default", "last-actor-before-error", "llm-judge"} <= set(ATTRIBUTORS.names())
    from contextos_lab.evaluators import assertions, scorecard

    assert get_evaluate("scorecard") is scorecard.evaluate
    assert get_evaluate("assertions") is assertions.evaluate
    assert get_evaluate("contextos_lab.evaluators.assertions:evaluate") is assertions.evaluate
    from contextos_lab.loaders.exports import load_exports
    from contextos_lab.loaders.registry import TRACE_LOADERS, get_loader

    assert get_loader("langsmith") is get_loader("otlp") is load_exports
    assert TRACE_LOADERS.group == "contextos_lab.loaders"
