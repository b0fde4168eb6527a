"""Results of optimal-control problems: states, controls, ground reactions, cost terms.

:class:`OptimalControlResult` holds plain arrays with names and SI units (the
``optimize`` layer does not import :mod:`ahbm.io` or :mod:`ahbm.graphics`):

- save it to an HDF5 trial store with ``ahbm.io.save_trial(ahbm.io.trial_from_solution(r), path)``
  (model markers as points, everything else under ``trial.results``);
- view it with ``ahbm.graphics.stick_view(model=r.model, q=r.resample(100)["q"], rate=100)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ahbm._internal.validation import as_positive_float
from ahbm.kinematics.forward import point_position
from ahbm.types import ResultRepr

__all__ = ["PhaseResult", "OptimalControlResult"]


@dataclass(frozen=True, repr=False)
class PhaseResult(ResultRepr):
    """The solution of one phase at its grid points.

    Attributes
    ----------
    name : str
    t : ndarray, shape (n,)
        Times from the start of the problem, s.
    q, qd, qdd, tau : ndarray, shape (n, nv)
        Coordinates (rad, m), velocities, accelerations, joint torques (N m, N).
    forces : dict
        Contact name -> ground force on the point, shape (n, 3), world frame, N.
    duration : float
        s.
    parameters : dict
        Parameter name -> value (contact anchors, m; peak torque, N m).
    muscles : dict
        Muscle-driven phases (:class:`~ahbm.optimize.MuscleDrivenPhase`): activations,
        excitations, forces, moment arms, muscle torques and reserves
        (:meth:`~ahbm.optimize.MuscleDrivenPhase.muscle_outputs`); ``tau`` is then
        ``Rᵀ F + τ_reserve``. Empty otherwise.
    """

    name: str
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    forces: dict
    duration: float
    parameters: dict
    muscles: dict = field(default_factory=dict)

    @property
    def grf(self) -> np.ndarray:
        """Total ground reaction force of the phase's contacts, shape (n, 3), N."""
        if not self.forces:
            return np.zeros((self.t.size, 3))
        return sum(self.forces.values())


@dataclass(frozen=True, repr=False)
class OptimalControlResult(ResultRepr):
    """What :func:`ahbm.optimize.solve` returns.

    Attributes
    ----------
    status : str
        The solver's status (IPOPT's ``return_status`` or scipy's message).
    success : bool
        Converged to a point that satisfies the constraints.
    cost : float
        Objective value.
    cost_terms : dict
        Value of each objective term (name -> float).
    iterations : int
    wall_time : float
        Seconds spent in the solver (the transcription excluded).
    constraint_violation : float
        Largest violation of a constraint or bound.
    violated : list of (str, float)
        Constraints violated by more than the tolerance, by name, largest first.
    phases : list of PhaseResult
    method, solver : str
    model : Model
        Model of the (first) phase.
    coordinate_names : list of str
    build_time : float
        Seconds spent transcribing (building the NLP and its derivatives).
    phase_solutions : list
        Raw decoded phases (for warm starts: ``solve(..., guess=result)``).
    x : ndarray
        The NLP's solution vector.
    multipliers : tuple or None
        IPOPT's bound and constraint multipliers ``(lam_x, lam_g)`` (warm starts).
    """

    status: str
    success: bool
    cost: float
    cost_terms: dict
    iterations: int
    wall_time: float
    constraint_violation: float
    violated: list
    phases: list
    method: str
    solver: str
    model: object = field(repr=False)
    coordinate_names: list = field(repr=False)
    build_time: float = 0.0
    phase_solutions: list = field(default_factory=list, repr=False)
    x: np.ndarray = field(default=None, repr=False)
    multipliers: tuple | None = field(default=None, repr=False)

    def _cat(self, key):
        return np.concatenate([getattr(p, key) for p in self.phases], axis=0)

    @property
    def t(self) -> np.ndarray:
        """Grid times of all phases, shape (n,), s (a junction appears once per phase)."""
        return self._cat("t")

    @property
    def q(self) -> np.ndarray:
        """Coordinates, shape (n, nv)."""
        return self._cat("q")

    @property
    def qd(self) -> np.ndarray:
        return self._cat("qd")

    @property
    def qdd(self) -> np.ndarray:
        return self._cat("qdd")

    @property
    def tau(self) -> np.ndarray:
        """Joint torques, shape (n, nv), N m."""
        return self._cat("tau")

    @property
    def grf(self) -> np.ndarray:
        """Total ground reaction force, shape (n, 3), N."""
        return self._cat("grf")

    @property
    def duration(self) -> float:
        return float(sum(p.duration for p in self.phases))

    def summary(self) -> str:
        """A few lines: status, cost terms, iterations, time, worst constraints."""
        lines = [
            f"{self.method} / {self.solver}: {self.status} "
            f"({'success' if self.success else 'FAILED'})",
            f"cost {self.cost:.6g} = "
            + " + ".join(f"{k} {v:.4g}" for k, v in self.cost_terms.items()),
            f"{self.iterations} iterations, {self.wall_time:.2f} s solve, "
            f"{self.build_time:.2f} s build; max violation {self.constraint_violation:.2e}",
        ]
        if self.violated:
            lines.append("violated: " + "; ".join(f"{n} ({v:.2e})" for n, v in self.violated[:10]))
        return "\n".join(lines)

    def muscle_outputs(self) -> tuple[list, dict]:
        """Muscle outputs of the muscle-driven phases on the grid of all phases.

        Returns
        -------
        names : list of str
            Muscles of any phase, in order of appearance (empty without
            muscle-driven phases).
        outputs : dict
            ``activations``, ``excitations`` (n, n_muscles, 0–1), ``forces``
            (N), ``lengths`` (m), ``speeds`` (m/s), ``tendon_force_rates``
            (1/s, elastic tendons) and ``muscle_torques``, ``reserves`` (n, nv,
            N m), stacked like :attr:`t`; NaN in phases without that muscle or
            output.
        """
        names = []
        for p in self.phases:
            names += [m for m in p.muscles.get("names", []) if m not in names]
        if not names:
            return [], {}
        keys = []
        for p in self.phases:
            keys += [
                k for k in p.muscles if k not in keys and k not in ("names", "moment_arms", "tau")
            ]
        out = {}
        for key in keys:
            per_coord = key in ("muscle_torques", "reserves")
            blocks = []
            for p in self.phases:
                width = len(self.coordinate_names) if per_coord else len(names)
                b = np.full((p.t.size, width), np.nan)
                if key in p.muscles:
                    cols = (slice(None) if per_coord
                            else [names.index(m) for m in p.muscles["names"]])  # fmt: skip
                    b[:, cols] = p.muscles[key]
                blocks.append(b)
            out[key] = np.concatenate(blocks, axis=0)
        return names, out

    def resample(self, rate: float) -> dict:
        """States, torques and ground reaction on a uniform time grid (linear interpolation).

        Parameters
        ----------
        rate : float
            Samples per second, Hz.

        Returns
        -------
        dict
            ``t`` (n,), ``q``, ``qd``, ``tau`` (n, nv), ``grf`` (n, 3); with
            muscle-driven phases also ``muscle_names`` and ``muscles`` (the
            arrays of :meth:`muscle_outputs` at the new times).
        """
        rate = as_positive_float(rate, "rate", unit="Hz")
        t = self.t
        keep = np.r_[True, np.diff(t) > 0]  # drop repeated junction times (keep the first)
        ts = np.arange(t[0], t[-1] + 0.5 / rate, 1.0 / rate)
        ts = ts[ts <= t[-1] + 1e-12]

        def interp(v):
            return np.stack([np.interp(ts, t[keep], col) for col in v[keep].T], axis=1)

        out = {"t": ts}
        for key in ("q", "qd", "tau", "grf"):
            out[key] = interp(getattr(self, key))
        names, mus = self.muscle_outputs()
        if names:
            out["muscle_names"] = names
            out["muscles"] = {k: interp(v) for k, v in mus.items()}
        return out

    def markers(self, rate: float | None = None):
        """World positions of the model's markers along the solution.

        Parameters
        ----------
        rate : float, optional
            Resample to this rate (Hz); default the grid points.

        Returns
        -------
        t : ndarray, shape (n,)
        points : ndarray, shape (n, n_markers, 3), m
        labels : list of str
        """
        if rate is None:
            t, q = self.t, self.q
        else:
            r = self.resample(rate)
            t, q = r["t"], r["q"]
        labels, pts = [], []
        for b in self.model.bodies:
            for name, r in b.markers.items():
                labels.append(name)
                pts.append(point_position(self.model, q, b.name, r))
        points = np.stack(pts, axis=1) if pts else np.zeros((t.size, 0, 3))
        return t, points, labels

    def to_dict(self) -> dict:
        """Plain arrays and numbers (names and units in the keys' documentation) for storing."""
        out = {
            "t": self.t,
            "q": self.q,
            "qd": self.qd,
            "qdd": self.qdd,
            "tau": self.tau,
            "grf": self.grf,
            "coordinate_names": list(self.coordinate_names),
            "cost": float(self.cost),
            "cost_terms": {k: float(v) for k, v in self.cost_terms.items()},
            "status": self.status,
            "success": bool(self.success),
            "iterations": int(self.iterations),
            "wall_time": float(self.wall_time),
            "constraint_violation": float(self.constraint_violation),
            "method": self.method,
            "solver": self.solver,
            "phase_names": [p.name for p in self.phases],
            "phase_durations": np.array([p.duration for p in self.phases]),
        }
        for p in self.phases:
            for label, F in p.forces.items():
                out.setdefault("forces", {})[f"{p.name}.{label}"] = F
            for key, v in p.muscles.items():  # muscle-driven phases: (n, n_muscles or nv)
                if key != "moment_arms":
                    out.setdefault("muscles", {})[f"{p.name}.{key}"] = v
        return out
