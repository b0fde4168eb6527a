"""Plots of simulation results: coordinates, constraint residuals, energy."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ahbm._internal.validation import as_float_array
from ahbm.errors import DataError
from ahbm.graphics._common import check_figure, pyplot
from ahbm.graphics.figures import plain_text

__all__ = ["plot_simulation"]

_MISSING = object()


def _get(result, name: str, default=_MISSING):
    if isinstance(result, Mapping):
        value = result.get(name, default)
    else:
        value = getattr(result, name, default)
    if value is _MISSING:
        raise DataError(
            f"The simulation result has no `{name}`; plot_simulation needs at least `t` "
            "(n,) and `q` (n, nq)"
        )
    return value


def _series_dict(value, name: str, n: int) -> dict[str, np.ndarray]:
    """Mapping label -> (n,) or (n, m) arrays from an array or a mapping."""
    items = value.items() if isinstance(value, Mapping) else [(name, value)]
    out = {}
    for label, arr in items:
        a = as_float_array(arr, f"{name}[{label!r}]" if label != name else name, allow_nan=True)
        if a.ndim == 0 or a.shape[0] != n or a.ndim > 2:
            raise DataError(
                f"Expected `{name}` entry {label!r} to have shape ({n},) or ({n}, m) (one row "
                f"per time sample), got {a.shape}"
            )
        out[str(label)] = a
    return out


def plot_simulation(
    result,
    *,
    coordinates: Sequence[int | str] | None = None,
    degrees: bool = False,
    fig=None,
):
    """Plot a simulation: coordinates, constraint residuals and energy over time.

    Parameters
    ----------
    result : object or mapping
        Anything with these attributes (or keys):

        - ``t`` : (n,) time, s;
        - ``q`` : (n, nq) generalized coordinates;
        - ``coordinate_names`` (optional): nq names for the legend;
        - ``constraint_residuals`` (optional): (n,) or (n, m) residuals of the
          constraint equations, or a mapping label -> such arrays (e.g.
          ``{"position": phi, "velocity": phi_dot}``); drawn as the Euclidean
          norm per sample on a log scale;
        - ``energy`` (optional): (n,) total energy, J, or a mapping label ->
          (n,) (e.g. ``{"kinetic": T, "potential": V, "total": T + V}``).

        This is the minimal protocol that ahbm's simulation results follow.
    coordinates : sequence of int or str, optional
        Coordinates to draw (indices or names); default all.
    degrees : bool, optional
        Multiply the coordinates by 180/π (for models with angles only).
    fig : matplotlib.figure.Figure, optional
        Figure to draw into.

    Returns
    -------
    matplotlib.figure.Figure
        Panels share the time axis: coordinates, then residuals and energy
        when present.

    Raises
    ------
    DataError
        Missing `t` or `q`, inconsistent lengths, unknown coordinate.

    Notes
    -----
    The energy panel's title reports the drift ``max |E(t) - E(0)|`` of the
    "total" entry (or of the only entry): for a conservative system it
    measures the integration error.

    Examples
    --------
    >>> import numpy as np
    >>> from ahbm.graphics import plot_simulation
    >>> t = np.linspace(0, 1, 11)
    >>> fig = plot_simulation({"t": t, "q": np.c_[np.sin(t), np.cos(t)], "energy": 1 + 0 * t})
    >>> len(fig.axes)
    2
    >>> import matplotlib.pyplot as plt; plt.close(fig)
    """
    t = as_float_array(_get(result, "t"), "result.t")
    q = as_float_array(_get(result, "q"), "result.q", allow_nan=True)
    if t.ndim != 1 or t.size < 1:
        raise DataError(f"Expected `result.t` to have shape (n,), got {t.shape}")
    if q.ndim == 1:
        q = q[:, None]
    if q.ndim != 2 or q.shape[0] != t.size:
        raise DataError(f"Expected `result.q` to have shape ({t.size}, nq), got {q.shape}")
    names = _get(result, "coordinate_names", None)
    names = [f"q{j}" for j in range(q.shape[1])] if names is None else [str(s) for s in names]
    if len(names) != q.shape[1]:
        raise DataError(
            f"`result.coordinate_names` has {len(names)} names for {q.shape[1]} coordinates"
        )
    if coordinates is not None and (
        isinstance(coordinates, (str, bytes, dict)) or not hasattr(coordinates, "__iter__")
    ):
        raise DataError(
            f"Expected `coordinates` to be a list of names or indices, got {coordinates!r}"
        )
    check_figure(fig)
    if coordinates is None:
        cols = list(range(q.shape[1]))
    else:
        cols = []
        for c in coordinates:
            if isinstance(c, str):
                if c not in names:
                    raise DataError(
                        f"Coordinate {c!r} not in the result; available: {', '.join(names)}"
                    )
                cols.append(names.index(c))
            elif isinstance(c, (int, np.integer)) and 0 <= c < q.shape[1]:
                cols.append(int(c))
            else:
                raise DataError(f"Coordinate index {c!r} is outside [0, {q.shape[1]})")
    residuals = _get(result, "constraint_residuals", None)
    energy = _get(result, "energy", None)
    res = _series_dict(residuals, "constraint_residuals", t.size) if residuals is not None else {}
    eng = _series_dict(energy, "energy", t.size) if energy is not None else {}

    n_panels = 1 + bool(res) + bool(eng)
    plt = pyplot()
    if fig is None:
        fig = plt.figure(figsize=(7.0, 1.0 + 2.2 * n_panels))
    axes = list(fig.subplots(n_panels, 1, sharex=True, squeeze=False)[:, 0])
    ax = axes[0]
    scale = 180.0 / np.pi if degrees else 1.0
    for j in cols:
        ax.plot(t, q[:, j] * scale, lw=1.2, label=names[j])
    ax.set_ylabel("coordinates" + (" (deg)" if degrees else ""))
    if len(cols) <= 12:
        ax.legend(fontsize=7, ncols=min(len(cols), 4), frameon=False, loc="best")
    k = 1
    if res:
        ax = axes[k]
        k += 1
        for label, a in res.items():
            norm = np.abs(a) if a.ndim == 1 else np.linalg.norm(a, axis=1)
            ax.plot(t, norm, lw=1.2, label=label)
        ax.set_yscale("log")
        ax.set_ylabel("‖constraint residual‖")
        if len(res) > 1:
            ax.legend(fontsize=7, frameon=False)
    if eng:
        ax = axes[k]
        for label, a in eng.items():
            y = a if a.ndim == 1 else a.sum(axis=1)
            ax.plot(t, y, lw=1.2, label=label)
        ref_label = "total" if "total" in eng else (next(iter(eng)) if len(eng) == 1 else None)
        if ref_label is not None:
            e = eng[ref_label]
            e = e if e.ndim == 1 else e.sum(axis=1)
            drift = float(np.nanmax(np.abs(e - e[0])))
            ax.set_title(f"energy drift max|E - E0| = {drift:.3g} J", fontsize=8)
        ax.set_ylabel("energy (J)")
        if len(eng) > 1:
            ax.legend(fontsize=7, frameon=False)
    for ax in axes:
        ax.grid(True, alpha=0.3)
    axes[-1].set_xlabel("time (s)")
    plain_text(*axes)  # coordinate and series names are data: plain text, before the layout
    fig.tight_layout()
    return fig
