"""Detect and fill gaps (runs of missing samples) in marker trajectories.

A *gap* is a run of consecutive frames where a marker (or a channel) is
NaN. Gaps are filled only between valid samples (interpolation, never
extrapolation in time) and only up to a maximum length; every gap appears
in the returned report with what was done to it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ahbm._internal.validation import as_float_array, as_int, sample_times
from ahbm.analysis._common import nan_runs
from ahbm.analysis._labelled import accepts_labelled
from ahbm.errors import DataError

__all__ = ["Gap", "GapFill", "find_gaps", "fill_gaps", "fill_gaps_rigid"]


@dataclass(frozen=True)
class Gap:
    """A run of missing frames in one channel or marker.

    Attributes
    ----------
    channel : int
        Marker (or channel) index.
    start, stop : int
        First missing frame and one past the last missing frame.
    leading, trailing : bool
        True if the gap touches the first / last frame (cannot be
        interpolated in time).
    """

    channel: int
    start: int
    stop: int
    leading: bool
    trailing: bool

    @property
    def length(self) -> int:
        """Number of missing frames."""
        return self.stop - self.start


@dataclass(frozen=True)
class GapFill:
    """What a gap filler did with one gap.

    Attributes
    ----------
    label : str
        Marker label (or ``"channel <i>"``).
    start, stop : int
        Frame range of the gap (stop exclusive).
    method : str
        ``"spline"``, ``"linear"``, ``"rigid"`` or ``"none"``.
    filled : bool
        True if every frame of the gap now has a value.
    reason : str
        Why a gap was not (fully) filled; empty when filled.
    """

    label: str
    start: int
    stop: int
    method: str
    filled: bool
    reason: str = ""


def _as_channels(x, name: str) -> tuple[np.ndarray, np.ndarray, bool]:
    """Return (array, missing mask (n_frames, n_channels), is_marker_array)."""
    arr = as_float_array(x, name, allow_nan=True)
    if arr.ndim == 3 and arr.shape[-1] == 3:
        return arr, ~np.isfinite(arr).all(axis=-1), True
    if arr.ndim == 1:
        return arr, ~np.isfinite(arr)[:, None], False
    if arr.ndim == 2:
        return arr, ~np.isfinite(arr), False
    raise DataError(
        f"Expected `{name}` with shape (n_frames,), (n_frames, n_channels) or "
        f"(n_frames, n_markers, 3), got {arr.shape}"
    )


def find_gaps(x) -> list[Gap]:
    """List the runs of missing samples.

    Parameters
    ----------
    x : array_like, shape (n_frames,), (n_frames, n_channels) or (n_frames, n_markers, 3)
        Data with NaN for missing samples. For a marker array a frame is
        missing if any coordinate is NaN.

    Returns
    -------
    list of Gap
        Sorted by channel, then start frame.

    Examples
    --------
    >>> import numpy as np
    >>> find_gaps([0.0, np.nan, np.nan, 3.0])[0].length
    2
    """
    arr, missing, _ = _as_channels(x, "x")
    n = missing.shape[0]
    gaps = []
    for j in range(missing.shape[1]):
        for a, b in nan_runs(missing[:, j]):
            gaps.append(Gap(j, a, b, a == 0, b == n))
    return gaps


def _check_labels(labels, n: int):
    """None or a list of `n` labels (str), else DataError naming `labels`."""
    if labels is None:
        return None
    if isinstance(labels, (str, bytes, dict)) or not hasattr(labels, "__len__"):
        raise DataError(f"Expected `labels` to be a list of {n} str, got {type(labels).__name__}")
    labels = list(labels)
    if len(labels) != n:
        raise DataError(f"`labels` has {len(labels)} entries for {n} channels")
    return labels


def _label(labels, j: int) -> str:
    if labels is None:
        return f"channel {j}"
    return str(labels[j])


@accepts_labelled("fill")
def fill_gaps(
    x,
    *,
    max_gap: int,
    method: str = "spline",
    rate=None,
    time=None,
    labels=None,
    on_long_gap: str = "raise",
):
    """Fill interior gaps by cubic-spline or linear interpolation in time.

    Parameters
    ----------
    x : array_like or Trial, shape (n_frames,), (n_frames, n_channels) or (n_frames, n_markers, 3)
        Data with NaN for missing samples (m for markers).
        A :class:`~ahbm.io.Trial` instead gives ``(filled Trial, report)``, the
        report naming the trial's labels (see :mod:`ahbm.analysis`).
    max_gap : int
        Longest gap (in frames) that may be filled.
    method : {"spline", "linear"}
        Cubic spline through all valid samples of the channel (natural end
        conditions) or straight line between the two samples bounding the gap.
    rate : float, optional
        Frame rate, Hz.
    time : array_like, shape (n_frames,), optional
        Frame times, s. Give at most one of `rate` and `time`; with neither,
        the spline runs over the frame index (the same fill as any uniform
        rate).
    labels : list of str, optional
        Marker/channel labels used in the report and in error messages.
    on_long_gap : {"raise", "skip"}
        What to do with a gap longer than `max_gap`: raise a DataError naming
        it (default) or leave it NaN and report it.

    Returns
    -------
    filled : ndarray
        Copy of `x` with the gaps filled.
    report : list of GapFill
        One entry per gap. Gaps at the start or end of the recording are
        never filled (that would be extrapolation) and are reported as such.

    Raises
    ------
    DataError
        A gap longer than `max_gap` with ``on_long_gap="raise"``, too few
        valid samples to interpolate, or a `max_gap` that is not an integer
        >= 1 (NaN, text, ...).

    Notes
    -----
    An empty `x` has no gaps: it is returned (as a copy) with an empty report.
    The spline is the natural cubic interpolating spline through every valid
    sample of the channel, evaluated at the missing frames; it reproduces
    smooth trajectories with an error that shrinks as ``h^4`` inside short
    gaps.

    Examples
    --------
    >>> import numpy as np
    >>> y, rep = fill_gaps([0.0, 1.0, np.nan, 3.0, 4.0], max_gap=2, method="linear")
    >>> y[2], rep[0].filled
    (np.float64(2.0), True)
    """
    from scipy import interpolate

    arr, missing, _ = _as_channels(x, "x")
    if method not in ("spline", "linear"):
        raise DataError(f"Unknown `method` {method!r}; use 'spline' or 'linear'")
    if on_long_gap not in ("raise", "skip"):
        raise DataError(f"Unknown `on_long_gap` {on_long_gap!r}; use 'raise' or 'skip'")
    max_gap = as_int(max_gap, "max_gap", minimum=1)
    n = missing.shape[0]
    t = sample_times(n, rate=rate, time=time, required=False)
    labels = _check_labels(labels, missing.shape[1])
    if labels is not None and len(labels) != missing.shape[1]:
        raise DataError(f"`labels` has {len(labels)} entries for {missing.shape[1]} channels")
    out = arr.copy()
    if out.size == 0:  # nothing to fill: an empty signal has no gaps
        return out, []
    data = out.reshape(n, missing.shape[1], -1)  # view: (n, channels, coords)
    report: list[GapFill] = []
    gaps = find_gaps(arr)
    for g in gaps:
        if g.length > max_gap and not (g.leading or g.trailing) and on_long_gap == "raise":
            raise DataError(
                f"Gap in {_label(labels, g.channel)} at frames {g.start}-{g.stop - 1} is "
                f"{g.length} frames long, more than max_gap={max_gap}; raise `max_gap`, pass "
                "on_long_gap='skip' to leave it unfilled, or use fill_gaps_rigid"
            )
    for j in range(missing.shape[1]):
        cg = [g for g in gaps if g.channel == j]
        if not cg:
            continue
        ok = ~missing[:, j]
        todo = []
        for g in cg:
            lab = _label(labels, j)
            if g.leading or g.trailing:
                report.append(
                    GapFill(
                        lab,
                        g.start,
                        g.stop,
                        "none",
                        False,
                        "gap at the edge of the recording; not extrapolated",
                    )
                )
            elif g.length > max_gap:
                report.append(
                    GapFill(lab, g.start, g.stop, "none", False, f"longer than max_gap={max_gap}")
                )
            else:
                todo.append(g)
        if not todo:
            continue
        need = 4 if method == "spline" else 2
        if ok.sum() < need:
            raise DataError(
                f"{_label(labels, j)} has only {int(ok.sum())} valid frames; {method} "
                f"interpolation needs {need}"
            )
        idx = np.concatenate([np.arange(g.start, g.stop) for g in todo])
        if method == "spline":
            spl = interpolate.CubicSpline(t[ok], data[ok, j, :], axis=0, bc_type="natural")
            data[idx, j, :] = spl(t[idx])
        else:
            for c in range(data.shape[2]):
                data[idx, j, c] = np.interp(t[idx], t[ok], data[ok, j, c])
        for g in todo:
            report.append(GapFill(_label(labels, j), g.start, g.stop, method, True))
    report.sort(key=lambda r: (r.label, r.start))
    return out, report


def _technical_frame(p1, p2, p3):
    """Rotation (n, 3, 3) whose columns are the axes built from three markers."""
    e1 = p2 - p1
    e1 = e1 / np.linalg.norm(e1, axis=-1, keepdims=True)
    e3 = np.cross(e1, p3 - p1)
    e3 = e3 / np.linalg.norm(e3, axis=-1, keepdims=True)
    e2 = np.cross(e3, e1)
    return np.stack([e1, e2, e3], axis=-1)


@accepts_labelled("fill")
def fill_gaps_rigid(points, target, donors, *, max_gap: int, labels=None, on_long_gap="raise"):
    """Fill a marker's gaps from three other markers on the same rigid segment.

    Parameters
    ----------
    points : array_like, shape (n_frames, n_markers, 3), or Trial
        Marker trajectories, m, NaN where missing. A :class:`~ahbm.io.Trial`
        gives ``(filled Trial, report)``; `target` and `donors` may then be
        its labels.
    target : int or str
        Marker to fill (index, or label if `labels` is given).
    donors : sequence of 3 int or str
        Three non-collinear markers on the same segment.
    max_gap : int
        Longest gap (frames) that may be filled.
    labels : list of str, optional
        Marker labels (needed to pass names).
    on_long_gap : {"raise", "skip"}
        As in :func:`fill_gaps`.

    Returns
    -------
    filled : ndarray, shape (n_frames, n_markers, 3)
        Copy of `points` with the target's gaps filled where all donors are
        visible.
    report : list of GapFill
        One entry per gap of the target.

    Notes
    -----
    A technical frame ``R = [e1 e2 e3]`` with origin at donor 1 is built from
    the donors in every frame (``e1`` towards donor 2, ``e3`` normal to the
    donor plane). The target's local coordinates ``l = R^T (p - o)`` are
    taken from the last valid frame before and the first valid frame after
    the gap and interpolated linearly across it (the nearest one for a gap at
    the start or end of the recording), then ``p = o + R l``. For a truly
    rigid cluster the reconstruction is exact.

    Examples
    --------
    >>> import numpy as np
    >>> p = np.array([[[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 1]]] * 5, float)
    >>> p[2, 3] = np.nan
    >>> filled, rep = fill_gaps_rigid(p, 3, (0, 1, 2), max_gap=3)
    >>> filled[2, 3].tolist(), rep[0].method
    ([1.0, 1.0, 1.0], 'rigid')
    """
    arr = as_float_array(points, "points", allow_nan=True)
    if arr.ndim != 3 or arr.shape[-1] != 3:
        raise DataError(
            f"Expected `points` to have shape (n_frames, n_markers, 3), got {arr.shape}"
        )

    def index(m, what):
        if isinstance(m, str):
            if labels is None or m not in labels:
                raise DataError(f"{what} marker {m!r} not found; pass `labels` containing it")
            return list(labels).index(m)
        i = as_int(m, what)
        if not 0 <= i < arr.shape[1]:
            raise DataError(f"{what} marker index {i} out of range for {arr.shape[1]} markers")
        return i

    labels = _check_labels(labels, arr.shape[1])
    ti = index(target, "target")
    if isinstance(donors, (str, bytes, dict)) or not hasattr(donors, "__len__"):
        raise DataError(f"Expected `donors` to be 3 marker labels or indices, got {donors!r}")
    if len(donors) != 3:
        raise DataError(f"`donors` must name exactly 3 markers, got {len(donors)}")
    di = [index(d, "donor") for d in donors]
    if ti in di or len(set(di)) != 3:
        raise DataError("`donors` must be 3 distinct markers other than `target`")
    max_gap = as_int(max_gap, "max_gap", minimum=1)
    lab = _label(labels, ti)
    ok = np.isfinite(arr).all(axis=-1)
    donors_ok = ok[:, di].all(axis=1)
    ref = ok[:, ti] & donors_ok
    if not ref.any():
        raise DataError(
            f"No frame has {lab} and all three donors visible; cannot learn the target's "
            "position on the segment"
        )
    rot = np.full((arr.shape[0], 3, 3), np.nan)
    rot[donors_ok] = _technical_frame(*(arr[donors_ok][:, d] for d in di))
    local = np.full((arr.shape[0], 3), np.nan)
    local[ref] = np.einsum("nji,nj->ni", rot[ref], arr[ref, ti] - arr[ref, di[0]])
    ref_idx = np.flatnonzero(ref)
    out = arr.copy()
    report = []
    for a, b in nan_runs(~ok[:, ti]):
        if b - a > max_gap:
            if on_long_gap == "raise":
                raise DataError(
                    f"Gap in {lab} at frames {a}-{b - 1} is {b - a} frames long, more than "
                    f"max_gap={max_gap}; raise `max_gap` or pass on_long_gap='skip'"
                )
            report.append(GapFill(lab, a, b, "none", False, f"longer than max_gap={max_gap}"))
            continue
        before = ref_idx[ref_idx < a]
        after = ref_idx[ref_idx >= b]
        frames = np.arange(a, b)
        if before.size and after.size:
            i0, i1 = before[-1], after[0]
            w = ((frames - i0) / (i1 - i0))[:, None]
            loc = (1 - w) * local[i0] + w * local[i1]
        else:
            loc = np.broadcast_to(local[before[-1] if before.size else after[0]], (b - a, 3))
        vis = donors_ok[frames]
        f = frames[vis]
        out[f, ti] = arr[f, di[0]] + np.einsum("nij,nj->ni", rot[f], loc[vis])
        if vis.all():
            report.append(GapFill(lab, a, b, "rigid", True))
        else:
            report.append(
                GapFill(
                    lab,
                    a,
                    b,
                    "rigid",
                    False,
                    f"{int((~vis).sum())} frames without all three donors left NaN",
                )
            )
    return out, report
