"""Optimal-control solutions as Trials (for HDF5 stores, C3D files and the stick viewer).

:mod:`ahbm.optimize` sits below :mod:`ahbm.io` in the layer order, so its
result object (:class:`~ahbm.optimize.OptimalControlResult`) holds plain
arrays; :func:`trial_from_solution` turns it into a :class:`~ahbm.io.Trial`
that :func:`~ahbm.io.save_trial` stores and
:func:`~ahbm.graphics.stick_view` draws.
"""

from __future__ import annotations

import numpy as np

from ahbm._internal.validation import as_positive_float
from ahbm.errors import DataError
from ahbm.io.trial import Trial

__all__ = ["trial_from_solution"]

# muscle outputs kept as analog channels: key of the result -> (channel suffix, unit, description)
_MUSCLE_CHANNELS = {
    "activations": ("activation", "", "muscle activation (0-1)"),
    "excitations": ("excitation", "", "muscle excitation (0-1)"),
    "forces": ("force", "N", "muscle-tendon force"),
    "lengths": ("length", "m", "muscle-tendon length"),
    "speeds": ("speed", "m/s", "muscle-tendon lengthening speed"),
    "tendon_force_rates": ("tendon_force_rate", "1/s", "rate of the normalized tendon force"),
}


def trial_from_solution(result, *, rate: float = 100.0) -> Trial:
    """A Trial of an optimal-control solution, resampled at a uniform rate.

    Parameters
    ----------
    result : OptimalControlResult
        From :func:`ahbm.optimize.solve`.
    rate : float, optional
        Sample rate of the trial, Hz (linear interpolation of the grid).

    Returns
    -------
    Trial
        ``points``: the model's markers along the motion (m, at `rate`);
        ``results``: ``time`` (s), ``q`` (rad, m), ``qd``, ``tau`` (N m, N),
        ``grf`` (N, total ground reaction), ``cost_terms`` (one value each);
        ``parameters["OPTIMAL_CONTROL"]``: coordinate names, status, cost,
        iterations, method, solver, phase names and durations.
        With muscle-driven phases (:class:`~ahbm.optimize.MuscleDrivenPhase`)
        also: ``analogs`` at `rate` with the channels ``"<muscle>.activation"``,
        ``".excitation"`` (unitless, 0–1), ``".force"`` (N), ``".length"`` (m),
        ``".speed"`` (m/s) (and ``".tendon_force_rate"``, 1/s, with elastic
        tendons), their units in ``analog_units``; ``results["muscle_torques"]``
        and ``results["reserves"]`` (N m, per coordinate); the muscle names in
        ``parameters["OPTIMAL_CONTROL"]["MUSCLES"]``. NaN where a phase has
        no muscles.

    Raises
    ------
    DataError
        `result` is not an optimal-control result.

    Examples
    --------
    >>> from ahbm.kinematics.tree import Model
    >>> from ahbm.optimize import Phase, Effort, solve
    >>> m = Model(gravity=(0, 0, 0))
    >>> _ = m.add_body("mass", "ground", {"type": "prismatic", "axis": [1, 0, 0]},
    ...                mass=1.0, markers={"M": [0, 0, 0]})
    >>> ph = Phase(m, nodes=11, duration=1.0, objectives=[Effort()],
    ...            initial={"q": [0.0], "qd": [0.0]}, final={"q": [1.0], "qd": [0.0]})
    >>> trial = trial_from_solution(solve(ph, verbose=False), rate=50.0)
    >>> trial.points.shape, trial.point_labels
    ((51, 1, 3), ['M'])
    """
    for attr in ("resample", "markers", "coordinate_names", "cost_terms"):
        if not hasattr(result, attr):
            raise DataError(
                f"`result` must be an OptimalControlResult from ahbm.optimize.solve, got "
                f"{type(result).__name__} (no {attr!r})"
            )
    rate = as_positive_float(rate, "rate", unit="Hz")
    r = result.resample(rate)
    _, points, labels = result.markers(rate)
    results = {
        "time": r["t"],
        "q": r["q"],
        "qd": r["qd"],
        "tau": r["tau"],
        "grf": r["grf"],
        "cost_terms": {k: np.array([v]) for k, v in result.cost_terms.items()},
    }
    info = {
        "COORDINATES": list(result.coordinate_names),
        "STATUS": str(result.status),
        "SUCCESS": int(bool(result.success)),
        "COST": float(result.cost),
        "ITERATIONS": int(result.iterations),
        "METHOD": str(result.method),
        "SOLVER": str(result.solver),
        "PHASES": [p.name for p in result.phases],
        "DURATIONS": [float(p.duration) for p in result.phases],
    }
    analogs = {}
    if r.get("muscle_names"):
        info["MUSCLES"] = list(r["muscle_names"])
        mus = r["muscles"]
        cols, labels_a, units, descr = [], [], [], []
        for key, (suffix, unit, what) in _MUSCLE_CHANNELS.items():
            if key in mus:
                cols.append(mus[key])
                labels_a += [f"{m}.{suffix}" for m in r["muscle_names"]]
                units += [unit] * len(r["muscle_names"])
                descr += [f"{what}, {m}" for m in r["muscle_names"]]
        for key in ("muscle_torques", "reserves"):
            if key in mus:
                results[key] = mus[key]
        analogs = dict(analogs=np.concatenate(cols, axis=1), analog_labels=labels_a,
                       analog_units=units, analog_descriptions=descr, analog_rate=rate)  # fmt: skip
    return Trial(
        points=points,
        point_labels=list(labels),
        point_rate=rate,
        results=results,
        parameters={"OPTIMAL_CONTROL": info},
        source="",
        **analogs,
    )
