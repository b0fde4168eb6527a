"""Packages whose public names are their modules' ``__all__``, imported on first use.

A package ``__init__`` lists its public modules once::

    from ahbm._internal.lazy import lazy_package

    __getattr__, __dir__, __all__ = lazy_package(__name__, ["forward", "ik", "tree"])

and its public names are exactly the names in those modules' ``__all__``
lists, in that order: ``__all__`` is written once, in each module, never
again in the package. ``ahbm.kinematics.forward_kinematics`` (or ``from
ahbm.kinematics import forward_kinematics``) imports ``ahbm.kinematics.forward``
on first use, so importing a package costs nothing until a name is used, and
a command that needs one function does not load every module beside it.

The ``__all__`` lists are read from the modules' source text without importing
them (a module's ``__all__`` must be a literal list or tuple of strings); a
module whose source is not available, or whose ``__all__`` is not a literal, is
imported to read it.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
import sys

__all__ = ["lazy_package", "module_exports"]

_ALL_RE = re.compile(r"^__all__\s*(?::[^=\n]*)?=\s*([\[(])", re.M)


def module_exports(module: str) -> list[str]:
    """The ``__all__`` of `module` (``"ahbm.kinematics.forward"``), read without importing it.

    Examples
    --------
    >>> "lazy_package" in module_exports("ahbm._internal.lazy")
    True
    """
    loaded = sys.modules.get(module)
    if loaded is not None and hasattr(loaded, "__all__"):
        return list(loaded.__all__)
    spec = importlib.util.find_spec(module)
    source = None
    if spec is not None and spec.origin and spec.origin.endswith(".py"):
        try:
            with open(spec.origin, encoding="utf-8") as fh:
                source = fh.read()
        except OSError:
            source = None
    if source is not None:
        match = _ALL_RE.search(source)
        if match is not None:
            closing = {"[": "]", "(": ")"}[match.group(1)]
            end = source.find(closing, match.end())
            if end != -1:
                try:
                    names = ast.literal_eval(source[match.start(1) : end + 1])
                except (ValueError, SyntaxError):
                    names = None
                if isinstance(names, (list, tuple)) and all(isinstance(n, str) for n in names):
                    return list(names)
    return list(importlib.import_module(module).__all__)


def lazy_package(package: str, modules: list[str]):
    """``__getattr__``, ``__dir__`` and ``__all__`` of a package that loads on first use.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    modules : list of str
        Its public modules (names relative to the package), whose ``__all__``
        names the package exports, in this order.

    Returns
    -------
    getattr : callable
        The package's module ``__getattr__`` (PEP 562): a public name imports
        its module and is cached in the package; a module name imports it.
    dir : callable
        The package's ``__dir__``: its public names and modules.
    all : list of str
        The package's ``__all__``.

    Raises
    ------
    RuntimeError
        If two modules export the same name (each name has one home).
    """
    owner: dict[str, str] = {}
    for mod in modules:
        for name in module_exports(f"{package}.{mod}"):
            if name in owner and owner[name] != mod:
                raise RuntimeError(
                    f"{package}: {name!r} is exported by both {owner[name]!r} and {mod!r}"
                )
            owner[name] = mod
    names = list(owner)
    pkg = sys.modules[package]

    def __getattr__(name: str):
        mod = owner.get(name)
        if mod is not None:
            value = getattr(importlib.import_module(f"{package}.{mod}"), name)
            setattr(pkg, name, value)
            return value
        if name.startswith("__"):
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        if name in modules or importlib.util.find_spec(f"{package}.{name}") is not None:
            return importlib.import_module(f"{package}.{name}")
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(vars(pkg)) | set(names) | set(modules))

    return __getattr__, __dir__, names
