"""Gait Profile Score, Gait Variable Scores and the Movement Analysis Profile.

The Gait Variable Score (GVS) of a kinematic variable is the root mean
square difference, over the gait cycle sampled every 2 % (51 points), between
a subject's curve and the mean curve of a reference (normative) set; the Gait
Profile Score (GPS) of one side is the root mean square of that side's nine
GVS; the overall GPS is the root mean square of the 15 distinct GVS of both
sides, the pelvis counted once. The bar chart of the GVS and GPS is the
Movement Analysis Profile (MAP, :func:`ahbm.graphics.plot_movement_analysis_profile`).
(Baker et al. 2009.)

The nine variables (:data:`SCORE_VARIABLES`) are those of the Gait
Deviation Index (:mod:`ahbm.gait.gdi`): pelvic tilt, obliquity and rotation,
hip flexion, abduction and rotation, knee flexion, ankle dorsiflexion and
foot progression, taken from the gait pipeline's cycles (``PelvisAngles``
x, y, z; ``HipAngles`` x, y, z; ``KneeAngles`` x; ``AnkleAngles`` x;
``FootProgressAngles`` z). Each side's score uses that side's cycles, its
pelvis included (Plug-in Gait reports the pelvis of each side's cycles with
that side's signs, so both sides compare with one reference).

Data layout
-----------
* **Score curves**: an array ``(n_cycles, 9, n_points)``, the nine variables
  in the order of :data:`SCORE_VARIABLES`, over 0-100 % of the cycle
  (resampled linearly to 51 points); :func:`gait_score_curves` makes it from
  one side's cycles (``GaitResult.cycles["Left"]``, ``(n_cycles, 101, 3)``
  per variable).
* **Subject**: a :class:`~ahbm.gait.GaitResult`, its ``cycles`` mapping
  ``{"Left": {...}, "Right": {...}}``, or ``{"Left": curves, "Right":
  curves}`` with score-curve arrays.
* **Reference** (:class:`GaitReference`): the mean (and SD) curves of a
  normative set. From cycles (:func:`gait_reference`: arrays, gait results,
  both sides pooled), from a folder of trials (:func:`gait_reference_from_files`:
  ahbm's pipeline, or the model outputs stored in the files), or from a
  published band (:func:`gait_reference_band`, :func:`read_gait_reference`,
  a CSV file of ``percent`` and one column per variable, degrees).

Subject and reference must come from the same model and sign conventions:
ahbm's pipeline with ahbm's pipeline, Vicon's Plug-in Gait outputs with
Vicon's. The scores are in the units of the curves (rad for ahbm's cycles;
:meth:`GaitProfileScore.summary` and the MAP show degrees).

References
----------
Baker, R., McGinley, J. L., Schwartz, M. H., Beynon, S., Rozumalski, A.,
Graham, H. K. & Tirosh, O. (2009). The Gait Profile Score and Movement
Analysis Profile. Gait Posture 30(3), 265-269.
"""

from __future__ import annotations

import csv
import io
import os
import tempfile
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ahbm._internal.files import atomic_path
from ahbm._internal.validation import as_choice, as_float_array, check_read_size, input_path
from ahbm.errors import AhbmWarning, DataError
from ahbm.types import ResultRepr

__all__ = [
    "SCORE_VARIABLES",
    "GaitProfileScore",
    "GaitReference",
    "gait_profile_score",
    "gait_reference",
    "gait_reference_band",
    "gait_reference_from_files",
    "gait_score_curves",
    "gait_variable_scores",
    "model_output_cycles",
    "read_gait_reference",
    "write_gait_reference",
]

#: The nine kinematic variables of the GPS and GDI, per side: (key, label, cycle name, component).
SCORE_VARIABLES = (
    ("pelvic_tilt", "Pelvic tilt", "PelvisAngles", 0),
    ("pelvic_obliquity", "Pelvic obliquity", "PelvisAngles", 1),
    ("pelvic_rotation", "Pelvic rotation", "PelvisAngles", 2),
    ("hip_flexion", "Hip flexion", "HipAngles", 0),
    ("hip_abduction", "Hip abduction", "HipAngles", 1),
    ("hip_rotation", "Hip rotation", "HipAngles", 2),
    ("knee_flexion", "Knee flexion", "KneeAngles", 0),
    ("ankle_dorsiflexion", "Ankle dorsiflexion", "AnkleAngles", 0),
    ("foot_progression", "Foot progression", "FootProgressAngles", 2),
)
#: Points per cycle of the scores: 0, 2, ..., 100 %.
N_POINTS = 51
_N_VAR = len(SCORE_VARIABLES)
_PELVIS = np.array([v[2] == "PelvisAngles" for v in SCORE_VARIABLES])
_SIDES = ("Left", "Right")
_LABELS = tuple(v[1] for v in SCORE_VARIABLES)


def resample_cycles(arr: np.ndarray, n_points: int = N_POINTS) -> np.ndarray:
    """Resample the last axis (0-100 % of the cycle) linearly to `n_points` samples."""
    m = arr.shape[-1]
    if m == n_points:
        return arr
    x = np.linspace(0.0, m - 1.0, n_points)
    lo = np.minimum(np.floor(x).astype(int), m - 2)
    w = x - lo
    return arr[..., lo] * (1.0 - w) + arr[..., lo + 1] * w


def check_score_curves(curves, name: str, *, side: str = "", min_cycles: int = 1) -> np.ndarray:
    """`curves` as ``(..., 9, 51)``: right shape, resampled, no NaN (naming variable and cycle)."""
    arr = as_float_array(curves, name, allow_nan=True)
    if arr.ndim < 2 or arr.shape[-2] != _N_VAR or arr.shape[-1] < 2:
        raise DataError(
            f"Expected `{name}` with shape (..., {_N_VAR}, n_points): the nine variables "
            f"({', '.join(_LABELS)}) over the cycle; got {arr.shape}"
        )
    if arr.ndim > 2 and arr.shape[0] < min_cycles:
        raise DataError(f"`{name}` needs at least {min_cycles} cycle(s), got {arr.shape[0]}")
    bad = ~np.isfinite(arr)
    if bad.any():
        idx = np.argwhere(bad)[0]
        cycle = f"cycle {int(idx[0])}, " if arr.ndim == 3 else ""
        where = f"{side} " if side else ""
        pct = 100.0 * idx[-1] / (arr.shape[-1] - 1)
        raise DataError(
            f"`{name}`: {where}{cycle}{_LABELS[int(idx[-2])]} has NaN at {pct:.0f} % of the cycle; "
            "fill the gaps or drop that cycle (drop_nan=True where offered)"
        )
    return resample_cycles(arr)


def gait_score_curves(cycles, *, drop_nan: bool = False, side: str = "") -> np.ndarray:
    """The nine score variables of one side's gait cycles, over 51 points.

    Parameters
    ----------
    cycles : mapping
        One side's cycles as the gait pipeline gives them
        (``GaitResult.cycles["Left"]``): ``"PelvisAngles"``,
        ``"HipAngles"``, ``"KneeAngles"``, ``"AnkleAngles"``,
        ``"FootProgressAngles"`` -> ``(n_cycles, n_points, 3)`` over 0-100 %.
    drop_nan : bool
        Drop the cycles with NaN in a score variable (with an
        :class:`~ahbm.errors.AhbmWarning` naming them) instead of raising.
    side : str
        Side name for the messages.

    Returns
    -------
    ndarray, shape (n_cycles, 9, 51)
        In the order of :data:`SCORE_VARIABLES`, in the cycles' units.

    Raises
    ------
    DataError
        A missing variable (named), cycles of different counts, NaN (variable
        and cycle named) unless `drop_nan`.

    Examples
    --------
    >>> import numpy as np
    >>> cyc = {k: np.zeros((2, 101, 3)) for k in ("PelvisAngles", "HipAngles",
    ...        "KneeAngles", "AnkleAngles", "FootProgressAngles")}
    >>> gait_score_curves(cyc).shape
    (2, 9, 51)
    """
    if not isinstance(cycles, Mapping):
        raise DataError(
            f"Expected the {side + ' ' if side else ''}cycles as a mapping name -> (n_cycles, "
            f"n_points, 3), got {type(cycles).__name__}"
        )
    missing = sorted({v[2] for v in SCORE_VARIABLES} - set(cycles))
    if missing:
        raise DataError(
            f"the {side + ' ' if side else ''}cycles lack {', '.join(missing)} (the scores need "
            f"PelvisAngles, HipAngles, KneeAngles, AnkleAngles and FootProgressAngles)"
        )
    parts, counts = [], {}
    for _key, _label, name, comp in SCORE_VARIABLES:
        arr = as_float_array(cycles[name], f"cycles[{name!r}]", allow_nan=True)
        if arr.ndim != 3 or arr.shape[2] <= comp or arr.shape[1] < 2:
            raise DataError(
                f"Expected {side + ' ' if side else ''}cycles[{name!r}] with shape (n_cycles, "
                f"n_points, 3), got {arr.shape}"
            )
        counts[name] = arr.shape[0]
        parts.append(resample_cycles(arr[:, :, comp]))
    if len(set(counts.values())) > 1:
        raise DataError(
            f"the {side + ' ' if side else ''}cycles differ in number: "
            + ", ".join(f"{k} {n}" for k, n in counts.items())
        )
    out = np.stack(parts, axis=1)
    bad = ~np.isfinite(out).reshape(out.shape[0], -1).all(axis=1)
    if drop_nan and bad.any():
        warnings.warn(
            f"{side + ' ' if side else ''}cycle(s) {np.flatnonzero(bad).tolist()} of "
            f"{out.shape[0]} dropped: NaN in a score variable",
            AhbmWarning,
            stacklevel=2,
        )
        out = out[~bad]
    return check_score_curves(out, "cycles", side=side)


def side_curves(subject, name: str, *, drop_nan: bool = False) -> dict:
    """``{"Left": (n, 9, 51), "Right": ...}`` from a GaitResult, cycles or curve arrays."""
    cycles = getattr(subject, "cycles", subject)
    if not isinstance(cycles, Mapping) or not cycles:
        raise DataError(
            f"Expected `{name}` to be a GaitResult, its cycles {{'Left': {{...}}, 'Right': "
            f"{{...}}}} or {{'Left': (n_cycles, 9, n_points), ...}}, got {type(subject).__name__}"
        )
    out = {}
    for key, value in cycles.items():
        side = str(key).capitalize()
        if side not in _SIDES:
            raise DataError(f"`{name}`: unknown side {key!r}; use 'Left' and 'Right'")
        if isinstance(value, Mapping):
            if not value:  # a side without cycles (fewer than two foot strikes)
                continue
            out[side] = gait_score_curves(value, drop_nan=drop_nan, side=side)
        else:
            arr = check_score_curves(value, f"{name}[{key!r}]", side=side)
            out[side] = arr[None] if arr.ndim == 2 else arr
        if out[side].ndim != 3 or out[side].shape[0] == 0:
            raise DataError(f"`{name}`: the {side} side has no complete cycle")
    if not out:
        raise DataError(f"`{name}` has no cycles on either side")
    return out


@dataclass(frozen=True, repr=False)
class GaitReference(ResultRepr):
    """A normative reference: mean and SD curves of the nine score variables.

    Attributes
    ----------
    mean : ndarray, shape (9, 51)
        Mean curve of each variable over 0-100 % (2 % steps), in the units of
        the curves it was made from (rad from ahbm's cycles).
    sd : ndarray, shape (9, 51)
        Sample SD (NaN where unknown, e.g. a band given without it).
    curves : ndarray, shape (n_cycles, 9, 51)
        The reference cycles (empty for a band): needed for the controls' own
        scores and for the Gait Deviation Index.
    source : str
        Where it came from (files, band, arrays).
    trials : tuple of str
        The files or stores it was made from.
    """

    mean: np.ndarray
    sd: np.ndarray
    curves: np.ndarray = field(default_factory=lambda: np.zeros((0, _N_VAR, N_POINTS)))
    source: str = ""
    trials: tuple = ()

    @property
    def n_cycles(self) -> int:
        """Number of reference cycles (0 for a band)."""
        return int(np.shape(self.curves)[0])

    def cycle_scores(self) -> tuple:
        """GVS ``(n_cycles, 9)`` and GPS ``(n_cycles,)`` of each reference cycle against the mean.

        The spread of the normative group itself: Baker et al. (2009) show the
        controls' GPS beside the subject's.
        """
        if self.n_cycles == 0:
            raise DataError(
                "this reference is a band without cycles; build it from cycles "
                "(gait_reference) to score the reference group itself"
            )
        gvs = gait_variable_scores(self.curves, self)
        return gvs, np.sqrt(np.mean(gvs**2, axis=-1))

    def normal_profile(self) -> np.ndarray:
        """Mean GVS of the reference cycles and their mean GPS, shape (10,), for the MAP."""
        gvs, gps = self.cycle_scores()
        return np.r_[gvs.mean(axis=0), gps.mean()]

    def gps_log_stats(self) -> tuple:
        """Mean and sample SD of ``ln GPS`` over the reference cycles (the GDI* scaling)."""
        _, gps = self.cycle_scores()
        if gps.size < 3 or not (gps > 0).all():
            raise DataError("the GDI* scaling needs at least 3 reference cycles with GPS > 0")
        ln = np.log(gps)
        return float(ln.mean()), float(ln.std(ddof=1))


def _is_cycles(d) -> bool:
    return isinstance(d, Mapping) or hasattr(d, "cycles")


def _pooled(data, name: str, sides, drop_nan: bool) -> list:
    """Score-curve arrays of `data` (array, result, cycles or a list of those)."""
    if _is_cycles(data):
        by_side = side_curves(data, name, drop_nan=drop_nan)
        return [by_side[s] for s in sides if s in by_side]
    if (
        isinstance(data, list | tuple)
        and data
        and all(_is_cycles(d) or (isinstance(d, np.ndarray) and d.ndim == 3) for d in data)
    ):
        return [a for i, d in enumerate(data) for a in _pooled(d, f"{name}[{i}]", sides, drop_nan)]
    arr = check_score_curves(data, name)
    return [arr[None] if arr.ndim == 2 else arr.reshape(-1, _N_VAR, N_POINTS)]


def gait_reference(
    data, *, sides=("Left", "Right"), drop_nan: bool = False, source: str = ""
) -> GaitReference:
    """A normative reference from the cycles of a control group.

    Parameters
    ----------
    data : array_like, GaitResult, mapping, or list of them
        Score curves ``(n_cycles, 9, n_points)``; or gait results / their
        cycles mappings ``{"Left": {...}, "Right": {...}}`` (the `sides`
        pooled: Plug-in Gait's side-relative signs make left and right
        comparable); or a list of any of these.
    sides : sequence of {"Left", "Right"}
        Sides of gait results and cycle mappings to pool.
    drop_nan : bool
        Drop cycles with NaN (warned) instead of raising.
    source : str
        Description stored in the reference.

    Returns
    -------
    GaitReference

    Raises
    ------
    DataError
        Fewer than 2 cycles, NaN (variable and cycle named), missing
        variables, bad shapes.

    Examples
    --------
    >>> import numpy as np
    >>> ref = gait_reference(np.ones((4, 9, 101)))
    >>> ref.mean.shape, ref.n_cycles
    ((9, 51), 4)
    """
    sides = tuple(as_choice(str(s).capitalize(), "sides", _SIDES) for s in sides)
    parts = _pooled(data, "data", sides, drop_nan)
    curves = np.concatenate(parts, axis=0) if parts else np.zeros((0, _N_VAR, N_POINTS))
    if curves.shape[0] < 2:
        raise DataError(
            f"a reference needs at least 2 cycles, got {curves.shape[0]}; give more control "
            "cycles, or a published band (gait_reference_band)"
        )
    return GaitReference(
        curves.mean(axis=0),
        curves.std(axis=0, ddof=1),
        curves,
        source or f"{curves.shape[0]} cycles",
    )


def gait_reference_band(mean, sd=None, *, source: str = "band") -> GaitReference:
    """A normative reference from published mean (and SD) curves.

    Parameters
    ----------
    mean : array_like, shape (9, n_points)
        Mean curve of each variable (order of :data:`SCORE_VARIABLES`) over
        0-100 % of the cycle, resampled linearly to 51 points; in the units
        of the subjects' curves (rad for ahbm's cycles).
    sd : array_like, shape (9, n_points), optional
        Standard deviation curves (for plots; the scores use only the mean).

    Returns
    -------
    GaitReference
        Without cycles (``n_cycles == 0``).
    """
    m = check_score_curves(mean, "mean")
    if m.ndim != 2:
        raise DataError(f"Expected `mean` with shape (9, n_points), got {np.shape(mean)}")
    s = np.full_like(m, np.nan) if sd is None else check_score_curves(sd, "sd")
    if s.shape != m.shape or (s < 0).any():
        raise DataError(f"`sd` must be non-negative with the shape of `mean`, got {np.shape(sd)}")
    return GaitReference(m, s, np.zeros((0, _N_VAR, N_POINTS)), source)


def read_gait_reference(path, *, degrees: bool = True) -> GaitReference:
    """Read a normative band from a CSV file.

    Parameters
    ----------
    path : str or path-like
        A comma-separated file with a header row: ``percent`` (0 to 100, in
        increasing order), one column per variable named by the keys of
        :data:`SCORE_VARIABLES` (``pelvic_tilt`` ... ``foot_progression``),
        and optionally ``<key>_sd`` columns. Other columns are ignored.
    degrees : bool
        The values are in degrees (converted to rad); False: read as they are.

    Returns
    -------
    GaitReference
        Resampled to 0, 2, ..., 100 %.

    Raises
    ------
    DataError, FileFormatError
        Missing file or columns (named), non-numeric values, percent not
        spanning 0-100 %.
    """
    p = input_path(path, "path")
    check_read_size(p.stat().st_size, "gait reference", str(p))
    with open(p, encoding="utf-8-sig", newline="") as fh:
        rows = [r for r in csv.reader(fh) if r and any(c.strip() for c in r)]
    if len(rows) < 3:
        raise DataError(f"{p}: a header row and at least two rows of values are needed")
    head = [c.strip().lower() for c in rows[0]]
    need = ["percent", *(v[0] for v in SCORE_VARIABLES)]
    missing = [c for c in need if c not in head]
    if missing:
        raise DataError(f"{p}: column(s) {', '.join(missing)} missing (header: {', '.join(head)})")
    try:
        values = np.array([[float(c) for c in r] for r in rows[1:]])
    except ValueError as err:
        raise DataError(f"{p}: a value is not a number ({err})") from None
    if values.shape[1] != len(head):
        raise DataError(f"{p}: rows have {values.shape[1]} values for {len(head)} columns")
    pct = values[:, head.index("percent")]
    if np.any(np.diff(pct) <= 0) or abs(pct[0]) > 1e-6 or abs(pct[-1] - 100.0) > 1e-6:
        raise DataError(f"{p}: `percent` must increase from 0 to 100, got {pct[0]} .. {pct[-1]}")
    grid = np.linspace(0.0, 100.0, N_POINTS)

    def column(key):
        return np.interp(grid, pct, values[:, head.index(key)])

    scale = np.pi / 180.0 if degrees else 1.0
    mean = np.stack([column(v[0]) for v in SCORE_VARIABLES]) * scale
    has_sd = all(f"{v[0]}_sd" in head for v in SCORE_VARIABLES)
    sd = np.stack([column(f"{v[0]}_sd") for v in SCORE_VARIABLES]) * scale if has_sd else None
    return gait_reference_band(mean, sd, source=f"band {p.name}")


def write_gait_reference(reference: GaitReference, path, *, degrees: bool = True) -> None:
    """Write a reference's mean and SD curves as the CSV that :func:`read_gait_reference` reads.

    Written atomically; degrees unless ``degrees=False``.
    """
    if not isinstance(reference, GaitReference):
        raise DataError(f"Expected a GaitReference, got {type(reference).__name__}")
    scale = 180.0 / np.pi if degrees else 1.0
    keys = [v[0] for v in SCORE_VARIABLES]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["percent", *keys, *(f"{k}_sd" for k in keys)])
    table = np.c_[np.linspace(0, 100, N_POINTS), reference.mean.T * scale, reference.sd.T * scale]
    w.writerows([[f"{x:.10g}" for x in row] for row in table])
    with atomic_path(path) as tmp:
        tmp.write_text(buf.getvalue(), encoding="utf-8")


def gait_reference_from_files(
    files, *, outputs: str = "ahbm", sides=("Left", "Right"), drop_nan: bool = True, **kwargs
) -> GaitReference:
    """A normative reference from a folder (or list) of control trials.

    Parameters
    ----------
    files : str, path or sequence
        Trial files, folders or glob patterns (``"controls/*.c3d"``; a folder
        gives its .c3d/.trc files), as :func:`~ahbm.gait.analyze_gait_files`
        takes them; ``.h5`` stores written by it (or by ``ahbm gait``) are
        read as they are.
    outputs : {"ahbm", "file"}
        ``"ahbm"``: run ahbm's gait pipeline on each trial
        (:func:`~ahbm.gait.analyze_gait_files`, which reports the files that
        fail); ``"file"``: use the joint angles stored in the files by the
        lab's own model (Vicon Plug-in Gait's ``LHipAngles`` ...), cut into
        cycles at the files' foot strikes.
    sides : sequence of {"Left", "Right"}
        Sides to pool.
    drop_nan : bool
        Drop cycles with NaN in a score variable (warned).
    **kwargs
        Passed to :func:`~ahbm.gait.analyze_gait_files` (``static``,
        ``jobs``, ``executor``, ``settings`` ...) with ``outputs="ahbm"``.

    Returns
    -------
    GaitReference
        Its ``trials`` lists the files used.

    Raises
    ------
    DataError
        No file, no usable cycle, fewer than 2 cycles.
    """
    from ahbm.gait.batch import analyze_gait_files, expand_trial_paths

    outputs = as_choice(outputs, "outputs", ("ahbm", "file"))
    if outputs == "file" and kwargs:
        raise DataError(f"{', '.join(kwargs)}: pipeline options are used only with outputs='ahbm'")
    if isinstance(files, str | os.PathLike):
        files = [files]
    if not isinstance(files, list | tuple) or not all(
        isinstance(f, str | os.PathLike) for f in files
    ):
        raise DataError(
            "Expected `files` to be a file, folder or glob pattern, or a list of them; got "
            f"{type(files).__name__}"
        )
    stores = [f for f in files if Path(os.fspath(f)).suffix.lower() in (".h5", ".hdf5")]
    others = [f for f in files if f not in stores]
    cycles, used = [], []
    for store in stores:
        cycles += _store_cycles(store)
        used.append(str(store))
    if others:
        paths = expand_trial_paths(others)
        if outputs == "file":
            for p in paths:
                cycles.append(model_output_cycles(p))
                used.append(p)
        else:
            with tempfile.TemporaryDirectory(prefix="ahbm-reference-") as tmp:
                out = Path(tmp) / "reference.h5"
                res = analyze_gait_files(paths, out, **kwargs)
                failed = [r for r in res.rows if not r["ok"]]
                if failed:
                    warnings.warn(
                        "reference trials left out: "
                        + "; ".join(f"{r['trial']}: {r['error']}" for r in failed),
                        AhbmWarning,
                        stacklevel=2,
                    )
                used += [r["trial"] for r in res.rows if r["ok"]]
                if res.n_failed < len(res.rows):
                    cycles += _store_cycles(out)
    if not cycles:
        raise DataError("no gait cycles found in the reference files")
    sides = tuple(as_choice(str(s).capitalize(), "sides", _SIDES) for s in sides)
    cycles = [c for c in cycles if any(c.get(s) for s in sides)]
    if not cycles:
        raise DataError(f"the reference files hold no complete cycle on the sides {sides}")
    label = "ahbm pipeline" if outputs == "ahbm" else "file model outputs"
    ref = gait_reference(cycles, sides=sides, drop_nan=drop_nan)
    src = f"{ref.n_cycles} cycles of {len(used)} file(s) ({label})"
    return GaitReference(ref.mean, ref.sd, ref.curves, src, tuple(used))


def _store_cycles(path) -> list:
    """The stored ``gait_cycles`` of every trial in an ahbm HDF5 store."""
    from ahbm.io.hdf5 import list_trials, load_trial

    out = []
    for name in list_trials(path):
        cyc = load_trial(path, name).results.get("gait_cycles")
        if isinstance(cyc, Mapping):
            out.append({s: dict(c) for s, c in cyc.items() if isinstance(c, Mapping)})
    return out


def model_output_cycles(trial) -> dict:
    """Gait cycles of the joint angles a trial stores from a lab's own model.

    Parameters
    ----------
    trial : Trial or path
        A C3D file (or its Trial) carrying model outputs such as Vicon
        Plug-in Gait's ``LHipAngles``, ``RPelvisAngles`` ... (read in rad)
        and foot-strike events.

    Returns
    -------
    dict
        ``{"Left": {"HipAngles": (n_cycles, 101, 3), ...}, "Right": {...}}``
        as :func:`~ahbm.gait.gait_cycles`, cut at the file's foot strikes:
        a subject for :func:`gait_profile_score` against a reference made
        with ``outputs="file"``.

    Raises
    ------
    DataError
        No joint-angle outputs, no foot strikes.
    """
    from ahbm.gait.cycles import gait_cycles
    from ahbm.gait.events import file_gait_events
    from ahbm.gait.markers import load_gait_trial

    if isinstance(trial, str | os.PathLike):
        path = os.fspath(trial)
    else:
        path = getattr(trial, "source", "") or "trial"
    trial = load_gait_trial(trial, "trial")
    kinds = trial.point_kinds if isinstance(getattr(trial, "point_kinds", None), dict) else {}
    names = {v[2] for v in SCORE_VARIABLES}
    variables = {}
    for i, lab in enumerate(trial.point_labels):
        bare = str(lab).rsplit(":", 1)[-1]
        if bare[1:] in names and bare[0] in "LR" and kinds.get(lab, ("",))[0] == "angle":
            variables.setdefault(bare, np.asarray(trial.points[:, i], dtype=float))
    if not variables:
        raise DataError(
            f"{path}: no joint-angle model outputs (LHipAngles ...); compute the angles with "
            "ahbm's pipeline (analyze_gait; outputs='ahbm' for a reference)"
        )
    events = file_gait_events(trial.events, trial.time)
    if not events:
        raise DataError(f"{path}: the file has no foot strikes to cut cycles at")
    return gait_cycles(events, variables, time=trial.time)


def gait_variable_scores(curves, reference) -> np.ndarray:
    """Gait Variable Scores: RMS difference of each variable from the reference mean.

    Parameters
    ----------
    curves : array_like, shape (..., 9, n_points)
        Score curves (:func:`gait_score_curves`), resampled to 51 points.
    reference : GaitReference or array_like, shape (9, n_points)
        The reference, or its mean curves.

    Returns
    -------
    ndarray, shape (..., 9)
        ``GVS_v = sqrt(mean_t (x_v(t) - ref_v(t))^2)`` over the 51 points, in
        the curves' units.

    Examples
    --------
    >>> import numpy as np
    >>> ref = np.zeros((9, 51))
    >>> x = np.zeros((9, 51)); x[6] += 0.1  # knee flexion 0.1 rad above the reference
    >>> gait_variable_scores(x, ref).round(6).tolist()
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.1, 0.0, 0.0]
    """
    x = check_score_curves(curves, "curves")
    mean = reference.mean if isinstance(reference, GaitReference) else reference
    m = check_score_curves(mean, "reference")
    if m.ndim != 2:
        raise DataError(f"Expected the reference mean with shape (9, n_points), got {m.shape}")
    return np.sqrt(np.mean((x - m) ** 2, axis=-1))


@dataclass(frozen=True, repr=False)
class GaitProfileScore(ResultRepr):
    """Output of :func:`gait_profile_score`: GVS, GPS and the Movement Analysis Profile.

    Attributes
    ----------
    gvs : dict
        Side -> (9,): each variable's score over all the side's cycles
        (``sqrt`` of the mean over cycles of the squared per-cycle GVS).
    gps : dict
        Side -> float: ``sqrt(mean(gvs**2))`` over the side's nine variables.
    overall : float
        RMS of the 15 distinct GVS (both sides, the pelvis of
        `overall_pelvis` only); NaN with one side.
    gvs_cycles, gps_cycles : dict
        Side -> (n_cycles, 9) and (n_cycles,): per cycle.
    overall_pelvis : str
        The side whose pelvic scores enter the overall GPS.
    variables : tuple of str
        Labels of the nine variables.
    units : str
        Units of the scores (those of the curves: "rad" for ahbm's cycles).
    """

    gvs: dict
    gps: dict
    overall: float
    gvs_cycles: dict
    gps_cycles: dict
    overall_pelvis: str = "Left"
    variables: tuple = _LABELS
    units: str = "rad"

    def summary(self, *, degrees: bool = True) -> str:
        """The MAP as a text table (degrees unless ``degrees=False`` or units not rad)."""
        f = 180.0 / np.pi if degrees and self.units == "rad" else 1.0
        unit = "deg" if f != 1.0 else self.units
        sides = [s for s in _SIDES if s in self.gvs]
        lines = [f"{'variable':<20}" + "".join(f"{s:>9}" for s in sides) + f"  ({unit})"]
        for i, lab in enumerate(self.variables):
            lines.append(f"{lab:<20}" + "".join(f"{self.gvs[s][i] * f:9.2f}" for s in sides))
        lines.append(f"{'GPS':<20}" + "".join(f"{self.gps[s] * f:9.2f}" for s in sides))
        counts = ", ".join(f"{s} {len(self.gps_cycles[s])}" for s in sides)
        lines.append(f"overall GPS {self.overall * f:.2f} {unit} (cycles: {counts})")
        return "\n".join(lines)


def gait_profile_score(
    subject, reference, *, overall_pelvis: str = "Left", units: str = "rad"
) -> GaitProfileScore:
    """Gait Profile Score of each side and overall, with its Gait Variable Scores.

    Parameters
    ----------
    subject : GaitResult, mapping
        A :class:`~ahbm.gait.GaitResult`, its ``cycles``, or ``{"Left":
        curves, "Right": curves}`` with curves ``(n_cycles, 9, n_points)``;
        one side is enough (then ``overall`` is NaN).
    reference : GaitReference or array_like, shape (9, n_points)
        The normative reference (:func:`gait_reference`,
        :func:`gait_reference_band`, :func:`read_gait_reference`) or its mean.
    overall_pelvis : {"Left", "Right"}
        The side whose pelvic GVS enter the overall GPS (Baker et al. count
        the pelvis once).
    units : str
        Units of the curves, recorded in the result: "rad" (ahbm's cycles;
        the summary and the MAP then show degrees) or e.g. "deg".

    Returns
    -------
    GaitProfileScore

    Notes
    -----
    Per cycle ``GVS_v = sqrt(mean_t (x_v(t) - ref_v(t))^2)`` over 51 points
    (0, 2, ..., 100 %) and ``GPS = sqrt(mean_v GVS_v^2)`` over the nine
    variables (Baker et al. 2009). Over several cycles the squares are
    averaged (``GVS_v = sqrt(mean_cycles GVS_v^2)``), so that the side's GPS
    is exactly the RMS of its GVS, and the overall GPS the RMS of the 15 GVS.

    Examples
    --------
    >>> import numpy as np
    >>> ref = np.zeros((9, 51))
    >>> knee_up = np.zeros((1, 9, 51)); knee_up[:, 6] = 3.0
    >>> s = gait_profile_score({"Left": knee_up, "Right": np.zeros((1, 9, 51))}, ref)
    >>> round(s.gps["Left"], 6), s.gps["Right"], round(s.overall, 6)  # 3/3 and 3/sqrt(15)
    (1.0, 0.0, 0.774597)
    """
    overall_pelvis = as_choice(str(overall_pelvis).capitalize(), "overall_pelvis", _SIDES)
    by_side = side_curves(subject, "subject")
    if not isinstance(units, str):
        raise DataError(f"Expected `units` to be a unit name such as 'rad', got {units!r}")
    gvs, gps, gvs_c, gps_c = {}, {}, {}, {}
    for side, curves in by_side.items():
        per_cycle = gait_variable_scores(curves, reference)
        gvs_c[side] = per_cycle
        gps_c[side] = np.sqrt(np.mean(per_cycle**2, axis=-1))
        gvs[side] = np.sqrt(np.mean(per_cycle**2, axis=0))
        gps[side] = float(np.sqrt(np.mean(gvs[side] ** 2)))
    overall = np.nan
    if all(s in gvs for s in _SIDES):
        other = "Right" if overall_pelvis == "Left" else "Left"
        fifteen = np.r_[gvs[overall_pelvis], gvs[other][~_PELVIS]]
        overall = float(np.sqrt(np.mean(fifteen**2)))
    return GaitProfileScore(gvs, gps, overall, gvs_c, gps_c, overall_pelvis, _LABELS, units)
