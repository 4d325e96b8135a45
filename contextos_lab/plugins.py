"""Named implementations of a seam: chosen by name or `module:factory`, never overwritten
silently, and discovered from installed plug-ins (docs/harness-contract.md, "Plug-ins").

One `Registry` per seam (attributors, evaluators, trace loaders). A reference is resolved in
this order:

1. a name registered in this process (the built-ins, or `register(name, factory)`);
2. a name an installed distribution declares under the seam's entry-point group, e.g. in its
   `pyproject.toml`: `[project.entry-points."contextos_lab.attributors"] mine = "pkg.mod:make"`;
3. `package.module:attr`, imported.

A registered factory is always called with no arguments. An entry point or an imported `attr`
is used as it is when it already is the thing (`accepts`), else called as a factory.

Registering a name that is taken (built-in, registered or installed) raises `DuplicateName`
unless `replace=True`: two plug-ins claiming one name is a mistake to see, not to guess at. A
name both built in and installed is refused at look-up for the same reason. Entry points are
read once per registry (`refresh()` re-reads them) with `importlib.metadata`, the standard
library's reader: no plug-in framework is needed for one group name per seam.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Generic, TypeVar

from contextos_lab.errors import UserError

T = TypeVar("T")


class PluginError(UserError, KeyError):
    """A reference that names nothing usable: unknown name, bad path, wrong kind of object.
    A KeyError too, as the look-up by name it replaces raised."""

    def __str__(self) -> str:  # KeyError's quoting of its message is not wanted
        return str(self.args[0]) if self.args else type(self).__name__


class DuplicateName(PluginError):
    """A name is already taken; pass `replace=True` to mean it."""


class Registry(Generic[T]):
    """Factories of one seam by name; see the module docstring for the resolution order."""

    def __init__(
        self,
        kind: str,
        group: str,
        accepts: Callable[[Any], bool],
        builtins: dict[str, Callable[[], T]] | None = None,
    ) -> None:
        self.kind = kind
        self.group = group
        self._accepts = accepts
        self._factories: dict[str, Callable[[], T]] = dict(builtins or {})
        self._builtins = frozenset(self._factories)
        self._entry_points: dict[str, EntryPoint] | None = None

    # --- registration -----------------------------------------------------------------------

    def register(self, name: str, factory: Callable[[], T], *, replace: bool = False) -> None:
        """Add `factory` under `name`; a taken name raises DuplicateName unless `replace`."""
        if not name or ":" in name:
            raise PluginError(f"{self.kind} name {name!r} must be non-empty without ':'")
        taken = name in self._factories or name in self.installed()
        if taken and not replace:
            where = "installed plug-in" if name in self.installed() else "registered"
            raise DuplicateName(
                f"{self.kind} {name!r} is already {where}; pass replace=True to replace it"
            )
        self._factories[name] = factory

    def unregister(self, name: str) -> None:
        """Remove a name registered in this process (built-ins included)."""
        if name not in self._factories:
            raise PluginError(f"no {self.kind} {name!r} is registered")
        del self._factories[name]

    @contextmanager
    def registered(
        self, name: str, factory: Callable[[], T], *, replace: bool = False
    ) -> Iterator[None]:
        """`name` registered for the block only; whatever it named before comes back after."""
        before = self._factories.get(name)
        self.register(name, factory, replace=replace)
        try:
            yield
        finally:
            if before is None:
                self._factories.pop(name, None)
            else:
                self._factories[name] = before

    # --- discovery --------------------------------------------------------------------------

    def installed(self) -> dict[str, EntryPoint]:
        """Entry points of this seam's group in the installed distributions (read once)."""
        if self._entry_points is None:
            self._entry_points = {ep.name: ep for ep in entry_points(group=self.group)}
        return self._entry_points

    def refresh(self) -> None:
        """Read the installed entry points again (after installing a plug-in in-process)."""
        self._entry_points = None

    def names(self) -> tuple[str, ...]:
        return tuple(sorted({*self._factories, *self.installed()}))

    # --- look-up ----------------------------------------------------------------------------

    def get(self, ref: str) -> T:
        """The implementation `ref` names: a registered name, an installed plug-in's name, or
        `package.module:attr`."""
        installed = self.installed()
        if ref in self._factories:
            if ref in self._builtins and ref in installed:
                raise DuplicateName(
                    f"{self.kind} {ref!r} is built in and also installed by "
                    f"{_distribution(installed[ref])} (entry point {installed[ref].value}); "
                    "rename the plug-in"
                )
            return self._checked(ref, self._factories[ref]())
        if ref in installed:
            try:
                obj = installed[ref].load()
            except Exception as exc:  # an installed plug-in that does not import
                raise PluginError(
                    f"{self.kind} plug-in {ref!r} ({installed[ref].value}) does not load: "
                    f"{type(exc).__name__}: {exc}"
                ) from exc
            return self._made(ref, obj)
        module_name, sep, attr = ref.partition(":")
        if not sep:
            raise PluginError(
                f"unknown {self.kind} {ref!r} (known: {', '.join(self.names())}; "
                "or give 'package.module:factory')"
            )
        if not module_name or not attr:
            raise PluginError(f"{self.kind} path {ref!r} must look like 'package.module:factory'")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise PluginError(f"cannot import {self.kind} module {module_name!r}: {exc}") from exc
        if not hasattr(module, attr):
            raise PluginError(f"module {module_name!r} has no attribute {attr!r}")
        return self._made(ref, getattr(module, attr))

    def _made(self, ref: str, obj: Any) -> T:
        if self._accepts(obj) and not isinstance(obj, type):
            return obj
        if not callable(obj):
            raise PluginError(f"{ref} is neither a {self.kind} nor a factory of one")
        return self._checked(ref, obj())

    def _checked(self, ref: str, made: Any) -> T:
        if not self._accepts(made):
            raise PluginError(f"{ref} did not produce a {self.kind} (got {type(made).__name__})")
        return made


def _distribution(ep: EntryPoint) -> str:
    dist = ep.dist
    return f"{dist.name} {dist.version}" if dist is not None else "an installed distribution"


__all__ = ["DuplicateName", "PluginError", "Registry"]
