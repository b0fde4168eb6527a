"""Fifteen-segment whole-body impact model (AHBM report §5.2.3).

The structure is :func:`ahbm.models.human15` (pelvis on a free joint; Euler
lumbar, thoracic, upper-neck and hip joints; ball-and-socket lower-neck and
shoulder joints; pin elbows and knees; universal ankles). This module gives it

* sex-specific inertial parameters from de Leva (1996) with the trunk in
  three parts (:func:`whole_body_model`); the report used the GEBOD
  generator (Cheng et al. 1994), which is not public, so we use the most
  widely used published table instead;
* passive joint elements (:func:`joint_elements`): nonlinear (cubic
  hardening) rotational springs and linear dampers on every joint
  coordinate, soft joint stops at the ranges of motion, and linear
  rotational bushings on the ball-and-socket joints;
* the chest impact of the report's example (:func:`chest_impact`): a
  half-sine force pulse on the sternum.

Joint stiffness, damping and ranges of motion are documented estimates of
the order of magnitude of passive human joint properties (see
:data:`JOINT_PROPERTIES`); adjust them for your application.
"""

from __future__ import annotations

import numpy as np

from ahbm._internal.validation import (
    as_finite_float,
    as_float_array,
    as_positive_float,
    check_model,
)
from ahbm.bsp.tables import segment_parameters
from ahbm.dynamics.cartesian_forces import BodyForce, Bushing
from ahbm.dynamics.joint_forces import JointStop, RotationalSpringDamper
from ahbm.errors import AhbmError, DataError, ModelError
from ahbm.kinematics.tree import Model
from ahbm.models.fifteen_segment import HUMAN15_PARAMETERS, _combine, human15
from ahbm.models.head_neck import half_sine

__all__ = [
    "JOINT_PROPERTIES",
    "whole_body_model",
    "joint_elements",
    "chest_impact",
]

#: Passive joint properties per joint: ``k`` small-angle stiffness (N m/rad),
#: ``c`` damping (N m s/rad), ``rom`` ranges of motion (rad) per coordinate
#: (a ``None`` range: no stop; ball-and-socket joints have no stops).
#: Signs follow the joint axes of :func:`ahbm.models.human15`: a positive
#: hip y rotation is extension, positive knee and elbow angles are flexion.
#: Estimates (same order as passive joint data, e.g. Riener & Edrich 1999).
JOINT_PROPERTIES = {
    "lumbar": {"k": 300.0, "c": 10.0, "rom": [(-0.35, 0.6), (-0.35, 0.35), (-0.35, 0.35)]},
    "thoracic": {"k": 300.0, "c": 10.0, "rom": [(-0.25, 0.4), (-0.3, 0.3), (-0.4, 0.4)]},
    "lower_neck": {"k": 40.0, "c": 1.0, "rom": None},
    "upper_neck": {"k": 40.0, "c": 1.0, "rom": [(-0.6, 0.6), (-0.5, 0.5), (-1.0, 1.0)]},
    "shoulder": {"k": 20.0, "c": 1.0, "rom": None},
    "elbow": {"k": 10.0, "c": 0.5, "rom": [(-0.05, 2.5)]},
    "hip": {"k": 150.0, "c": 5.0, "rom": [(-2.0, 0.35), (-0.6, 0.6), (-0.7, 0.7)]},
    "knee": {"k": 80.0, "c": 3.0, "rom": [(-0.05, 2.3)]},
    "ankle": {"k": 50.0, "c": 1.5, "rom": [(-0.8, 0.5), (-0.4, 0.4)]},
}
_HARDENING_ANGLE = 0.5  # rad: the cubic term equals the linear one here
_STOP_STIFFNESS = 5.0e3  # N m / rad^2
_STOP_DAMPING = 50.0  # N m s / rad^2


def whole_body_model(
    *, mass: float = 75.0, height: float = 1.8, sex: str = "male", gravity=(0.0, 0.0, -9.81)
) -> Model:
    """Build the 15-segment whole-body model for a subject.

    Parameters
    ----------
    mass : float, optional
        Body mass, kg (default 75).
    height : float, optional
        Stature, m (default 1.8).
    sex : {"male", "female"}, optional
        Selects the de Leva (1996) column.
    gravity : array_like, shape (3,), optional
        Gravity in the world frame, m/s².

    Returns
    -------
    Model
        The :func:`ahbm.models.human15` tree (15 bodies, nq 42, nv 38; same
        joints, geometry and markers) with masses, centres of mass and
        inertias from the ``"de_leva_3trunk"`` table: pelvis = lower trunk,
        abdomen = middle trunk, thorax = upper trunk, forearm = forearm +
        hand; de Leva's head segment includes the neck, of which a quarter
        of the mass is given to the neck body (centre of mass at
        mid-length, the head's relative radii of gyration).

    Raises
    ------
    ModelError
        Bad mass, height or sex.

    Notes
    -----
    Segment lengths are those of the model (stature-scaled HeiMan/de Leva
    male proportions for both sexes); the table supplies mass fractions,
    COM positions and radii of gyration relative to those lengths
    (``m = m̄ M``, ``c = c̄ L``, ``I = m L² diag(r̄²)``). Trunk and head
    bodies have their origin at the lower joint while the table measures
    from the upper landmark, so their COM is ``(1 − c̄) L`` above the joint.

    Examples
    --------
    >>> m = whole_body_model(mass=75.0, height=1.8)
    >>> m.n_bodies, m.nv, round(m.total_mass, 6)
    (15, 38, 75.0)
    >>> f = whole_body_model(mass=60.0, height=1.65, sex="female")
    >>> round(f.total_mass, 2)  # the fractions sum to 0.9999
    59.99
    """
    try:
        model = human15(mass=mass, height=height, gravity=gravity)
    except AhbmError as err:
        raise ModelError(f"whole_body_model: {err}") from err
    H = float(height)
    pos = {b.name: b.position for b in model.bodies}
    head_length = model.bodies[model.body_index("head")].markers["vertex"][2]
    lengths = {
        "lower_trunk": pos["abdomen"][2],
        "middle_trunk": pos["thorax"][2],
        "upper_trunk": pos["neck"][2],
        "head": head_length,
        "upper_arm": -pos["forearm_r"][2],
        "forearm": HUMAN15_PARAMETERS["forearm"]["length"] * H,
        "hand": HUMAN15_PARAMETERS["hand"]["length"] * H,
        "thigh": -pos["shank_r"][2],
        "shank": -pos["foot_r"][2],
        "foot": HUMAN15_PARAMETERS["foot"]["length"] * H,
    }
    try:
        p = segment_parameters(
            "de_leva_3trunk", mass=mass, height=height, segment_lengths=lengths, sex=sex
        )
    except AhbmError as err:
        raise ModelError(f"whole_body_model: {err}") from err
    neck_length = pos["head"][2]

    def top_origin(seg):  # table measured from the upper landmark; body origin at the bottom
        s = p[seg]
        return s.mass, np.array([0.0, 0.0, s.length]) + s.com, s.inertia

    inertial = {
        "pelvis": top_origin("lower_trunk"),
        "abdomen": top_origin("middle_trunk"),
        "thorax": top_origin("upper_trunk"),
    }
    m_hn, c_h, I_hn = top_origin("head")
    r_rel = np.sqrt(np.diag(I_hn) / m_hn) / p["head"].length
    inertial["head"] = (0.75 * m_hn, c_h, 0.75 * I_hn)
    m_n = 0.25 * m_hn
    inertial["neck"] = (
        m_n,
        np.array([0.0, 0.0, 0.5 * neck_length]),
        m_n * np.diag((r_rel * neck_length) ** 2),
    )
    for side in "rl":
        inertial[f"upper_arm_{side}"] = (
            p[f"upper_arm_{side}"].mass,
            p[f"upper_arm_{side}"].com,
            p[f"upper_arm_{side}"].inertia,
        )
        fa, hd = p[f"forearm_{side}"], p[f"hand_{side}"]
        inertial[f"forearm_{side}"] = _combine(
            [
                (fa.mass, fa.com, fa.inertia),
                (hd.mass, hd.com + np.array([0.0, 0.0, -fa.length]), hd.inertia),
            ]
        )
        for seg in ("thigh", "shank"):
            s = p[f"{seg}_{side}"]
            inertial[f"{seg}_{side}"] = (s.mass, s.com, s.inertia)
        foot_body = model.bodies[model.body_index(f"foot_{side}")]
        heel = foot_body.markers["heel"]
        s = p[f"foot_{side}"]
        com = np.array([heel[0] + s.com[0], 0.0, 0.5 * heel[2]])
        inertial[f"foot_{side}"] = (s.mass, com, s.inertia)
    data = model.to_dict()
    data["name"] = f"whole_body_{'female' if str(sex).lower().startswith('f') else 'male'}"
    for body in data["bodies"]:
        m, c, inertia = inertial[body["name"]]
        body["mass"] = float(m)
        body["com"] = np.asarray(c, dtype=float).tolist()
        body["inertia"] = np.asarray(inertia, dtype=float).tolist()
    return Model.from_dict(data, source="whole_body_model")


def _hardening(k: float):
    """Cubic-hardening spring ``k (δ + δ³ / δ0²)`` (vectorized)."""

    def f(x):
        x = np.asarray(x, dtype=float)
        return k * (x + x**3 / _HARDENING_ANGLE**2)

    return f


def joint_elements(model: Model, *, properties: dict | None = None, stops: bool = True) -> list:
    """Passive joint elements of the whole-body model: springs, dampers, joint stops.

    Parameters
    ----------
    model : Model
        A :func:`whole_body_model` (or :func:`~ahbm.models.human15`).
    properties : dict, optional
        Overrides of :data:`JOINT_PROPERTIES` entries (by joint stem:
        ``"hip"`` applies to ``hip_r`` and ``hip_l``).
    stops : bool, optional
        Add the soft joint stops (default True).

    Returns
    -------
    list of ForceElement
        For each Euler, universal and pin joint coordinate a
        :class:`~ahbm.dynamics.joint_forces.RotationalSpringDamper` with the
        stiffness ``k (δ + δ³/δ0²)`` (δ0 = 0.5 rad) and damping ``c``, plus a
        :class:`~ahbm.dynamics.joint_forces.JointStop` (``k_s δ²``, 5000 N m/rad²,
        damping 50 N m s/rad²) outside the range of motion; for each
        ball-and-socket joint a rotational
        :class:`~ahbm.dynamics.cartesian_forces.Bushing` (``k``, ``c`` about all axes).

    Raises
    ------
    ModelError
        A joint of the model has no properties.

    Examples
    --------
    >>> m = whole_body_model()
    >>> els = joint_elements(m)
    >>> sum(type(e).__name__ == "Bushing" for e in els)
    3
    """
    check_model(model)
    if properties is not None and not isinstance(properties, dict):
        raise DataError(
            f"Expected `properties` to be a dict {{joint: {{option: value}}}}, got "
            f"{type(properties).__name__}"
        )
    props = {k: dict(v) for k, v in JOINT_PROPERTIES.items()}
    for key, val in (properties or {}).items():
        if not isinstance(val, dict):
            raise DataError(f"`properties[{key!r}]` must be a dict of options, got {val!r}")
        props.setdefault(key, {}).update(val)
    out = []
    for body in model.bodies:
        j = body.joint
        if body.parent < 0 or j.type == "fixed":
            continue
        stem = j.name[:-2] if j.name.endswith(("_r", "_l")) else j.name
        if stem not in props:
            raise ModelError(
                f"joint_elements: no properties for joint {j.name!r}; add {stem!r} to `properties`"
            )
        pr = props[stem]
        k, c = float(pr["k"]), float(pr["c"])
        if j.type == "spherical":
            parent = model.bodies[body.parent].name
            out.append(
                Bushing(
                    parent,
                    body.name,
                    frame_a={"position": body.position, "rotation": body.rotation},
                    stiffness=[k, k, k, 0, 0, 0],
                    damping=[c, c, c, 0, 0, 0],
                    name=j.name,
                )
            )
            continue
        if j.type not in ("revolute", "universal", "euler"):
            raise ModelError(f"joint_elements: unsupported joint type {j.type!r} of {j.name!r}")
        rom = pr.get("rom")
        if rom is not None and len(rom) != len(j.coordinates):
            raise ModelError(
                f"joint_elements: joint {j.name!r} has {len(j.coordinates)} coordinates but "
                f"properties[{stem!r}]['rom'] gives {len(rom)} ranges"
            )
        for n, coord in enumerate(j.coordinates):
            out.append(
                RotationalSpringDamper(coord, stiffness=_hardening(k), damping=c, name=coord)
            )
            if stops and rom is not None and rom[n] is not None:
                lo, hi = rom[n]
                out.append(
                    JointStop(
                        coord,
                        lo,
                        hi,
                        _STOP_STIFFNESS,
                        _STOP_DAMPING,
                        name=f"{coord}_stop",
                    )
                )
    return out


def chest_impact(
    model: Model,
    *,
    peak: float = 4000.0,
    duration: float = 0.03,
    onset: float = 0.01,
    direction=(-1.0, 0.0, 0.0),
) -> BodyForce:
    """Impact force on the sternum: a half-sine pulse in a fixed world direction.

    Parameters
    ----------
    model : Model
        A :func:`whole_body_model`.
    peak : float, optional
        Peak force, N (default 4 kN).
    duration : float, optional
        Pulse duration, s (default 30 ms).
    onset : float, optional
        Pulse start, s.
    direction : array_like, shape (3,), optional
        World direction (normalized); default rearwards (−x).

    Returns
    -------
    BodyForce
        Acting on the thorax at the sternum: 0.1 m anterior to the
        thorax axis at mid-thorax height (point ``.point``).

    Notes
    -----
    AHBM §5.2.3 applied an impact force pulse of a few kN at the chest; its
    exact shape is only shown in a figure, so a half-sine of 4 kN over 30 ms
    (impulse 76 N s) is used here.

    Examples
    --------
    >>> f = chest_impact(whole_body_model())
    >>> float(f.force(0.025)[0])
    -4000.0
    """
    check_model(model)
    peak = as_finite_float(peak, "peak", unit="N")
    duration = as_positive_float(duration, "duration", unit="s")
    onset = as_finite_float(onset, "onset", unit="s")
    d = as_float_array(direction, "direction")
    if d.shape != (3,) or np.linalg.norm(d) == 0:
        raise DataError(f"`direction` must be a non-zero 3-vector, got {direction!r}")
    d = d / np.linalg.norm(d)
    top = model.bodies[model.body_index("neck")].position[2]
    point = np.array([0.1, 0.0, 0.5 * top])

    def force(t):
        return half_sine(t, peak=peak, duration=duration, onset=onset) * d

    return BodyForce("thorax", force, point=point, name="chest_impact")
