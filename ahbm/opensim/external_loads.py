"""OpenSim's external loads on an ahbm model: ``f_ext`` for :func:`ahbm.dynamics.rnea`.

:func:`external_loads_f_ext` reads each enabled ``ExternalForce`` of an
external-loads description (:func:`~ahbm.opensim.setup_files.read_external_loads`)
from its data file by its identifiers (the three columns whose labels start
with the identifier), interpolates it in time as OpenSim does (a natural cubic
spline through the samples, linear for two or three samples, constant for
one), rotates its force and torque from ``force_expressed_in_body`` to the
ground and transforms its point from ``point_expressed_in_body`` (the applied
body's origin without a point identifier); the result acts on
``applied_to_body``. Used by :mod:`ahbm.opensim.id_tool` and
:mod:`ahbm.opensim.so_tool`.
"""

from __future__ import annotations

from pathlib import Path  # noqa: F401  (the doctest's ExternalLoads path)

import numpy as np

from ahbm._engine import backend
from ahbm._engine.arrays import cross
from ahbm.errors import DataError, ModelError
from ahbm.io.opensim_table import OpenSimTable
from ahbm.io.trc import first_beyond
from ahbm.kinematics.forward import forward_kinematics
from ahbm.kinematics.tree import Model
from ahbm.opensim._plausibility import (
    MAX_FORCE,
    MAX_POINT,
    MAX_TORQUE,
    _check_times,
    _implausible,
)
from ahbm.opensim.setup_files import ExternalLoads

__all__ = ["external_loads_f_ext"]

#: Rows and values of the natural cubic spline's system up to which a short command that
#: has not loaded numba solves it in numpy (see :mod:`ahbm._engine.backend`; loading
#: numba costs such a command about 0.55 s), measured: the numpy ``dptsv`` costs ~2.8 µs
#: a row, the spline ~15 ns a value, so at most ~90 ms here (subject01's walking GRF,
#: 1 501 rows × 18 columns at 151 frames: ~4.5 ms).
_CUBIC_NUMPY_ROWS = 20_000
_CUBIC_NUMPY_VALUES = 2_000_000


def _small_cubic(n_rows: int, n_cols: int) -> bool:
    return n_rows <= _CUBIC_NUMPY_ROWS and n_rows * n_cols <= _CUBIC_NUMPY_VALUES


# The three steps of the natural cubic spline: the compiled kernels of
# ahbm._engine.jit_banded (imported when they run: loading numba costs a short command
# ~0.6 s) or their numpy codings, which give the same bits (tested).


def _natural_cubic_system_numpy(h: np.ndarray, y: np.ndarray):
    """:func:`ahbm._engine.jit_banded.natural_cubic_system` in numpy (its formulas, bitwise)."""
    return (
        2.0 * (h[:-1] + h[1:]),
        h[1:-1].copy(),
        6.0 * np.diff(np.diff(y, axis=0) / h[:, None], axis=0),
    )


def _ptsv_numpy(d: np.ndarray, e: np.ndarray, b: np.ndarray):
    """:func:`ahbm._engine.jit_banded.ptsv` in numpy: ``(info, x)``, bitwise the kernel's.

    ``dpttrf`` on Python floats (the same double roundings), then ``dptts2``'s
    substitutions row after row, the right-hand sides side by side, each
    operation the kernel's in its order.
    """
    n = d.shape[0]
    x = np.array(b, dtype=float)
    if n == 0:
        return 0, x
    if e.shape[0] != n - 1 or x.shape[0] != n:
        return -1, x
    dl, el = d.tolist(), e.tolist()
    for i in range(n - 1):  # dpttrf
        if dl[i] <= 0.0:
            return i + 1, x
        ei = el[i]
        el[i] = ei / dl[i]
        dl[i + 1] = dl[i + 1] - el[i] * ei
    if dl[n - 1] <= 0.0:
        return n, x
    if n == 1:  # dscal by 1 / d
        x[0] = (1.0 / dl[0]) * x[0]
        return 0, x
    for i in range(1, n):  # L x = b
        x[i] -= x[i - 1] * el[i - 1]
    x[n - 1] /= dl[n - 1]  # D Lᵀ x = b
    for i in range(n - 2, -1, -1):
        x[i] = x[i] / dl[i] - x[i + 1] * el[i]
    return 0, x


def _natural_cubic_values_numpy(M, y, h, k, a, b, a3, b3) -> np.ndarray:
    """:func:`ahbm._engine.jit_banded.natural_cubic_values` in numpy (its formulas, bitwise)."""
    hk, ac, bc = h[k][:, None], a[:, None], b[:, None]
    a3c, b3c = a3[:, None], b3[:, None]
    m0, m1 = M[k], M[k + 1]
    return (
        (m0 * a3c + m1 * b3c) / (6.0 * hk)
        + (y[k] / hk - m0 * hk / 6.0) * ac
        + (y[k + 1] / hk - m1 * hk / 6.0) * bc
    )


def natural_cubic_system(h: np.ndarray, y: np.ndarray):
    """``(d, e, rhs)`` of the spline's second derivatives (y (n, m), C-ordered)."""
    if backend.use_compiled(_small_cubic(*y.shape)):
        from ahbm._engine.jit_banded import natural_cubic_system as kernel

        return kernel(h, y)
    return _natural_cubic_system_numpy(h, y)


def ptsv(d: np.ndarray, e: np.ndarray, b: np.ndarray):
    """``(info, x)`` of the SPD tridiagonal solve (LAPACK's ``dptsv``), b (n, m) C-ordered."""
    if backend.use_compiled(_small_cubic(*b.shape)):
        from ahbm._engine.jit_banded import ptsv as kernel

        return kernel(d, e, b)
    return _ptsv_numpy(d, e, b)


def natural_cubic_values(M, y, h, k, a, b, a3, b3) -> np.ndarray:
    """The spline at the points of intervals `k` (p,): (p, m)."""
    if backend.use_compiled(_small_cubic(*y.shape)):
        from ahbm._engine.jit_banded import natural_cubic_values as kernel

        return kernel(M, y, h, k, a, b, a3, b3)
    return _natural_cubic_values_numpy(M, y, h, k, a, b, a3, b3)


def _identifier_columns(
    table: OpenSimTable, identifier: str, what: str, force: str, labels: list | None = None
) -> list:
    """The 3 columns starting with `identifier` (`labels`: ``table.columns`` if known).

    A repeated label among them is refused, as OpenSim's ExternalForce refuses
    it ("3 unique force components could not be found"; measured with OpenSim
    4.6, whichever of the two comes first).
    """
    cols = [c for c in (table.columns if labels is None else labels) if c.startswith(identifier)]
    repeated = sorted({c for c in cols if cols.count(c) > 1})  # (a handful of columns)
    if repeated:
        raise DataError(
            f"ExternalForce '{force}': the {what} column(s) {repeated} of its identifier "
            f"'{identifier}' appear more than once in '{table.source or table.name}'; OpenSim "
            "refuses such a file too: keep one column of each label (or rename the others)"
        )
    if len(cols) != 3:
        raise DataError(
            f"ExternalForce '{force}': the {what} identifier '{identifier}' matches {len(cols)} "
            f"column(s) of '{table.source or table.name}' ({cols}); OpenSim needs exactly 3 "
            "columns starting with it"
        )
    return cols


def _time_function(t_data: np.ndarray, y: np.ndarray, t: np.ndarray) -> np.ndarray:
    """OpenSim's ExternalForce interpolation: constant, linear (2-3 samples), natural cubic."""
    n = t_data.shape[0]
    if n == 1:
        return np.broadcast_to(y[0], (t.shape[0], y.shape[1])).copy()
    if n <= 3:
        return np.stack([np.interp(t, t_data, y[:, k]) for k in range(y.shape[1])], axis=1)
    return _natural_cubic(t_data, y, t)


def _natural_cubic(x: np.ndarray, y: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Natural cubic interpolating spline of the columns of `y` (n, m) at `t` (k,).

    The spline of ``scipy.interpolate.CubicSpline(x, y, bc_type="natural")``
    (second derivatives ``M`` from the tridiagonal system, zero at the ends),
    without its piecewise-polynomial object; outside `x` the end pieces'
    cubics continue, as CubicSpline extrapolates.
    """
    if x.shape[0] < 2 or y.shape[0] != x.shape[0]:
        raise DataError(
            f"a natural cubic spline needs at least 2 samples with one row of values each, got "
            f"{x.shape[0]} times and {y.shape[0]} rows"
        )
    h = np.diff(x)
    if not np.all(h > 0):
        raise DataError(
            "the external loads data need strictly increasing times; the time column has "
            f"{int(np.sum(~(h > 0)))} step(s) that are not positive"
        )
    n = x.shape[0]
    M = np.zeros((n, y.shape[1]))
    # the system is symmetric positive definite (diagonal d = 2 (h_i + h_i+1), off-diagonal
    # e = h_i+1 > 0): LAPACK's tridiagonal L D Lᵀ solver (dptsv's operations, compiled or in
    # numpy, all columns side by side)
    y = np.ascontiguousarray(y, dtype=float)
    d, e, rhs = natural_cubic_system(h, y)
    info, sol = ptsv(d, e, rhs)  # (2 samples: no interior point, M = 0, a straight line)
    if info != 0:  # not reached for increasing finite times; the banded LU as before
        from scipy import linalg

        ab = np.zeros((3, n - 2))
        ab[0, 1:] = e
        ab[1] = d
        ab[2, :-1] = e
        sol = linalg.solve_banded((1, 1), ab, rhs, check_finite=False)
    M[1:-1] = sol
    k = np.clip(np.searchsorted(x, t, side="right") - 1, 0, n - 2)
    a = x[k + 1] - t
    b = t - x[k]
    # (M[k] a³ + M[k+1] b³) / (6 h_k) + (y[k] / h_k - M[k] h_k / 6) a
    #   + (y[k+1] / h_k - M[k+1] h_k / 6) b, numpy's operations (compiled or not; the cubes numpy's)
    a3, b3 = a[:, None] ** 3, b[:, None] ** 3  # (the cubes as the array expression took them)
    return natural_cubic_values(M, y, h, k, a, b, a3[:, 0], b3[:, 0])


_LOAD_BOUNDS = {
    "force": ("force", MAX_FORCE, "N"),
    "point": ("point of application", MAX_POINT, "m"),
    "torque": ("torque", MAX_TORQUE, "N m"),
}


def _check_loads(y: np.ndarray, columns: list, plan: list, time: np.ndarray, source: str):
    """DataError for a missing or implausible force, point or torque of the loads' columns."""
    kinds = [""] * len(columns)
    for _spec, slots in plan:
        for what, start in slots.items():
            kinds[start : start + 3] = [what] * 3
    for what, (kind, limit, unit) in _LOAD_BOUNDS.items():
        cols = [k for k, w in enumerate(kinds) if w == what]
        if not cols:
            continue
        where = first_beyond(y[:, cols], limit, missing_ok=False)
        if where is not None:
            row, k = where[0], cols[where[1]]
            raise _implausible(
                f"{kind} of an external load", limit, unit, "external loads data file", source,
                columns[k], row,
                time[row], float(y[row, k]),
            )  # fmt: skip


def _frame_pose(model: Model, kin, name: str, what: str):
    """(R (N,3,3), p (N,3)) of a named body, identity/zero for the ground."""
    if name.lower() == "ground":
        return None, None
    try:
        b = model.body_index(name)
    except ModelError as err:
        raise ModelError(
            f"the external loads name body '{name}' ({what}), which model '{model.name}' "
            f"does not have; bodies: {model.body_names}"
        ) from err
    return kin.rotations[:, b], kin.positions[:, b]


def external_loads_f_ext(model: Model, q, time, loads: ExternalLoads, data: OpenSimTable, *,
                         kin=None) -> np.ndarray:  # fmt: skip
    """World spatial forces on the model's bodies from an OpenSim external-loads description.

    Parameters
    ----------
    model : Model
    q : array_like, shape (n_frames, nq)
        Coordinates at the frames (for the frames that forces and points are
        expressed in); may be None when `kin` is given.
    time : array_like, shape (n_frames,)
        Times of the frames, s (the data are interpolated there).
    loads : ExternalLoads
        From :func:`~ahbm.opensim.setup_files.read_external_loads`.
    data : OpenSimTable
        The loads' data file (:func:`ahbm.opensim.read_mot`), forces in N, points in
        m, torques in N m.
    kin : Kinematics, optional
        ``forward_kinematics(model, q)`` when already computed.

    Returns
    -------
    f_ext : ndarray, shape (n_frames, n_bodies, 6)
        ``[r × F + T; F]`` on each applied body (world axes, moment about the
        world origin): the ``f_ext`` of :func:`ahbm.dynamics.rnea` with
        ``f_ext_frame="world"``. Forces on the same body add up.

    Raises
    ------
    DataError
        An identifier that does not match exactly three columns or matches a
        repeated column label (OpenSim refuses both), times outside the data,
        non-finite data.
    ModelError
        A body name the model does not have.

    Notes
    -----
    OpenSim's ``ExternalForce::computeForce``: ``F_G = R_F F``, ``T_G = R_F T``
    with ``R_F`` the orientation of ``force_expressed_in_body``; the point
    ``p`` is in ``point_expressed_in_body`` (world point ``o_P + R_P p``), the
    applied body's origin when no point is given. Time functions: natural
    cubic interpolating spline (``GCVSpline`` of degree 3 with zero error
    variance), piecewise linear for 2-3 samples, constant for one.

    Examples
    --------
    >>> import pandas as pd
    >>> from ahbm.opensim.setup_files import ExternalForceSpec
    >>> m = Model()
    >>> _ = m.add_body("foot", "ground", {"type": "prismatic", "axis": [0, 0, 1]}, mass=1.0)
    >>> df = pd.DataFrame([[0, 0, 10.0, 0.5, 0, 0], [0, 0, 10.0, 0.5, 0, 0]],
    ...     columns=[f"f_{k}{a}" for k in "vp" for a in "xyz"], index=pd.Index([0.0, 1.0]))
    >>> loads = ExternalLoads(Path("x.xml"), forces=(ExternalForceSpec(
    ...     "f", "foot", force_identifier="f_v", point_identifier="f_p"),))
    >>> external_loads_f_ext(m, [[0.0]], [0.5], loads, OpenSimTable(df))[0, 0].tolist()
    [0.0, -5.0, 0.0, 0.0, 0.0, 10.0]
    """
    t = np.asarray(time, dtype=float).reshape(-1)
    if kin is None:
        kin = forward_kinematics(model, np.asarray(q, dtype=float).reshape(t.shape[0], -1))
    N = t.shape[0]
    f_ext = np.zeros((N, model.n_bodies, 6))
    t_data = data.time
    source = data.source or data.name or "external loads data"
    if loads.forces:
        _check_times(t_data, source, "external loads data file")
    # a little outside is fine (OpenSim's processed times may start 1e-7 s early):
    # the splines extrapolate over at most one sample interval of the data
    slack = float(np.min(np.diff(t_data))) if t_data.shape[0] > 1 else 0.0
    if loads.forces and (t.size and (t.min() < t_data[0] - slack or t.max() > t_data[-1] + slack)):
        raise DataError(
            f"the external loads data '{data.source}' cover {t_data[0]} to {t_data[-1]} s but the "
            f"coordinates need {t.min()} to {t.max()} s; shorten the time range"
        )
    # every column needed, interpolated in one call
    plan, columns = [], []
    labels = data.columns
    for spec in loads.forces:
        if spec.applied_to_body.lower() == "ground":
            raise ModelError(
                f"ExternalForce '{spec.name}' is applied to the ground; apply it to a body"
            )
        _frame_pose(model, kin, spec.applied_to_body, "applied_to_body")  # known body?
        slots = {}
        for what, identifier in (
            ("force", spec.force_identifier),
            ("point", spec.point_identifier if spec.force_identifier else ""),
            ("torque", spec.torque_identifier),
        ):
            if identifier:
                slots[what] = len(columns)
                columns.extend(_identifier_columns(data, identifier, what, spec.name, labels))
        plan.append((spec, slots))
    if not plan:
        return f_ext
    position = {c: k for k, c in enumerate(labels)}
    # (the numbers, not the DataFrame: a table read from a file builds that with pandas)
    y = np.asarray(data.values, dtype=float)[:, [position[c] for c in columns]]
    _check_loads(y, columns, plan, t_data, source)
    values = _time_function(t_data, y, t)
    for spec, slots in plan:
        b = model.body_index(spec.applied_to_body)
        R_f, _ = _frame_pose(model, kin, spec.force_expressed_in_body, "force_expressed_in_body")
        wrench = np.zeros((N, 6))
        if "force" in slots:
            F = values[:, slots["force"] : slots["force"] + 3]
            if R_f is not None:
                F = np.einsum("nij,nj->ni", R_f, F)
            if "point" in slots:
                p = values[:, slots["point"] : slots["point"] + 3]
                R_p, o_p = _frame_pose(
                    model, kin, spec.point_expressed_in_body, "point_expressed_in_body"
                )
                if R_p is not None:
                    p = o_p + np.einsum("nij,nj->ni", R_p, p)
            else:
                p = kin.positions[:, b]
            wrench[:, :3] += cross(p, F)
            wrench[:, 3:] += F
        if "torque" in slots:
            T = values[:, slots["torque"] : slots["torque"] + 3]
            if R_f is not None:
                T = np.einsum("nij,nj->ni", R_f, T)
            wrench[:, :3] += T
        f_ext[:, b] += wrench
    return f_ext
