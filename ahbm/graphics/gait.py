"""Gait-cycle figures in the clinical layout (rows = joints, columns = planes)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ahbm._internal.validation import as_float_array
from ahbm.errors import DataError
from ahbm.graphics._common import SIDE_COLORS, check_figure, check_mapping, check_names, pyplot
from ahbm.graphics.figures import plain_text
from ahbm.types import ResultRepr

__all__ = [
    "plot_gait_cycles",
    "gait_cycle_summary",
    "GaitCycleSummary",
    "gait_cycles_from_results",
    "not_defined_from_results",
]

#: Fallback for raw arrays only (no structural information, ``not_defined=None``):
#: largest |value| of a component drawn as "zero by construction" instead of a curve
#: (round-off of a component the model fixes, such as the ankle's frontal angle).
_ZERO_BY_CONSTRUCTION = 1e-9

_NOT_DEFINED_TEXT = "not defined by this model"

_DEFAULT_VARIABLES = ("PelvisAngles", "HipAngles", "KneeAngles", "AnkleAngles")
_SIDE_ALIASES = {"left": "Left", "l": "Left", "right": "Right", "r": "Right"}


def _side_name(key) -> str:
    name = _SIDE_ALIASES.get(str(key).strip().lower())
    if name is None:
        raise DataError(
            f"Unknown side {key!r} in the gait result; use 'Left' and 'Right' as the keys"
        )
    return name


def _as_cycles(value, where: str) -> np.ndarray:
    arr = as_float_array(value, where, allow_nan=True)
    if arr.ndim == 1:
        arr = arr[None, :, None]
    elif arr.ndim == 2:
        arr = arr[None]
    if arr.ndim != 3 or arr.shape[1] < 2:
        raise DataError(
            f"Expected `{where}` to have shape (n_cycles, n_points, n_planes), e.g. "
            f"(n_cycles, 101, 3), got {np.shape(value)}"
        )
    if np.isinf(arr).any():
        raise DataError(f"`{where}` contains infinite values; use NaN for missing samples")
    return arr


@dataclass(frozen=True, repr=False)
class GaitCycleSummary(ResultRepr):
    """Mean and SD over gait cycles (output of :func:`gait_cycle_summary`).

    Attributes
    ----------
    percent : ndarray, shape (n_points,)
        Percent of the gait cycle, 0 to 100.
    mean, sd : ndarray, shape (n_points, n_planes)
        Mean and sample standard deviation (``ddof=1``; 0 for a single
        cycle) over the cycles present at each point (NaN if none).
    """

    percent: np.ndarray
    mean: np.ndarray
    sd: np.ndarray


def gait_cycle_summary(cycles) -> GaitCycleSummary:
    """Mean and standard deviation over cycles, ignoring missing cycles.

    Parameters
    ----------
    cycles : array_like, shape (n_cycles, n_points, n_planes)
        Time-normalized cycles (0-100 %), NaN where missing.

    Returns
    -------
    GaitCycleSummary
        ``percent`` (n_points,), 0 to 100; ``mean`` and ``sd`` (n_points,
        n_planes).

    Examples
    --------
    >>> import numpy as np
    >>> s = gait_cycle_summary(np.ones((3, 101, 3)))
    >>> float(s.mean[0, 0]), float(s.sd[0, 0]), s.percent.shape
    (1.0, 0.0, (101,))
    """
    arr = _as_cycles(cycles, "cycles")
    count = np.sum(np.isfinite(arr), axis=0)
    total = np.nansum(arr, axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, total / np.maximum(count, 1), np.nan)
        dev2 = np.nansum((arr - mean) ** 2, axis=0)
        sd = np.where(count > 1, np.sqrt(dev2 / np.maximum(count - 1, 1)), 0.0)
    sd = np.where(count > 0, sd, np.nan)
    percent = np.linspace(0.0, 100.0, arr.shape[1])
    return GaitCycleSummary(percent, mean, sd)


def _normative_band(normative, variable: str):
    if normative is None or variable not in normative:
        return None
    entry = normative[variable]
    if isinstance(entry, Mapping):
        try:
            mean, sd = entry["mean"], entry["sd"]
        except KeyError as err:
            raise DataError(
                f"`normative[{variable!r}]` needs 'mean' and 'sd' entries, missing {err}"
            ) from None
    elif isinstance(entry, (tuple, list)) and len(entry) == 2:
        mean, sd = entry
    else:
        raise DataError(
            f"`normative[{variable!r}]` must be (mean, sd) or {{'mean': ..., 'sd': ...}}"
        )
    mean = as_float_array(mean, f"normative[{variable!r}] mean")
    sd = as_float_array(sd, f"normative[{variable!r}] sd")
    if mean.ndim == 1:
        mean = mean[:, None]
    if sd.ndim == 1:
        sd = sd[:, None]
    if mean.shape != sd.shape or mean.ndim != 2 or mean.shape[0] < 2:
        raise DataError(
            f"`normative[{variable!r}]` mean and sd must both have shape (n_points, n_planes); "
            f"got {mean.shape} and {sd.shape}"
        )
    if (sd < 0).any():
        raise DataError(f"`normative[{variable!r}]` sd has negative values")
    return np.linspace(0.0, 100.0, mean.shape[0]), mean, sd


# display units of the gait variables by the end of their name (SI input)
_UNITS = (("Angles", "rad"), ("Moment", "N·m/kg"), ("Power", "W/kg"), ("Force", "N/kg"))


def _units(variable: str) -> str:
    """Axis unit of a gait variable in SI (angles in rad unless drawn in degrees)."""
    for suffix, unit in _UNITS:
        if variable.endswith(suffix):
            return unit
    return "SI"


def _not_defined_set(not_defined) -> set:
    """{(side, variable, component)} from CurveFlag-like objects or 3-tuples."""
    out = set()
    if isinstance(not_defined, str | bytes | Mapping):
        raise DataError(
            "`not_defined` must be a sequence of (side, variable, component) or of objects "
            f"with those attributes (result.not_defined), got {type(not_defined).__name__}"
        )
    for item in not_defined:
        if all(hasattr(item, a) for a in ("side", "variable", "component")):
            side, var, comp = item.side, item.variable, item.component
        elif isinstance(item, tuple | list) and len(item) == 3:
            side, var, comp = item
        else:
            raise DataError(
                f"`not_defined` entry {item!r}: expected (side, variable, component), e.g. "
                "('Left', 'AnkleAngles', 1), or an object with those attributes"
            )
        if isinstance(comp, bool) or not isinstance(comp, int | np.integer) or comp < 0:
            raise DataError(f"`not_defined` entry {item!r}: the component must be an int >= 0")
        out.add((_side_name(side), str(var), int(comp)))
    return out


def plot_gait_cycles(
    result,
    *,
    variables: Sequence[str] | None = None,
    sides: str | Sequence[str] = "both",
    planes: Sequence[str] = ("Sagittal", "Frontal", "Transverse"),
    normative: Mapping | None = None,
    toe_off: Mapping | None = None,
    degrees: bool = True,
    show_cycles: bool = False,
    colors: Mapping | None = None,
    fig=None,
    not_defined=None,
):
    """Plot time-normalized gait curves: rows = variables, columns = planes.

    Parameters
    ----------
    result : GaitResult or mapping
        A gait result (:class:`ahbm.gait.GaitResult`: its ``cycles`` are drawn
        and its ``not_defined`` components left out), or the cycles as a
        mapping ``{"Left": {name: cycles, ...}, "Right": {...}}`` where
        `cycles` has shape (n_cycles, n_points, n_planes), typically
        (n_cycles, 101, 3), in SI units (angles in rad), NaN where missing. A
        side may also hold ``"toe_off"``: the toe-off instant of each cycle, %
        of the cycle.
    variables : sequence of str, optional
        Variables to draw, one row each. Default: those of PelvisAngles,
        HipAngles, KneeAngles, AnkleAngles present, else every variable.
    sides : {"both", "left", "right"} or sequence, optional
        Sides to draw.
    planes : sequence of str, optional
        Column titles, one per component (Plug-in-Gait order: x = sagittal,
        y = frontal, z = transverse).
    normative : mapping, optional
        Normative band per variable: ``name -> (mean, sd)`` or
        ``name -> {"mean": m, "sd": s}`` with `m`, `s` of shape
        (n_points, n_planes) over 0-100 %, in display units (degrees for
        angles when `degrees` is True). Drawn as a grey band mean ± SD.
    toe_off : mapping, optional
        Side -> toe-off percent (a number or one per cycle); overrides the
        result's ``"toe_off"`` entries. A vertical line marks the mean.
    degrees : bool, optional
        Show variables whose name ends in "Angles" in degrees (input in rad).
        Each row's axis names its unit: deg (or rad), N·m/kg for ``*Moment``,
        W/kg for ``*Power``, N/kg for ``*Force``, "SI" for other names.
    show_cycles : bool, optional
        Also draw every cycle as a thin line.
    colors : mapping, optional
        Side -> colour (default: Left red, Right green).
    fig : matplotlib.figure.Figure, optional
        Figure to draw into.
    not_defined : sequence, optional
        Components the model fixes by construction, which are not data:
        ``(side, variable, component)`` triples or objects with those
        attributes (``result.not_defined``, :class:`ahbm.gait.checks.CurveFlag`).
        They are not drawn; a panel that no side draws says "not defined by
        this model". Default: the result's ``not_defined`` for a gait result;
        for a mapping of raw arrays, the fallback below.

    Returns
    -------
    matplotlib.figure.Figure
        ``fig.axes`` holds the panels in row-major order
        (``fig.axes[row * n_planes + column]``).

    Raises
    ------
    DataError
        Unknown side or variable, bad array shapes, bad normative table.

    Notes
    -----
    Mean and SD are computed per point over the cycles present
    (:func:`gait_cycle_summary`); the band is mean ± 1 SD.

    Which components are not data is structural: the model says it
    (`not_defined`, ``result.not_defined``), whatever the values. Only for
    raw arrays without that information (a mapping and ``not_defined=None``)
    a component whose every finite value of a side is within 1e-9 (round-off
    of a component fixed at zero) is drawn as "zero by construction" instead
    of a curve; pass ``not_defined=()`` to draw every component as data.

    Examples
    --------
    >>> import numpy as np
    >>> from ahbm.graphics import plot_gait_cycles
    >>> cyc = np.zeros((2, 101, 3))
    >>> fig = plot_gait_cycles({"Left": {"KneeAngles": cyc}, "Right": {"KneeAngles": cyc}})
    >>> len(fig.axes)
    3
    >>> import matplotlib.pyplot as plt; plt.close(fig)
    """
    if not isinstance(result, Mapping) and isinstance(getattr(result, "cycles", None), Mapping):
        if not_defined is None:  # a gait result: the model's own list (structural)
            not_defined = getattr(result, "not_defined", ())
        result = {side: c for side, c in result.cycles.items() if c}
    if not isinstance(result, Mapping) or not result:
        raise DataError(
            "`result` must be a mapping {'Left': {name: cycles}, 'Right': {...}} with at "
            f"least one side, or a gait result, got {type(result).__name__}"
        )
    undefined = None if not_defined is None else _not_defined_set(not_defined)
    data = {_side_name(k): v for k, v in result.items()}
    sides = check_names(sides, "sides", allow_str=True)
    if sides is None:
        raise DataError("Expected `sides` to be 'both', 'left', 'right' or a list of them")
    variables = check_names(variables, "variables")
    planes = check_names(planes, "planes")
    if planes is None:
        raise DataError("Expected `planes` to be a list of column titles")
    check_mapping(normative, "normative")
    check_mapping(toe_off, "toe_off")
    check_mapping(colors, "colors")
    check_figure(fig)
    if isinstance(sides, str):
        if sides.lower() == "both":
            wanted = ["Left", "Right"]
        else:
            wanted = [_side_name(sides)]
    else:
        wanted = [_side_name(s) for s in sides]
    wanted = [s for s in wanted if s in data]
    if not wanted:
        raise DataError(
            f"None of the requested sides {sides!r} is in the result (it has {', '.join(data)})"
        )
    side_colors = dict(SIDE_COLORS)
    if colors:
        side_colors.update({_side_name(k): v for k, v in colors.items()})

    available = []
    for side in wanted:
        for name in data[side]:
            if name != "toe_off" and name not in available:
                available.append(name)
    if variables is None:
        variables = [v for v in _DEFAULT_VARIABLES if v in available] or available
    else:
        variables = [str(v) for v in variables]
        for v in variables:
            if v not in available:
                raise DataError(
                    f"Variable {v!r} is not in the result for sides {wanted}; available: "
                    f"{', '.join(available)}"
                )
    if not variables:
        raise DataError("The result holds no variable to plot")
    planes = list(planes)
    n_rows, n_cols = len(variables), len(planes)

    toe = {}
    for side in wanted:
        value = None
        if toe_off is not None:
            value = {_side_name(k): v for k, v in toe_off.items()}.get(side)
        elif isinstance(data[side], Mapping):
            value = data[side].get("toe_off")
        if value is not None:
            arr = as_float_array(value, f"toe_off[{side!r}]", allow_nan=True)
            if arr.size and np.isfinite(arr).any():
                mean_toe = float(np.nanmean(arr))
                if not 0.0 <= mean_toe <= 100.0:
                    raise DataError(
                        f"Toe-off of the {side} side is {mean_toe:.1f} %, outside 0-100 %"
                    )
                toe[side] = mean_toe

    plt = pyplot()
    if fig is None:
        fig = plt.figure(figsize=(3.0 * n_cols, 2.2 * n_rows + 0.6))
    axes = fig.subplots(n_rows, n_cols, sharex=True, squeeze=False)
    for r, var in enumerate(variables):
        is_angle = var.endswith("Angles")
        scale = 180.0 / np.pi if (degrees and is_angle) else 1.0
        band = _normative_band(normative, var)
        for c in range(n_cols):
            ax = axes[r, c]
            if band is not None and c < band[1].shape[1]:
                pct_n, m_n, s_n = band
                ax.fill_between(
                    pct_n,
                    m_n[:, c] - s_n[:, c],
                    m_n[:, c] + s_n[:, c],
                    color="0.8",
                    alpha=0.8,
                    lw=0,
                    label="normative",
                )
            zero_sides, undefined_sides = [], []
            for side in wanted:
                if var not in data[side]:
                    continue
                if undefined is not None and (side, var, c) in undefined:
                    undefined_sides.append(side)  # fixed by the model: not data
                    continue
                cycles = _as_cycles(data[side][var], f"result[{side!r}][{var!r}]") * scale
                if cycles.shape[2] != n_cols:
                    raise DataError(
                        f"`result[{side!r}][{var!r}]` has {cycles.shape[2]} components but "
                        f"{n_cols} planes are drawn; pass matching `planes`"
                    )
                values = cycles[:, :, c][np.isfinite(cycles[:, :, c])]
                if (
                    undefined is None
                    and values.size
                    and np.max(np.abs(values)) <= _ZERO_BY_CONSTRUCTION
                ):
                    zero_sides.append(side)  # raw arrays only: the value fallback
                    continue
                summary = gait_cycle_summary(cycles)
                pct, mean, sd = summary.percent, summary.mean, summary.sd
                color = side_colors[side]
                if show_cycles:
                    for cyc in cycles:
                        ax.plot(pct, cyc[:, c], color=color, lw=0.5, alpha=0.4)
                ax.fill_between(
                    pct,
                    mean[:, c] - sd[:, c],
                    mean[:, c] + sd[:, c],
                    color=color,
                    alpha=0.2,
                    lw=0,
                    label=f"{side} ± SD",
                )
                ax.plot(pct, mean[:, c], color=color, lw=1.6, label=side)
                if side in toe:
                    ax.axvline(toe[side], color=color, ls="--", lw=1.0, label=f"{side} toe-off")
            if (zero_sides or undefined_sides) and not ax.lines:
                text = _NOT_DEFINED_TEXT if undefined_sides else "zero by construction"
                ax.text(50.0, 0.0, text, ha="center", va="center", fontsize=8, color="0.4")
                ax.set_ylim(-1.0, 1.0)
                if undefined_sides:
                    ax.set_yticks([])
            if r == 0:
                ax.set_title(planes[c])
            if c == 0:
                ax.set_ylabel(f"{var} ({'deg' if scale != 1.0 else _units(var)})", fontsize=8)
            if r == n_rows - 1:
                ax.set_xlabel("% gait cycle")
            ax.set_xlim(0.0, 100.0)
            ax.axhline(0.0, color="0.5", lw=0.5)
            ax.grid(True, alpha=0.3)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    keep = [(h, lab) for h, lab in zip(handles, labels, strict=True) if lab in wanted]
    legend = None
    if keep:
        legend = fig.legend(
            *zip(*keep, strict=True), loc="upper right", ncols=len(keep), fontsize=8, frameon=False
        )
    # variable names, plane titles and sides are data: plain text, before the layout
    # measures them (mathtext would be parsed there)
    plain_text(*axes.ravel(), legend)
    fig.tight_layout(rect=(0.0, 0.0, 1.0, 1.0 - 0.3 / fig.get_size_inches()[1]))
    return fig


def gait_cycles_from_results(results: Mapping, key: str = "gait_cycles") -> Mapping:
    """Find the per-side gait-cycle mapping in a trial's ``results``.

    Looks for ``results[key]`` (default ``"gait_cycles"``) and otherwise for
    ``"Left"`` / ``"Right"`` entries at the top level. Each side maps variable
    names to arrays (n_cycles, 101, 3), as :func:`plot_gait_cycles` expects.

    Raises
    ------
    DataError
        If no such mapping is present (the message lists the result names).
    """
    if not isinstance(results, Mapping):
        raise DataError(
            f"Expected `results` to be a mapping (e.g. trial.results), got {type(results).__name__}"
        )
    if not isinstance(key, str):
        raise DataError(f"Expected `key` to be a str, got {key!r}")
    if key in results and isinstance(results[key], Mapping):
        return results[key]
    sides = {k: v for k, v in results.items() if str(k).lower() in ("left", "right")}
    if sides and all(isinstance(v, Mapping) for v in sides.values()):
        return sides
    raise DataError(
        f"No gait cycles in the results: expected results[{key!r}] = {{'Left': {{name: "
        f"(n_cycles, 101, 3)}}, 'Right': ...}}; results hold {', '.join(map(str, results))}"
    )


def not_defined_from_results(results: Mapping, key: str = "gait_not_defined"):
    """The components not defined by the model, as stored in a trial's ``results``.

    Reads ``results[key]``: one text per component, ``"LAnkleAngles[1]: why"``
    (side letter, variable, component), or ``["none"]`` (as
    :meth:`ahbm.gait.GaitResult.to_results` writes it).

    Returns
    -------
    list of tuple or None
        ``[(side, variable, component), ...]`` for :func:`plot_gait_cycles`
        (``not_defined=``); None when the results do not say (files written
        before the list was stored), which leaves the plot its fallback.

    Raises
    ------
    DataError
        An entry that is not of that form.

    Examples
    --------
    >>> not_defined_from_results({"gait_not_defined": ["RAnkleAngles[1]: fixed"]})
    [('Right', 'AnkleAngles', 1)]
    >>> not_defined_from_results({}) is None
    True
    """
    import re

    if not isinstance(results, Mapping) or key not in results:
        return None
    entries = results[key]
    entries = [entries] if isinstance(entries, str | bytes) else list(entries)
    out = []
    for entry in entries:
        text = entry.decode() if isinstance(entry, bytes) else str(entry)
        if text.strip().lower() == "none":
            continue
        m = re.match(r"\s*([LR])(\w+)\[(\d+)\]", text)
        if m is None:
            raise DataError(
                f"results[{key!r}] entry {text[:60]!r}: expected 'LAnkleAngles[1]: ...' (side "
                "letter, variable, component)"
            )
        out.append((_side_name(m.group(1)), m.group(2), int(m.group(3))))
    return out
