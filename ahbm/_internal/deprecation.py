"""Deprecated names and arguments: one warning per name and process (internal).

ahbm is version 0.x, so its API may change, but a name that users already
rely on is kept for one release as an alias that still works and warns once
(``AhbmDeprecationWarning``, a ``DeprecationWarning`` shown by default). Every
alias is listed in CHANGELOG.md.
"""

from __future__ import annotations

import functools
import warnings

from ahbm.errors import AhbmWarning

__all__ = [
    "AhbmDeprecationWarning",
    "warn_deprecated",
    "deprecated_alias",
    "renamed_kwargs",
    "positional_to_keyword",
]


class AhbmDeprecationWarning(AhbmWarning, DeprecationWarning):
    """A deprecated ahbm name or argument was used; the message says what replaces it."""


_warned: set[str] = set()


def warn_deprecated(key: str, message: str, *, stacklevel: int = 3) -> None:
    """Warn once per process for ``key`` (a name such as ``"ahbm.dynamics.Event"``)."""
    if key in _warned:
        return
    _warned.add(key)
    warnings.warn(message, AhbmDeprecationWarning, stacklevel=stacklevel)


def deprecated_alias(func, old_name: str, *, removed_in: str = "0.3"):
    """Return a wrapper of ``func`` under ``old_name`` that warns once, then calls it."""
    new = f"{func.__module__}.{func.__qualname__}"

    @functools.wraps(func)
    def alias(*args, **kwargs):
        warn_deprecated(
            old_name,
            f"`{old_name}` is deprecated and will be removed in ahbm {removed_in}; "
            f"use `{new}` instead",
        )
        return func(*args, **kwargs)

    alias.__name__ = old_name.rsplit(".", 1)[-1]
    alias.__doc__ = f"Deprecated alias of :func:`{new}` (removed in ahbm {removed_in})."
    return alias


def renamed_kwargs(where: str, kwargs: dict, renames: dict[str, str]) -> dict:
    """Map deprecated keyword names to new ones in ``kwargs`` (warning once each).

    ``renames`` maps old -> new. Giving both the old and the new name is an
    error (``TypeError``, as Python raises for a repeated argument).
    """
    for old, new in renames.items():
        if old in kwargs:
            if new in kwargs:
                raise TypeError(f"{where}() got both `{old}` (deprecated) and `{new}`; use `{new}`")
            warn_deprecated(
                f"{where}:{old}",
                f"{where}(): the argument `{old}` is deprecated; use `{new}`",
                stacklevel=4,
            )
            kwargs[new] = kwargs.pop(old)
    return kwargs


def positional_to_keyword(where: str, n_positional: int, names: tuple[str, ...], new: str):
    """Decorator: accept the 0.1 positional arguments `names` as keywords for one release.

    The decorated function keeps its new signature (``n_positional`` data
    arguments, then keyword-only options); a call that passes more positional
    arguments maps them, in order, onto `names`, warns once (`new` shows the
    new spelling) and calls the function with keywords. A name given both by
    position and by keyword is a ``TypeError``, as Python raises.
    """

    def decorate(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            if len(args) > n_positional:
                extra = args[n_positional:]
                if len(extra) > len(names):
                    raise TypeError(
                        f"{where}() takes {n_positional} positional argument(s) but "
                        f"{len(args)} were given; use {new}"
                    )
                for name, value in zip(names, extra, strict=False):
                    if name in kwargs:
                        raise TypeError(f"{where}() got `{name}` by position and by keyword")
                    kwargs[name] = value
                warn_deprecated(
                    f"{where}:positional",
                    f"{where}(): passing {', '.join(f'`{n}`' for n in names[: len(extra)])} "
                    f"by position is deprecated and will be an error in ahbm 0.3; use {new}",
                )
                args = args[:n_positional]
            return func(*args, **kwargs)

        return wrapper

    return decorate
