"""Two-dimensional head-neck model for sled tests (AHBM report §5.2.4).

Nine rigid bodies — the first thoracic vertebra ``T1``, the cervical
vertebrae ``C7`` … ``C1`` and the head (``C0``) — form a chain in the
sagittal (x-z) plane: x anterior, y to the left, z up. T1 is fixed to the sled;
every other body turns relative to the one below it on a pin joint about +y
(``c7_t1``, ``c6_c7``, …, ``c0_c1``), so a positive angle is flexion (the
upper body tilts forwards). Each joint carries a nonlinear viscoelastic
intervertebral element (exponentially stiffening spring and linear damper).

Prescribed T1 motion
--------------------
The sled (T1) translates without rotating. The equations of motion are
written in the T1 frame, in which every body feels, besides gravity, the
d'Alembert inertial force ``−m_i a_T1(t)`` at its centre of mass. These loads
are :class:`ahbm.dynamics.cartesian_forces.BodyForce` elements (one per body), so only
the eight joint angles are integrated and the base motion enters as a known
function of time (see :func:`sled_forces`). Joint angles are relative, hence
frame independent; absolute accelerations are the relative ones plus
``a_T1(t)``.

Model parameters
----------------
De Jager (1996), *Mathematical head-neck models for acceleration impacts*
(Eindhoven), gives the measured geometry, inertia and joint characteristics
of the global head-neck model; its tables were not available to us, so the
values here are documented estimates of the same order (see
:data:`HEAD_NECK_PARAMETERS`): head mass 4.69 kg and moment of inertia
0.0232 kg m² about the lateral axis (50th-percentile adult male head, as in
Walker et al. 1973 and the Hybrid III head); vertebrae (with their share of
the surrounding soft tissue) 0.22 kg and 2.2e-4 kg m² each (Deng & Goldsmith
1987); joint spacing 13-19 mm (cervical column 0.114 m from C7-T1 to the
occipital condyles); intervertebral springs ``M(δ) = −sign(δ) A (exp(B|δ|) − 1)``
with ``A`` = 20 N m and ``B`` = 8 /rad (160 N m/rad about neutral; about 80 N m
at 0.2 rad), dampers 5 N m s/rad. The head is held in its neutral posture
against gravity by choosing the spring rest angles so that the neutral
posture is a static equilibrium (a stand-in for passive muscle tone).
"""

from __future__ import annotations

import numpy as np

from ahbm._internal.validation import (
    as_finite_float,
    as_float_array,
    as_int,
    as_nonnegative_float,
    as_positive_float,
    callback_result,
    check_callable,
    check_model,
)
from ahbm.dynamics.cartesian_forces import BodyForce
from ahbm.dynamics.force_element import ForceElement
from ahbm.dynamics.inverse import gravity_torques
from ahbm.dynamics.joint_forces import RotationalSpringDamper
from ahbm.errors import DataError, ModelError
from ahbm.kinematics.forward import com_jacobian
from ahbm.kinematics.tree import Model

__all__ = [
    "HEAD_NECK_PARAMETERS",
    "head_neck_model",
    "intervertebral_elements",
    "exponential_spring",
    "sled_pulse",
    "half_sine",
    "sled_forces",
    "BaseAcceleration",
    "sled_test",
    "HEAD_NECK_JOINTS",
]

#: Estimated parameters of the 2-D head-neck chain (see the module docstring).
#: ``height``: joint-to-joint distance along z (C1: to the occipital condyles);
#: ``com``: (x, z) of the centre of mass from the body's lower joint, m;
#: ``mass`` kg; ``inertia`` (Ixx, Iyy, Izz) about the COM, kg m².
HEAD_NECK_PARAMETERS = {
    "T1": {"height": 0.0, "com": (-0.010, -0.010), "mass": 0.22, "inertia": (2.2e-4, 2.2e-4, 4e-4)},
    "C7": {
        "height": 0.0175,
        "com": (0.004, 0.0088),
        "mass": 0.22,
        "inertia": (2.2e-4, 2.2e-4, 4e-4),
    },
    "C6": {
        "height": 0.0165,
        "com": (0.004, 0.0083),
        "mass": 0.22,
        "inertia": (2.2e-4, 2.2e-4, 4e-4),
    },
    "C5": {
        "height": 0.0160,
        "com": (0.004, 0.0080),
        "mass": 0.22,
        "inertia": (2.2e-4, 2.2e-4, 4e-4),
    },
    "C4": {
        "height": 0.0160,
        "com": (0.004, 0.0080),
        "mass": 0.22,
        "inertia": (2.2e-4, 2.2e-4, 4e-4),
    },
    "C3": {
        "height": 0.0160,
        "com": (0.004, 0.0080),
        "mass": 0.22,
        "inertia": (2.2e-4, 2.2e-4, 4e-4),
    },
    "C2": {
        "height": 0.0190,
        "com": (0.004, 0.0095),
        "mass": 0.22,
        "inertia": (2.2e-4, 2.2e-4, 4e-4),
    },
    "C1": {
        "height": 0.0130,
        "com": (0.004, 0.0065),
        "mass": 0.22,
        "inertia": (2.2e-4, 2.2e-4, 4e-4),
    },
    "head": {
        "height": 0.20,
        "com": (0.025, 0.040),
        "mass": 4.69,
        "inertia": (0.0192, 0.0232, 0.0153),
    },
    "spring_A": 20.0,  # N m
    "spring_B": 8.0,  # 1/rad
    "damping": 5.0,  # N m s/rad
}

_CHAIN = ["T1", "C7", "C6", "C5", "C4", "C3", "C2", "C1", "head"]
#: Joint names from the bottom up (the joint of body k connects it to body k-1).
HEAD_NECK_JOINTS = ["c7_t1", "c6_c7", "c5_c6", "c4_c5", "c3_c4", "c2_c3", "c1_c2", "c0_c1"]


def head_neck_model(*, parameters: dict | None = None, gravity=(0.0, 0.0, -9.81)) -> Model:
    """Build the nine-body 2-D head-neck chain (T1 fixed, eight pin joints).

    Parameters
    ----------
    parameters : dict, optional
        Overrides of :data:`HEAD_NECK_PARAMETERS` (whole per-body entries).
    gravity : array_like, shape (3,), optional
        Gravity in the T1 (sled) frame, m/s².

    Returns
    -------
    Model
        9 bodies (``T1``, ``C7`` … ``C1``, ``head``), nq = nv = 8; coordinates
        :data:`HEAD_NECK_JOINTS` (flexion positive, rad). Markers:
        ``"top"`` on every body at its upper joint, ``"vertex"`` and
        ``"chin"`` on the head.

    Raises
    ------
    ModelError
        Malformed parameter entries.

    Notes
    -----
    Structure of the global head-neck model of de Jager (1996) as used in
    AHBM §5.2.4; parameters are estimates (module docstring).

    Examples
    --------
    >>> m = head_neck_model()
    >>> m.n_bodies, m.nq, m.coordinate_names[0], m.coordinate_names[-1]
    (9, 8, 'c7_t1', 'c0_c1')
    """
    par = dict(HEAD_NECK_PARAMETERS)
    if parameters is not None and not isinstance(parameters, dict):
        raise DataError(
            f"Expected `parameters` to be a dict {{name: entry}} like HEAD_NECK_PARAMETERS, got "
            f"{type(parameters).__name__}"
        )
    par.update(parameters or {})
    model = Model("head_neck_2d", gravity)
    below_height = 0.0
    for k, name in enumerate(_CHAIN):
        try:
            e = par[name]
            h = float(e["height"])
            cx, cz = (float(v) for v in e["com"])
            inertia = np.diag([float(v) for v in e["inertia"]])
            mass = float(e["mass"])
        except (KeyError, TypeError, ValueError) as err:
            raise ModelError(
                f"head_neck_model: parameters[{name!r}] needs 'height', 'com' (x, z), "
                "'mass' and 'inertia' (Ixx, Iyy, Izz)"
            ) from err
        if k == 0:
            joint = {"type": "fixed", "name": "t1_sled"}
        else:
            joint = {"type": "revolute", "axis": [0.0, 1.0, 0.0], "name": HEAD_NECK_JOINTS[k - 1]}
        markers = {"top": [0.0, 0.0, h]}
        if name == "head":
            markers = {"vertex": [0.0, 0.0, h], "chin": [0.09, 0.0, -0.02]}
        model.add_body(
            name,
            _CHAIN[k - 1] if k else "ground",
            joint,
            position=[0.0, 0.0, below_height],
            mass=mass,
            com=[cx, 0.0, cz],
            inertia=inertia,
            markers=markers,
        )
        below_height = h
    return model


def exponential_spring(A: float, B: float):
    """Exponentially stiffening spring characteristic ``k(δ) = sign(δ) A (exp(B|δ|) − 1)``.

    Parameters
    ----------
    A : float
        Moment scale, N m (> 0).
    B : float
        Stiffening rate, 1/rad (> 0). Small-angle stiffness ``A B``.

    Returns
    -------
    callable
        ``k(δ)`` vectorized over arrays (the spring torque is ``−k(δ)``),
        with the attribute ``inverse`` (``δ`` from a moment).

    Examples
    --------
    >>> k = exponential_spring(20.0, 8.0)
    >>> round(float(k(0.2)), 3), round(float(k.inverse(k(0.2))), 12)
    (79.061, 0.2)
    """
    A = as_positive_float(A, "A", unit="N m")
    B = as_positive_float(B, "B", unit="1/rad")

    def k(x):
        x = np.asarray(x, dtype=float)
        return np.sign(x) * A * np.expm1(B * np.abs(x))

    def inverse(m):
        m = np.asarray(m, dtype=float)
        return np.sign(m) * np.log1p(np.abs(m) / A) / B

    k.inverse = inverse
    return k


def intervertebral_elements(model: Model, *, q0=None, A=None, B=None, damping=None) -> list:
    """Nonlinear viscoelastic intervertebral elements, pre-loaded to hold ``q0``.

    Parameters
    ----------
    model : Model
        A :func:`head_neck_model`.
    q0 : array_like, shape (8,), optional
        Posture held in static equilibrium under the model's gravity
        (default neutral, zeros). The spring rest angles are set so that the
        spring moments balance gravity there.
    A, B, damping : float, optional
        Spring and damper parameters (defaults from :data:`HEAD_NECK_PARAMETERS`).

    Returns
    -------
    list of RotationalSpringDamper
        One per joint, named after the joint.

    Notes
    -----
    ``τ_j = −k(q_j − r_j) − c q̇_j`` with ``k`` from :func:`exponential_spring`
    and rest angles ``r = k⁻¹(g(q0))``, ``g`` the generalized gravity forces
    (:func:`ahbm.dynamics.gravity_torques`).

    Examples
    --------
    >>> m = head_neck_model()
    >>> els = intervertebral_elements(m)
    >>> len(els), els[0].name
    (8, 'c7_t1')
    """
    check_model(model)
    P = HEAD_NECK_PARAMETERS
    A = P["spring_A"] if A is None else A
    B = P["spring_B"] if B is None else B
    c = P["damping"] if damping is None else as_nonnegative_float(damping, "damping")
    if missing := [j for j in HEAD_NECK_JOINTS if j not in model.coordinate_names]:
        raise ModelError(f"intervertebral_elements: model has no joints {missing}")
    k = exponential_spring(A, B)
    q0 = np.zeros(model.nq) if q0 is None else as_float_array(q0, "q0")
    if q0.shape != (model.nq,):
        raise DataError(f"Expected `q0` to have shape ({model.nq},), got {q0.shape}")
    g = gravity_torques(model, q0)
    out = []
    for j in HEAD_NECK_JOINTS:
        i = model.coordinate_names.index(j)
        rest = float(q0[i] + k.inverse(g[i]))
        out.append(RotationalSpringDamper(j, stiffness=k, damping=c, rest=rest, name=j))
    return out


def half_sine(t, *, peak: float, duration: float, onset: float = 0.0):
    """Half-sine pulse ``peak sin(π (t − onset)/duration)`` on [onset, onset + duration].

    Parameters
    ----------
    t : float or array_like, shape (...)
        Time, s.
    peak : float
        Peak value (any unit).
    duration : float
        Pulse length, s (> 0).
    onset : float, optional
        Pulse start, s.

    Returns
    -------
    ndarray, shape (...)
        The pulse; zero outside [onset, onset + duration]. Its integral is
        ``2 peak duration / π``.

    Examples
    --------
    >>> float(half_sine(0.015, peak=4000.0, duration=0.03))
    4000.0
    """
    t = as_float_array(t, "t")
    peak = as_finite_float(peak, "peak")
    duration = as_positive_float(duration, "duration", unit="s")
    onset = as_finite_float(onset, "onset", unit="s")
    s = (t - onset) / duration
    return np.where((s >= 0) & (s <= 1), peak * np.sin(np.pi * np.clip(s, 0.0, 1.0)), 0.0)


def sled_pulse(t, *, peak: float = 15.0 * 9.81, duration: float = 0.1, onset: float = 0.01):
    """Horizontal T1 (sled) acceleration of a frontal impact: a half-sine pulse.

    Parameters
    ----------
    t : float or array_like, shape (...)
        Time, s.
    peak : float, optional
        Peak deceleration, m/s² (default 15 g, as in the frontal sled tests
        that de Jager (1996) simulated).
    duration : float, optional
        Pulse duration, s.
    onset : float, optional
        Start of the pulse, s.

    Returns
    -------
    ndarray, shape (..., 3)
        T1 acceleration in the sled frame: ``(−a(t), 0, 0)`` (the sled
        decelerates, so the head moves forwards relative to T1).

    Examples
    --------
    >>> sled_pulse(0.06).round(2)
    array([-147.15,    0.  ,    0.  ])
    """
    a = half_sine(t, peak=peak, duration=duration, onset=onset)
    out = np.zeros(a.shape + (3,))
    out[..., 0] = -a
    return out


class BaseAcceleration(ForceElement):
    """d'Alembert load of a prescribed base translation: ``−m_i a(t)`` on every body.

    Parameters
    ----------
    acceleration : callable
        ``a(t) -> (3,)``: acceleration of the base frame (in which the model
        is written; it must not rotate), m/s².
    name : str, optional

    Notes
    -----
    In a frame that translates with acceleration ``a(t)``, Newton's law holds
    with the extra force ``−m_i a`` at the centre of mass of every body. Its
    generalized force is ``Q = Σ J_ciᵀ (−m_i a) = −M J_comᵀ a`` with the
    total mass ``M`` and the Jacobian of the whole-body centre of mass
    (:func:`ahbm.kinematics.com_jacobian`): a time-varying version of
    :class:`ahbm.dynamics.cartesian_forces.GravityOverride` (one Jacobian per call
    instead of one :class:`~ahbm.dynamics.cartesian_forces.BodyForce` per body).

    Examples
    --------
    >>> m = head_neck_model()
    >>> f = BaseAcceleration(lambda t: [-10.0, 0.0, 0.0])
    >>> f.generalized_force(m, np.zeros(8), np.zeros(8)).shape
    (8,)
    """

    def __init__(self, acceleration, *, name: str = "base_acceleration"):
        check_callable(acceleration, "acceleration")
        self.acceleration = acceleration
        self.name = name

    def _a(self, t, batch):
        t = np.asarray(t, dtype=float)
        if t.ndim == 0:
            a = callback_result(self.acceleration(float(t)), "acceleration", (3,))
        else:
            a = np.array(
                [
                    callback_result(self.acceleration(float(x)), "acceleration", (3,))
                    for x in np.broadcast_to(t, batch).ravel()
                ]
            )
            a = a.reshape(batch + (3,))
        if a.shape[-1:] != (3,):
            raise DataError(f"`acceleration` must return shape (3,), got {a.shape}")
        return a

    def generalized_force(self, model, q, qd, *, t=0.0, kin=None):
        if kin is not None:
            q, qd = kin.q, (qd if kin.qd is None else kin.qd)
        q = np.asarray(q, dtype=float)
        J = com_jacobian(model, None if kin is not None else q, kin=kin)  # (..., 3, nv)
        a = self._a(t, q.shape[:-1])
        tau = -model.total_mass * np.einsum(
            "...in,...i->...n", J, np.broadcast_to(a, J.shape[:-2] + (3,))
        )
        qd = np.asarray(qd, dtype=float)
        return np.broadcast_to(
            tau, np.broadcast_shapes(tau.shape[:-1], qd.shape[:-1]) + (model.nv,)
        )


def sled_forces(model: Model, acceleration=sled_pulse) -> list:
    """d'Alembert loads of a prescribed base (T1) translation, one per body.

    The slower, element-by-element equivalent of :class:`BaseAcceleration`
    (kept to cross-check it).

    Parameters
    ----------
    model : Model
        The model, written in the base frame.
    acceleration : callable
        ``a(t) -> (3,)``: base acceleration in the base frame, m/s².

    Returns
    -------
    list of BodyForce
        ``−m_i a(t)`` at the centre of mass of every body with mass.

    Examples
    --------
    >>> m = head_neck_model()
    >>> len(sled_forces(m))
    9
    """
    check_model(model)
    check_callable(acceleration, "acceleration")
    out = []
    for b in model.bodies:
        if b.mass > 0:
            mass = b.mass
            out.append(
                BodyForce(
                    b.name,
                    lambda t, m=mass: -m * callback_result(acceleration(t), "acceleration"),
                    point=b.com,
                    name=f"inertial_{b.name}",
                )
            )
    return out


def sled_test(
    model: Model | None = None,
    *,
    t_end: float = 0.3,
    pulse=sled_pulse,
    rtol: float = 1e-4,
    atol: float = 1e-6,
    n_out: int = 301,
    method: str = "Radau",
):
    """Simulate the frontal sled test of AHBM §5.2.4 with a stiff integrator.

    Parameters
    ----------
    model : Model, optional
        A :func:`head_neck_model` (default parameters if None).
    t_end : float, optional
        End time, s.
    pulse : callable, optional
        T1 acceleration ``a(t) -> (3,)`` (default :func:`sled_pulse`, 15 g).
    rtol, atol : float, optional
        Integrator tolerances.
    n_out : int, optional
        Number of equally spaced output samples.
    method : str, optional
        Integrator (default ``"Radau"``: the exponentially stiffening
        intervertebral springs make the problem stiff).

    Returns
    -------
    SimulationResult
        From :func:`ahbm.dynamics.simulation.simulate`; the model starts at
        rest in the neutral posture (a static equilibrium, see
        :func:`intervertebral_elements`). The head rotation relative to T1
        is ``result.q.sum(axis=1)``.

    Examples
    --------
    >>> r = sled_test(t_end=0.02, n_out=3)
    >>> r.q.shape
    (3, 8)
    """
    from ahbm.dynamics.simulation import simulate

    model = head_neck_model() if model is None else model
    check_callable(pulse, "pulse")
    t_end = as_positive_float(t_end, "t_end", unit="s")
    n_out = as_int(n_out, "n_out", minimum=2)
    forces = [*intervertebral_elements(model), BaseAcceleration(pulse)]
    t = np.linspace(0.0, t_end, n_out)
    zeros = np.zeros(model.nv)
    return simulate(model, (0.0, float(t_end)), np.zeros(model.nq), zeros, forces=forces,
                    method=method, rtol=rtol, atol=atol, t_eval=t)  # fmt: skip
