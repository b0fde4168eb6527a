"""Segment energies, mechanical work and power flow among segments, vectorized over frames.

Energies of rigid segments (Winter 2009, ch. 6): for segment ``i`` with mass
``m_i``, inertia ``I_i`` about its centre of mass (COM) in the segment frame,
orientation ``R_i`` (``lab_R_segment``), COM position ``c_i``, COM velocity
``v_i`` and angular velocity ``ω_i`` (lab frame)

* translational kinetic energy ``T_i = ½ m_i |v_i|²``,
* rotational kinetic energy ``K_i = ½ ω_iᵀ R_i I_i R_iᵀ ω_i``,
* potential energy ``V_i = −m_i g · c_i`` (zero at the lab origin),

and the segment's energy ``E_i = T_i + K_i + V_i``.

Work measures (Winter 2009, §6.x "internal versus external work", after
Winter 1979 and Pierrynowski, Winter & Norman 1980), summed over frame steps
``Δ`` of a trial or a cycle:

* no energy transfer: ``W_n = Σ_i Σ_t (|ΔT_i| + |ΔK_i| + |ΔV_i|)``,
* transfer within segments: ``W_w = Σ_i Σ_t |ΔE_i|``,
* transfer within and between segments: ``W_wb = Σ_t |Δ Σ_i E_i|``,

so that ``W_wb ≤ W_w ≤ W_n``. External work is the work of the ground reaction
on the body's COM, ``∫ F_ext · v_G dt`` (positive and negative parts);
internal work the same measures applied to the energies relative to the body
COM (König's theorem: ``T_i,rel = ½ m_i |v_i − v_G|²``, plus rotation).

Power flow (Winter 2009, §6.x "power balances within segments"): the joint
force ``F_p`` and moment ``M_p`` (about the joint centre ``r_p``) that the
proximal segment exerts on segment ``i`` bring the powers ``F_p · ṙ_p`` and
``M_p · ω_i`` into it; each child ``d`` takes ``F_d · ṙ_d`` and ``M_d · ω_i``
out of it; an external spatial force ``[n; f]`` (moment about the lab origin)
brings ``f · v_i + ω_i · (n − c_i × f)``. The point velocities are those of
points of the rigid segment, ``ṙ = v_i + ω_i × (r − c_i)``. By Newton-Euler,

``dE_i/dt = F_p·ṙ_p + M_p·ω_i − Σ_d (F_d·ṙ_d + M_d·ω_i) + P_ext,i``,

and summed over a multibody model the joint terms give the joint powers
``Σ τ·q̇`` (:func:`model_power_flow`).

References
----------
Winter, D.A. (2009) *Biomechanics and Motor Control of Human Movement*, 4th
ed., Wiley, ch. 6 (mechanical work, energy and power). Winter, D.A. (1979) A
new definition of mechanical work done in human movement. *J Appl Physiol*
46:79-83. Willems, Cavagna & Heglund (1995) External, internal and total work
in human locomotion. *J Exp Biol* 198:379-393.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ahbm._engine.arrays import cross
from ahbm._internal.validation import (
    as_float_array,
    check_inertia,
    check_trailing_shape,
    sample_times,
)
from ahbm.dynamics.segmental import JointLoads, SegmentMotion, newton_euler
from ahbm.errors import DataError
from ahbm.kinematics.forward import forward_kinematics, kinetic_energy, potential_energy
from ahbm.types import ResultRepr

__all__ = [
    "SegmentEnergies",
    "WorkMeasures",
    "ExternalWork",
    "PowerFlow",
    "segment_energies",
    "model_segment_energies",
    "model_segment_kinematics",
    "winter_work",
    "external_work",
    "internal_work",
    "work_of_power",
    "segment_power_flow",
    "model_power_flow",
]


@dataclass(frozen=True, repr=False)
class SegmentEnergies(ResultRepr):
    """Mechanical energies of segments, J, each of shape (..., n_segments).

    Attributes
    ----------
    translational : ndarray
        ``½ m |v_c|²``.
    rotational : ndarray
        ``½ ωᵀ I ω``.
    potential : ndarray
        ``−m g · c`` (zero at the lab origin).
    """

    translational: np.ndarray
    rotational: np.ndarray
    potential: np.ndarray

    @property
    def kinetic(self) -> np.ndarray:
        """Kinetic energy of each segment, J, shape (..., n_segments)."""
        return self.translational + self.rotational

    @property
    def segment_total(self) -> np.ndarray:
        """Energy of each segment ``E_i = T_i + K_i + V_i``, J, shape (..., n_segments)."""
        return self.translational + self.rotational + self.potential

    @property
    def total(self) -> np.ndarray:
        """Total mechanical energy ``Σ_i E_i``, J, shape (...)."""
        return self.segment_total.sum(axis=-1)


@dataclass(frozen=True, repr=False)
class WorkMeasures(ResultRepr):
    """Winter's work measures, J (see the module docstring).

    Attributes
    ----------
    no_transfer : float or ndarray
        ``W_n``: every energy component of every segment on its own.
    within : float or ndarray
        ``W_w``: exchange between the components of a segment.
    within_between : float or ndarray
        ``W_wb``: exchange within and between segments.
    """

    no_transfer: np.ndarray
    within: np.ndarray
    within_between: np.ndarray


@dataclass(frozen=True, repr=False)
class ExternalWork(ResultRepr):
    """Work of the external (ground reaction) forces on the body COM.

    Attributes
    ----------
    power : ndarray, shape (n_frames,)
        ``F_ext · v_G``, W.
    positive, negative : float
        Integrals (trapezoidal) of the positive and negative parts of the power, J
        (``negative ≤ 0``).
    """

    power: np.ndarray
    positive: float
    negative: float

    @property
    def net(self) -> float:
        """Net external work, J."""
        return self.positive + self.negative


@dataclass(frozen=True, repr=False)
class PowerFlow(ResultRepr):
    """Power flowing into each segment, W, each of shape (n_frames, n_segments).

    Attributes
    ----------
    proximal_force : ndarray
        ``F_p · ṙ_p``: joint force power at the proximal joint (into the segment).
    proximal_moment : ndarray
        ``M_p · ω``: joint moment power at the proximal joint.
    distal_force : ndarray
        ``−Σ_d F_d · ṙ_d``: joint force powers at the distal joints (negative
        when energy flows out to the children).
    distal_moment : ndarray
        ``−Σ_d M_d · ω``: joint moment powers at the distal joints.
    external : ndarray
        Power of the external forces on the segment (gravity excluded: it is
        in the potential energy).
    """

    proximal_force: np.ndarray
    proximal_moment: np.ndarray
    distal_force: np.ndarray
    distal_moment: np.ndarray
    external: np.ndarray

    @property
    def total(self) -> np.ndarray:
        """Net power into each segment ``dE_i/dt``, W, shape (n_frames, n_segments)."""
        return (
            self.proximal_force
            + self.proximal_moment
            + self.distal_force
            + self.distal_moment
            + self.external
        )


def _segment_arrays(mass, inertia, rotation, com, com_velocity, omega):
    m = as_float_array(mass, "mass").ravel()
    if np.any(m < 0):
        raise DataError(f"`mass` must hold non-negative segment masses, kg; got {m.tolist()}")
    n_seg = m.size
    inert = as_float_array(inertia, "inertia")
    if inert.shape != (n_seg, 3, 3):
        raise DataError(
            f"Expected `inertia` to have shape ({n_seg}, 3, 3) (one tensor about the COM per "
            f"segment, segment frame), got {inert.shape}"
        )
    check_inertia(inert)
    R = as_float_array(rotation, "rotation", allow_nan=True)
    check_trailing_shape(R, (n_seg, 3, 3), "rotation")
    out = [R]
    for x, name in ((com, "com"), (com_velocity, "com_velocity"), (omega, "omega")):
        a = as_float_array(x, name, allow_nan=True)
        check_trailing_shape(a, (n_seg, 3), name)
        out.append(a)
    batch = [a.shape[:-2] for a in out[1:]] + [R.shape[:-3]]
    try:
        np.broadcast_shapes(*batch)
    except ValueError as err:
        raise DataError(
            f"the frame axes of rotation, com, com_velocity and omega do not agree: {batch}"
        ) from err
    return m, inert, *out


def segment_energies(
    mass, inertia, rotation, com, com_velocity, omega, *, gravity=(0.0, 0.0, -9.81)
) -> SegmentEnergies:
    """Translational, rotational and potential energy of rigid segments.

    Parameters
    ----------
    mass : array_like, shape (n_segments,)
        Segment masses, kg.
    inertia : array_like, shape (n_segments, 3, 3)
        Inertia tensors about the COMs in the segment frames, kg m².
    rotation : array_like, shape (..., n_segments, 3, 3)
        ``lab_R_segment``.
    com, com_velocity : array_like, shape (..., n_segments, 3)
        COM positions (m) and velocities (m/s), lab frame.
    omega : array_like, shape (..., n_segments, 3)
        Angular velocities in the lab frame, rad/s.
    gravity : array_like, shape (3,)
        Gravitational acceleration, m/s² (lab frame).

    Returns
    -------
    SegmentEnergies
        ``T = ½ m |v|²``, ``K = ½ ωᵀ R I Rᵀ ω``, ``V = −m g · c``, J.

    Raises
    ------
    DataError
        Shapes disagree, negative masses or invalid inertias.

    Examples
    --------
    A 2 kg segment 1 m above the origin moving at 3 m/s, spinning at 2 rad/s
    about an axis with inertia 0.5 kg m²:

    >>> e = segment_energies([2.0], 0.5 * np.eye(3)[None], np.eye(3)[None],
    ...                      [[0, 0, 1.0]], [[3.0, 0, 0]], [[0, 0, 2.0]])
    >>> e.translational.tolist(), e.rotational.tolist(), e.potential.round(2).tolist()
    ([9.0], [1.0], [19.62])
    """
    m, inert, R, c, v, w = _segment_arrays(mass, inertia, rotation, com, com_velocity, omega)
    g = as_float_array(gravity, "gravity").ravel()
    if g.size != 3:
        raise DataError(f"Expected `gravity` to have 3 components, m/s², got {g.size}")
    ws = np.einsum("...ji,...j->...i", R, w)  # angular velocity in segment coordinates
    rot = 0.5 * np.einsum("...si,sij,...sj->...s", ws, inert, ws)
    trans = 0.5 * m * np.einsum("...i,...i->...", v, v)
    pot = -m * np.einsum("...i,i->...", c, g)
    shape = np.broadcast_shapes(rot.shape, trans.shape, pot.shape)
    return SegmentEnergies(*(np.broadcast_to(x, shape).copy() for x in (trans, rot, pot)))


def model_segment_kinematics(model, q, qd, qdd=None, *, kin=None) -> dict:
    """Lab-frame segment kinematics of the bodies of a model (COMs, velocities, ω).

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
    qd : array_like, shape (..., nv)
    qdd : array_like, shape (..., nv), optional
        With it the COM and angular accelerations are returned too.
    kin : Kinematics, optional
        A state from :func:`ahbm.kinematics.forward_kinematics` (with ``qdd``
        when accelerations are wanted); q, qd, qdd may then be None.

    Returns
    -------
    dict
        ``rotation`` (..., n_bodies, 3, 3), ``com``, ``com_velocity``,
        ``omega``, ``origin`` (body-frame origins) and, with accelerations,
        ``com_acc`` and ``alpha``, each (..., n_bodies, 3), lab frame, SI.

    Notes
    -----
    From the body spatial velocity ``[ω; v_O]`` and acceleration
    ``[ω̇; a_O]`` (body coordinates): ``ċ = R (v_O + ω × c)``,
    ``c̈ = R (a_O + ω × v_O + ω̇ × c + ω × (ω × c))``, ``ω_lab = R ω``,
    ``α_lab = R ω̇``.

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> s = model_segment_kinematics(m, np.zeros(m.nq), np.ones(m.nv))
    >>> s["com_velocity"].shape
    (2, 3)
    """
    if kin is None:
        kin = forward_kinematics(model, q, qd, qdd)
    if kin.velocities is None:
        raise DataError("`kin` has no velocities; pass kin=forward_kinematics(model, q, qd)")
    R = kin.rotations
    vel = kin.velocities
    w, vO = vel[..., :3], vel[..., 3:]
    cb = model.coms
    wxc = cross(w, np.broadcast_to(cb, w.shape))
    rot = lambda x: np.einsum("...ij,...j->...i", R, x)  # noqa: E731
    out = {
        "rotation": R,
        "origin": kin.positions,
        "com": kin.positions + rot(np.broadcast_to(cb, w.shape)),
        "com_velocity": rot(vO + wxc),
        "omega": rot(w),
    }
    if kin.qdd is not None:
        acc = kin.accelerations
        al, aO = acc[..., :3], acc[..., 3:]
        ca = aO + cross(w, vO) + cross(al, np.broadcast_to(cb, w.shape)) + cross(w, wxc)
        out["com_acc"] = rot(ca)
        out["alpha"] = rot(al)
    return out


def model_segment_energies(model, q, qd, *, kin=None) -> SegmentEnergies:
    """Translational, rotational and potential energy of every body of a model.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq), or None with ``kin``
    qd : array_like, shape (..., nv), or None with ``kin``
    kin : Kinematics, optional
        State with velocities from :func:`ahbm.kinematics.forward_kinematics`.

    Returns
    -------
    SegmentEnergies
        Each (..., n_bodies), J; gravity from ``model.gravity``.

    Notes
    -----
    The kinetic energy of body ``i`` is :func:`ahbm.kinematics.kinetic_energy`
    (``per_body=True``), ``½ v_iᵀ I_i v_i`` with the spatial inertia; the
    rotational part ``½ ωᵀ I_c ω`` (inertia about the COM) is split off and
    the translational part is the rest, ``½ m |ċ|²`` by König's theorem. The
    potential energy is :func:`ahbm.kinematics.potential_energy`
    (``per_body=True``).

    Examples
    --------
    >>> from ahbm.models import triple_pendulum_euler
    >>> m = triple_pendulum_euler()
    >>> e = model_segment_energies(m, np.zeros(m.nq), np.zeros(m.nv))
    >>> round(float(e.total), 6)
    -5.886
    """
    if kin is None:
        kin = forward_kinematics(model, q, qd)
    T = kinetic_energy(model, None, None, kin=kin, per_body=True)
    w = kin.velocities[..., :3]
    rot = 0.5 * np.einsum("...bi,bij,...bj->...b", w, model.inertias, w)
    V = potential_energy(model, None, kin=kin, per_body=True)
    return SegmentEnergies(T - rot, rot, V)


def _frame_steps(x, axis):
    return np.abs(np.diff(x, axis=axis))


def winter_work(energies: SegmentEnergies, *, start=None, stop=None) -> WorkMeasures:
    """Winter's mechanical work without and with energy transfer, J.

    Parameters
    ----------
    energies : SegmentEnergies
        Energies of shape (n_frames, n_segments) (frames first).
    start, stop : int, optional
        Frame range ``[start, stop)`` (e.g. one gait cycle); default all frames.

    Returns
    -------
    WorkMeasures
        ``W_n = Σ_i Σ_t (|ΔT_i| + |ΔK_i| + |ΔV_i|)``, ``W_w = Σ_i Σ_t |ΔE_i|``,
        ``W_wb = Σ_t |Δ Σ_i E_i|`` (Winter 2009, ch. 6); frames with NaN do
        not contribute.

    Examples
    --------
    A ball thrown up and caught: potential and kinetic energy exchange
    within the segment, so ``W_w`` is far below ``W_n``:

    >>> t = np.linspace(0, 1, 101)
    >>> z, vz = 5 * t - 4.905 * t**2, 5 - 9.81 * t
    >>> c = np.stack([0 * t, 0 * t, z], -1)[:, None]
    >>> v = np.stack([0 * t, 0 * t, vz], -1)[:, None]
    >>> e = segment_energies([1.0], np.zeros((1, 3, 3)), np.eye(3)[None], c, v, 0 * v)
    >>> w = winter_work(e)
    >>> round(float(w.no_transfer), 2), round(float(w.within), 6)
    (48.14, 0.0)
    """
    if not isinstance(energies, SegmentEnergies):
        raise DataError(
            f"Expected `energies` to be a SegmentEnergies (segment_energies or "
            f"model_segment_energies), got {type(energies).__name__}"
        )
    sl = slice(start, stop)
    parts = [np.asarray(x)[sl] for x in (energies.translational, energies.rotational,
                                         energies.potential)]  # fmt: skip
    if parts[0].ndim != 2:
        raise DataError(
            f"`energies` must be (n_frames, n_segments) arrays, got shape {parts[0].shape}"
        )
    if parts[0].shape[0] < 2:
        raise DataError(
            f"Need at least 2 frames in [start, stop) to compute work, got {parts[0].shape[0]}"
        )
    wn = sum(np.nansum(_frame_steps(x, 0)) for x in parts)
    seg = parts[0] + parts[1] + parts[2]
    ww = np.nansum(_frame_steps(seg, 0))
    wwb = np.nansum(_frame_steps(seg.sum(axis=1), 0))
    return WorkMeasures(float(wn), float(ww), float(wwb))


def internal_work(mass, com_velocity, rotational, *, start=None, stop=None) -> WorkMeasures:
    """Internal work: Winter's measures of the kinetic energies relative to the body COM.

    Parameters
    ----------
    mass : array_like, shape (n_segments,)
        Segment masses, kg.
    com_velocity : array_like, shape (n_frames, n_segments, 3)
        Segment COM velocities, m/s, lab frame.
    rotational : array_like, shape (n_frames, n_segments)
        Rotational energies (:attr:`SegmentEnergies.rotational`), J.
    start, stop : int, optional
        Frame range (one cycle).

    Returns
    -------
    WorkMeasures
        :func:`winter_work` of ``T_i,rel = ½ m_i |v_i − v_G|²`` and ``K_i``
        (no potential energy), with ``v_G = Σ m_i v_i / Σ m_i`` (König's
        theorem: the kinetic energy is ``½ M |v_G|² + Σ (T_i,rel + K_i)``;
        Willems, Cavagna & Heglund 1995).

    Examples
    --------
    Two equal masses moving together have no internal work:

    >>> v = np.ones((5, 2, 3))
    >>> internal_work([1.0, 1.0], v, np.zeros((5, 2))).within_between
    0.0
    """
    m = as_float_array(mass, "mass").ravel()
    v = as_float_array(com_velocity, "com_velocity", allow_nan=True)
    if v.ndim != 3 or v.shape[1:] != (m.size, 3):
        raise DataError(
            f"Expected `com_velocity` to have shape (n_frames, {m.size}, 3), got {v.shape}"
        )
    K = as_float_array(rotational, "rotational", allow_nan=True)
    if K.shape != v.shape[:2]:
        raise DataError(f"Expected `rotational` to have shape {v.shape[:2]}, got {K.shape}")
    if m.sum() <= 0:
        raise DataError("`mass` must have a positive sum")
    vG = np.einsum("s,nsi->ni", m, v) / m.sum()
    rel = 0.5 * m * np.sum((v - vG[:, None]) ** 2, axis=-1)
    return winter_work(SegmentEnergies(rel, K, np.zeros_like(K)), start=start, stop=stop)


def external_work(force, com_velocity, *, rate=None, time=None) -> ExternalWork:
    """Work of the external (non-gravitational) forces on the whole-body COM.

    Parameters
    ----------
    force : array_like, shape (n_frames, 3)
        Total external force except gravity (the sum of the ground reactions), N.
    com_velocity : array_like, shape (n_frames, 3)
        Velocity of the whole-body COM, m/s.
    rate : float, optional
        Frame rate, Hz. Give exactly one of `rate` and `time`.
    time : array_like, shape (n_frames,), optional
        Frame times, s.

    Returns
    -------
    ExternalWork
        Power ``P = F · v_G`` and its positive and negative work (trapezoidal
        rule on the positive and negative parts; NaN frames skipped).

    Notes
    -----
    ``M dv_G/dt = F + M g``, so ``∫ P dt = Δ(½ M |v_G|² − M g · c_G)``: the
    change of the COM's translational and potential energy.

    Examples
    --------
    >>> t = np.linspace(0, 1, 11)
    >>> w = external_work(np.tile([0, 0, 10.0], (11, 1)), np.tile([0, 0, 1.0], (11, 1)), time=t)
    >>> round(w.positive, 9), w.negative
    (10.0, 0.0)
    """
    F = as_float_array(force, "force", allow_nan=True)
    v = as_float_array(com_velocity, "com_velocity", allow_nan=True)
    if F.ndim != 2 or F.shape[1] != 3 or v.shape != F.shape:
        raise DataError(
            f"Expected `force` and `com_velocity` of shape (n_frames, 3), got {F.shape} and "
            f"{v.shape}"
        )
    P = np.einsum("ni,ni->n", F, v)
    return ExternalWork(P, *work_of_power(P, rate=rate, time=time))


def work_of_power(power, *, rate=None, time=None, start=None, stop=None) -> tuple:
    """Positive and negative work of a power signal, J (trapezoidal rule).

    Parameters
    ----------
    power : array_like, shape (n_frames,)
        Power, W (NaN frames count as zero).
    rate : float, optional
        Frame rate, Hz. Give exactly one of `rate` and `time`.
    time : array_like, shape (n_frames,), optional
        Frame times, s.
    start, stop : int, optional
        Frame range ``[start, stop)`` (e.g. one cycle).

    Returns
    -------
    tuple of float
        ``(∫ max(P, 0) dt, ∫ min(P, 0) dt)``.

    Examples
    --------
    >>> work_of_power(np.sin(np.linspace(0, 2 * np.pi, 2001)), time=np.linspace(0, 1, 2001))
    (0.3183..., -0.3183...)
    """
    P = as_float_array(power, "power", allow_nan=True)
    if P.ndim != 1:
        raise DataError(f"Expected `power` to have shape (n_frames,), got {P.shape}")
    t = sample_times(P.size, rate=rate, time=time)
    sl = slice(start, stop)
    P, t = np.where(np.isfinite(P), P, 0.0)[sl], t[sl]
    return float(np.trapezoid(np.maximum(P, 0.0), t)), float(np.trapezoid(np.minimum(P, 0.0), t))


def segment_power_flow(parent, loads: JointLoads, com, com_velocity, omega, *, f_ext=None):
    """Joint force and moment powers into and out of each segment (Winter's power balance).

    Parameters
    ----------
    parent : sequence of int, length n_segments
        Proximal segment of each segment, ``-1`` for a root.
    loads : JointLoads
        Joint force and internal moment that each segment's proximal segment
        exerts on it at its joint point (:func:`ahbm.dynamics.segmental.newton_euler`).
        A root's load is the load of the rest of the world on it.
    com, com_velocity, omega : array_like, shape (n_frames, n_segments, 3)
        COM positions (m), COM velocities (m/s), angular velocities (rad/s), lab frame.
    f_ext : array_like, shape (n_frames, n_segments, 6), optional
        External spatial forces ``[n; f]`` (moment about the lab origin), lab frame.

    Returns
    -------
    PowerFlow
        Each (n_frames, n_segments), W; ``total`` is ``dE_i/dt``.

    Notes
    -----
    Winter (2009, ch. 6): the joint force power ``F · ṙ`` with the joint
    point's velocity as a point of the segment, ``ṙ = v_c + ω × (r − c)``,
    and the moment power ``M · ω`` of the segment, at each end, so that the
    balance ``total = dE_i/dt`` holds for each segment whatever the
    kinematics. Where the joint point moves as a point of both segments (a
    multibody model) the force powers of the two sides of a joint cancel
    (energy passes through the joint) and the moment powers add to the joint
    power ``M · (ω_d − ω_p)``; with marker-based segments the two velocities
    of the joint centre differ a little (soft tissue, differentiation), and so
    do the two force powers.

    Examples
    --------
    A 1 kg point mass on a massless root, lifted at 1 m/s by its joint force:

    >>> from ahbm.dynamics.segmental import JointLoads
    >>> L = JointLoads(np.array([[[0, 0, 9.81]]]), np.zeros((1, 1, 3)), np.zeros((1, 1, 3)))
    >>> p = segment_power_flow([-1], L, np.zeros((1, 1, 3)), [[[0, 0, 1.0]]], np.zeros((1, 1, 3)))
    >>> p.total.round(2).tolist()
    [[9.81]]
    """
    parf = as_float_array(parent, "parent").ravel()
    par = parf.astype(int)
    n_seg = par.size
    if np.any(parf != par) or np.any(par >= np.arange(n_seg)) or np.any(par < -1):
        raise DataError(
            f"`parent` must hold segment indices with -1 <= parent[i] < i (proximal segments "
            f"first), got {parf.tolist()}"
        )
    if not isinstance(loads, JointLoads):
        raise DataError(f"Expected `loads` to be a JointLoads, got {type(loads).__name__}")
    arrs = []
    for x, name in ((com, "com"), (com_velocity, "com_velocity"), (omega, "omega"),
                    (loads.force, "loads.force"), (loads.moment, "loads.moment"),
                    (loads.point, "loads.point")):  # fmt: skip
        a = as_float_array(x, name, allow_nan=True)
        if a.ndim != 3 or a.shape[1:] != (n_seg, 3):
            raise DataError(
                f"Expected `{name}` to have shape (n_frames, {n_seg}, 3), got {a.shape}"
            )
        arrs.append(a)
    c, v, w, F, M, r = arrs
    if len({a.shape for a in arrs}) != 1:
        names = ("com", "com_velocity", "omega", "loads.force", "loads.moment", "loads.point")
        got = ", ".join(f"{n} {a.shape}" for n, a in zip(names, arrs, strict=True))
        raise DataError(
            f"the frame counts of the arrays differ ({got}); give every array for the same frames"
        )
    pf, pm = np.zeros(c.shape[:2]), np.zeros(c.shape[:2])
    df, dm = np.zeros(c.shape[:2]), np.zeros(c.shape[:2])
    for i in range(n_seg):
        rdot = v[:, i] + cross(w[:, i], r[:, i] - c[:, i])
        pf[:, i] = np.sum(F[:, i] * rdot, -1)
        pm[:, i] = np.sum(M[:, i] * w[:, i], -1)
        p = par[i]
        if p >= 0:
            rdot_p = v[:, p] + cross(w[:, p], r[:, i] - c[:, p])
            df[:, p] -= np.sum(F[:, i] * rdot_p, -1)
            dm[:, p] -= np.sum(M[:, i] * w[:, p], -1)
    ext = np.zeros(c.shape[:2])
    if f_ext is not None:
        fe = as_float_array(f_ext, "f_ext", allow_nan=True)
        if fe.shape != c.shape[:2] + (6,):
            raise DataError(f"Expected `f_ext` to have shape {c.shape[:2] + (6,)}, got {fe.shape}")
        n_c = fe[..., :3] - cross(c, fe[..., 3:])
        ext = np.sum(fe[..., 3:] * v, -1) + np.sum(n_c * w, -1)
    return PowerFlow(pf, pm, df, dm, ext)


def model_power_flow(model, q, qd, qdd, *, f_ext=None):
    """Power flow among the bodies of a model, with the joint loads from its motion.

    Parameters
    ----------
    model : Model
    q : array_like, shape (n_frames, nq)
    qd, qdd : array_like, shape (n_frames, nv)
    f_ext : array_like, shape (n_frames, n_bodies, 6), optional
        External spatial forces ``[n; f]`` in the world frame (moment about the
        world origin), as :func:`ahbm.dynamics.rnea` with ``f_ext_frame="world"``.

    Returns
    -------
    PowerFlow
        Each (n_frames, n_bodies), W.

    Notes
    -----
    The joint loads are those of :func:`ahbm.dynamics.segmental.newton_euler`
    with the model's exact segment kinematics (:func:`model_segment_kinematics`)
    and each body's frame origin as its joint point; they are the spatial
    forces of the RNEA backward pass, so the moment and force powers at a
    joint add to ``τ_j · q̇_j`` and ``Σ_i total_i = Σ τ·q̇ + P_ext``.

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> p = model_power_flow(m, np.zeros((1, m.nq)), np.ones((1, m.nv)), np.zeros((1, m.nv)))
    >>> p.total.shape
    (1, 2)
    """
    s = model_segment_kinematics(model, q, qd, qdd)
    if s["com"].ndim != 3:
        raise DataError(f"Expected `q` of shape (n_frames, {model.nq}), got {np.shape(q)}")
    motion = SegmentMotion(s["rotation"], s["com"], s["com_acc"], s["omega"], s["alpha"])
    loads = newton_euler(
        list(model.parent), model.masses, model.inertias, motion, s["origin"],
        gravity=model.gravity, f_ext=f_ext,
    )  # fmt: skip
    return segment_power_flow(
        model.parent, loads, s["com"], s["com_velocity"], s["omega"], f_ext=f_ext
    )
