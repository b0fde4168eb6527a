"""Smooth compliant contact of spheres with a plane (a half-space), for simulation and optimization.

The contact law of the predictive simulations of Falisse et al. (2019) and
Serrancolí et al. (2019), which OpenSim 4 implements as
``SmoothSphereHalfSpaceForce``: a Hertz normal force with Hunt–Crossley
dissipation whose switches (penetration > 0, no pulling) are ``tanh``
transitions, and a friction force that rises smoothly from zero slip. Every
function is once differentiable in the state (except the friction law's
change of branch at ``|v_t| = v_tr``, where the force is continuous and its
slope is not: the published law), so gradient-based optimizers can use it.

:func:`smooth_contact_law` is the law on its inputs and
:func:`sphere_halfspace_force` the geometry around it; both are written once
against an array namespace ``xp`` (``numpy`` for frames along the last axis,
or the ``casadi`` module for symbols), so that the force element
:class:`SmoothSphereContact` (for :func:`ahbm.dynamics.simulate`) and
:mod:`ahbm.optimize.contact` (for optimal control) evaluate the same
expression. :func:`smooth_shape_contacts` makes spheres of a model's
collision shapes.

References
----------
A. Falisse, G. Serrancolí, C. L. Dembia, J. Gillis, I. Jonkers, F. De Groote,
"Rapid predictive simulations with complex musculoskeletal models suggest
that diverse healthy and pathological human gaits can emerge from similar
control strategies", *J. R. Soc. Interface* 16 (2019) 20190402.
G. Serrancolí, A. Falisse, C. Dembia, J. Vantilt, K. Tanghe, D. Lefeber,
I. Jonkers, J. De Schutter, F. De Groote, "Subject-exoskeleton contact
model calibration leads to accurate interaction force predictions", *IEEE
Trans. Neural Syst. Rehabil. Eng.* 27 (2019) 1597–1605.
K. H. Hunt, F. R. E. Crossley, "Coefficient of restitution interpreted as
damping in vibroimpact", *J. Appl. Mech.* 42 (1975) 440–445.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import numpy as np

from ahbm._engine import state as _st
from ahbm._engine.arrays import mtv_bl, mv_bl
from ahbm._internal.validation import as_nonnegative_float, as_positive_float
from ahbm.dynamics.force_element import ForceElement, _body, _gen, _vec3
from ahbm.errors import DataError, ModelError
from ahbm.kinematics.geometry import CollisionShape, collision_shapes
from ahbm.types import ResultRepr

__all__ = [
    "SmoothContactParameters",
    "smooth_contact_law",
    "sphere_halfspace_force",
    "SmoothSphereContact",
    "hunt_crossley_law",
    "HuntCrossleySphereContact",
    "SmoothContactState",
    "smooth_shape_contacts",
]


@dataclass(frozen=True)
class SmoothContactParameters:
    """Parameters of the smooth sphere–plane contact law (OpenSim's names).

    The defaults are those of the foot–ground contact of Falisse et al.
    (2019) (stiffness 1e6 N/m², dissipation 2 s/m, friction 0.8/0.8/0.5,
    transition velocity 0.2 m/s) and OpenSim's smoothing constants
    (``constant_contact_force`` 1e-5, ``hertz_smoothing`` 300,
    ``hunt_crossley_smoothing`` 50).

    Parameters
    ----------
    stiffness : float
        Plane-strain modulus ``E``, N/m² (> 0).
    dissipation : float
        Hunt–Crossley dissipation ``c``, s/m (>= 0).
    static_friction, dynamic_friction : float
        Friction coefficients ``μs``, ``μd`` (>= 0).
    viscous_friction : float
        ``μv``, s/m (>= 0): friction grows by ``μv |v_t|`` times the normal force.
    transition_velocity : float
        Slip velocity ``v_tr`` at which the friction reaches ``μs``, m/s (> 0).
    constant_contact_force : float
        Smoothing constant ``ε`` (> 0) added under the square roots of the
        penetration (m²) and of the slip speed (m²/s²); OpenSim calls it a force.
    hertz_smoothing : float
        ``b_d``, 1/m (> 0): steepness of the ``tanh`` switch on the penetration.
    hunt_crossley_smoothing : float
        ``b_v``, s/m (> 0): steepness of the switch that keeps the force from pulling.

    Examples
    --------
    >>> SmoothContactParameters(stiffness=3e6).dissipation
    2.0
    """

    stiffness: float = 1e6
    dissipation: float = 2.0
    static_friction: float = 0.8
    dynamic_friction: float = 0.8
    viscous_friction: float = 0.5
    transition_velocity: float = 0.2
    constant_contact_force: float = 1e-5
    hertz_smoothing: float = 300.0
    hunt_crossley_smoothing: float = 50.0

    def __post_init__(self):
        units = {"stiffness": "N/m^2", "transition_velocity": "m/s", "hertz_smoothing": "1/m",
                 "hunt_crossley_smoothing": "s/m", "constant_contact_force": ""}  # fmt: skip
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name in units:
                v = as_positive_float(v, f.name, unit=units[f.name])
            else:
                v = as_nonnegative_float(v, f.name)
            object.__setattr__(self, f.name, float(v))


def _parameters(parameters, options, where: str) -> SmoothContactParameters:
    if parameters is None:
        parameters = SmoothContactParameters()
    elif not isinstance(parameters, SmoothContactParameters):
        raise DataError(
            f"{where}: `parameters` must be a SmoothContactParameters, got "
            f"{type(parameters).__name__}"
        )
    known = {f.name for f in fields(SmoothContactParameters)}
    unknown = sorted(set(options) - known)
    if unknown:
        raise DataError(f"{where}: unknown contact parameter(s) {unknown}; known: {sorted(known)}")
    return replace(parameters, **options) if options else parameters


def smooth_contact_law(depth, rate, slip, radius, parameters, *, xp=np):
    """Normal force and friction of a sphere on a plane: Hertz, Hunt–Crossley, smooth friction.

    Parameters
    ----------
    depth : array_like or casadi expression
        Penetration ``δ`` of the sphere into the plane, m (negative: apart).
    rate : same kind
        ``δ̇``, m/s (positive: moving into the plane).
    slip : sequence of 3 (arrays or expressions)
        Tangential velocity ``v_t`` of the sphere's contact point relative to
        the plane, m/s (components along the first axis).
    radius : float
        Sphere radius ``r``, m.
    parameters : SmoothContactParameters
    xp : module, optional
        ``numpy`` (default) or ``casadi``: the namespace of ``sqrt``,
        ``tanh`` and ``fmin``.

    Returns
    -------
    normal : same kind as `depth`
        Normal force ``F_n``, N (pushes the sphere out of the plane).
    friction : (3, ...) array or casadi (3, 1)
        Friction force on the sphere, N (opposite to `slip`).

    Notes
    -----
    With ``k = E^(2/3)/2`` and the smoothing constants ``ε``, ``b_d``, ``b_v``::

        F_H = (4/3) k sqrt(r k) (sqrt(δ² + ε))^(3/2) (1/2 + tanh(b_d δ)/2)
        F_n = F_H (1 + (3/2) c δ̇) (1/2 + tanh(b_v (δ̇ + 2/(3c)))/2)
        v_s = sqrt(|v_t|² + ε),  ν = v_s / v_tr
        μ = min(ν, 1) (μd + 2 (μs − μd) / (1 + ν²)) + μv v_s
        F_t = −μ F_n v_t / v_s

    the Hertz force of a sphere on a plane of equal materials
    (``F = (4/3) E* sqrt(r) δ^(3/2)`` with ``E* = k^(3/2)``) and Hunt and
    Crossley's (1975) dissipation ``(1 + (3/2) c δ̇)``, with each switch
    made smooth as in Falisse et al. (2019) and OpenSim's
    ``SmoothSphereHalfSpaceForce`` (to which the tests compare it to 1e-10).
    The second switch keeps the normal force from pulling where the
    dissipation term ``1 + (3/2) c δ̇`` turns negative; without dissipation
    (``c = 0``) it is 1.

    Examples
    --------
    >>> p = SmoothContactParameters(stiffness=1e6)
    >>> Fn, Ft = smooth_contact_law(np.array([0.005]), np.array([0.0]), np.zeros((3, 1)),
    ...                             0.03, p)
    >>> Fn.round(2), Ft.ravel().tolist()
    (array([35.39]), [-0.0, -0.0, -0.0])
    """
    p = parameters
    eps = p.constant_contact_force
    k = 0.5 * p.stiffness ** (2.0 / 3.0)
    hertz = (4.0 / 3.0) * k * np.sqrt(radius * k) * xp.sqrt(depth * depth + eps) ** 1.5
    hertz = hertz * (0.5 + 0.5 * xp.tanh(p.hertz_smoothing * depth))
    c = p.dissipation
    normal = hertz * (1.0 + 1.5 * c * rate)
    if c > 0:
        normal = normal * (
            0.5 + 0.5 * xp.tanh(p.hunt_crossley_smoothing * (rate + 2.0 / (3.0 * c)))
        )
    speed = xp.sqrt(slip[0] * slip[0] + slip[1] * slip[1] + slip[2] * slip[2] + eps)
    ratio = speed / p.transition_velocity
    mu_s, mu_d = p.static_friction, p.dynamic_friction
    mu = xp.fmin(ratio, 1.0) * (mu_d + 2.0 * (mu_s - mu_d) / (1.0 + ratio * ratio))
    mu = mu + p.viscous_friction * speed
    scale = -(normal * mu / speed)
    if xp is np:
        friction = scale * np.asarray(slip)
    else:
        friction = xp.vertcat(scale * slip[0], scale * slip[1], scale * slip[2])
    return normal, friction


def hunt_crossley_law(depth, rate, slip, radius, parameters, *, xp=np):
    """The non-smooth law of Simbody's (OpenSim's) ``HuntCrossleyForce`` for a sphere on a plane.

    Parameters and returns as :func:`smooth_contact_law`; the smoothing
    constants of `parameters` are not used.

    Notes
    -----
    The limit of :func:`smooth_contact_law` with the switches made sharp
    (equal materials: ``k = E^(2/3)/2``)::

        F_H = (4/3) k sqrt(r k) max(δ, 0)^(3/2)
        f = F_H (1 + (3/2) c δ̇),   F_n = max(f, 0)
        F_t = −μ(|v_t| / v_tr) F_n v_t / |v_t|   (0 at |v_t| = 0)

    with the friction coefficient of :func:`smooth_contact_law` at
    ``ε = 0``. Simbody scales the friction by ``f`` rather than ``F_n``, so
    that a contact separating faster than ``2/(3c)`` is pushed along its slip
    there; here it has no friction (no normal force, no friction). Kinks at
    ``δ = 0``, ``f = 0`` and ``v_t = 0``: for simulation, not for
    gradient-based optimization.

    Examples
    --------
    >>> p = SmoothContactParameters(stiffness=1e6)
    >>> Fn, _ = hunt_crossley_law(np.array([0.005, -0.001]), np.zeros(2), np.zeros((3, 2)),
    ...                           0.03, p)
    >>> Fn.round(2)
    array([28.87,  0.  ])
    """
    p = parameters
    k = 0.5 * p.stiffness ** (2.0 / 3.0)
    hertz = (4.0 / 3.0) * k * np.sqrt(radius * k) * xp.fmax(depth, 0.0) ** 1.5
    normal = xp.fmax(hertz * (1.0 + 1.5 * p.dissipation * rate), 0.0)
    speed = xp.sqrt(slip[0] * slip[0] + slip[1] * slip[1] + slip[2] * slip[2])
    ratio = speed / p.transition_velocity
    mu_s, mu_d = p.static_friction, p.dynamic_friction
    mu = xp.fmin(ratio, 1.0) * (mu_d + 2.0 * (mu_s - mu_d) / (1.0 + ratio * ratio))
    mu = mu + p.viscous_friction * speed
    scale = -(normal * mu / (speed + (speed == 0)))  # v_t = 0: no friction
    if xp is np:
        friction = scale * np.asarray(slip)
    else:
        friction = xp.vertcat(scale * slip[0], scale * slip[1], scale * slip[2])
    return normal, friction


def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def sphere_halfspace_force(
    center, normal, plane_point, radius, velocity, parameters, *, xp=np, law=None
):
    """Force of a half-space on a sphere, from the sphere's centre and the plane.

    Parameters
    ----------
    center : (3, ...) array or casadi (3, 1)
        World position of the sphere's centre, m.
    normal : (3, ...) or (3,)
        Unit outward normal of the plane (from the solid into free space), world.
    plane_point : (3, ...) or (3,)
        A point of the plane (the half-space's surface), world, m.
    radius : float
        m.
    velocity : callable
        ``velocity(point) -> (3, ...)``: the velocity of the sphere's body
        point at the world point ``point`` relative to the plane's body point
        there, m/s.
    parameters : SmoothContactParameters
    xp : module, optional
        ``numpy`` or ``casadi``.
    law : callable, optional
        :func:`smooth_contact_law` (default) or :func:`hunt_crossley_law`.

    Returns
    -------
    force : (3, ...)
        Force on the sphere, N (the half-space's body receives ``−force``).
    point : (3, ...)
        Where it acts, m: midway through the penetrated layer,
        ``c − (r − δ/2) n`` (equal stiffness of both surfaces).
    normal_force : (...)
        N.
    depth : (...)
        Penetration ``δ = r − n·(c − p₀)``, m.

    Notes
    -----
    ``δ̇ = −n·v`` and ``v_t = v − (n·v) n`` with the relative velocity ``v``
    of the contact point; the force is ``F_n n + F_t``
    (:func:`smooth_contact_law`).
    """
    if xp is np:
        center, normal, plane_point = (
            np.asarray(a, dtype=float) for a in (center, normal, plane_point)
        )
        normal = normal[:, None] if normal.ndim == 1 else normal
        plane_point = plane_point[:, None] if plane_point.ndim == 1 else plane_point
    depth = radius - _dot(normal, [center[i] - plane_point[i] for i in range(3)])
    point = center - (radius - 0.5 * depth) * normal
    v = velocity(point)
    vn = _dot(normal, v)
    slip = [v[i] - vn * normal[i] for i in range(3)]
    law = smooth_contact_law if law is None else law
    fn, ft = law(depth, -vn, slip, radius, parameters, xp=xp)
    return fn * normal + ft, point, fn, depth


@dataclass(frozen=True, repr=False)
class SmoothContactState(ResultRepr):
    """The contact of one sphere at given states (result of :meth:`SmoothSphereContact.evaluate`).

    Attributes
    ----------
    force : ndarray, shape (..., 3)
        Force on the sphere's body, world, N.
    point : ndarray, shape (..., 3)
        Its point of application, world, m.
    normal_force : ndarray, shape (...)
        N.
    depth : ndarray, shape (...)
        Penetration, m (negative: apart).
    """

    force: np.ndarray
    point: np.ndarray
    normal_force: np.ndarray
    depth: np.ndarray


class SmoothSphereContact(ForceElement):
    """A contact sphere on a body against a half-space: the smooth Hunt–Crossley law.

    Parameters
    ----------
    body : str or int
        Body carrying the sphere.
    center : array_like, shape (3,)
        Centre of the sphere in the body frame, m.
    radius : float
        m (> 0).
    parameters : SmoothContactParameters, optional
    plane_body : str or int, optional
        Body carrying the half-space (default ``"ground"``).
    plane_point : array_like, shape (3,), optional
        A point of the plane in the plane body's frame, m (default origin).
    plane_normal : array_like, shape (3,), optional
        Outward normal of the plane (towards free space) in the plane body's
        frame (normalized here); default ``(0, 0, 1)``.
    name : str, optional
    **options
        Fields of :class:`SmoothContactParameters` overriding `parameters`
        (``stiffness=...``, ``dissipation=...``).

    Notes
    -----
    :func:`sphere_halfspace_force` with the relative velocity of the
    contact point ``P`` (the sphere body's point there minus the plane
    body's); ``τ = (J_s(P) − J_h(P))ᵀ F`` with the Jacobians of the body
    points at ``P``. This is OpenSim's ``SmoothSphereHalfSpaceForce`` with
    the half-space's outward normal ``n = −x`` of its frame;
    :func:`ahbm.opensim.osim_smooth_contacts` reads them from ``.osim`` files.

    Examples
    --------
    >>> from ahbm.kinematics.tree import Model
    >>> m = Model()
    >>> _ = m.add_body("ball", "ground", {"type": "prismatic", "axis": [0, 0, 1]}, mass=1.0)
    >>> c = SmoothSphereContact("ball", [0, 0, 0], 0.05, stiffness=1e6)
    >>> float(c.generalized_force(m, [0.045], [0.0])[0]).__round__(2)  # 5 mm deep (N)
    45.69
    """

    law = staticmethod(smooth_contact_law)

    def __init__(self, body, center, radius, *, parameters=None, plane_body="ground",
                 plane_point=(0.0, 0.0, 0.0), plane_normal=(0.0, 0.0, 1.0), name=None,
                 **options):  # fmt: skip
        self.name = name or f"sphere_{body}"
        self.parameters = _parameters(parameters, options, f"contact {self.name!r}")
        self.body = body
        self.center = _vec3(center, "center")
        self.radius = as_positive_float(radius, "radius", unit="m")
        self.plane_body = plane_body
        self.plane_point = _vec3(plane_point, "plane_point")
        n = _vec3(plane_normal, "plane_normal")
        if np.linalg.norm(n) < 1e-12:
            raise DataError(f"contact {self.name!r}: `plane_normal` must be a non-zero vector")
        self.plane_normal = n / np.linalg.norm(n)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(name={self.name!r}, body={self.body!r}, "
                f"radius={self.radius:g}, plane_body={self.plane_body!r})")  # fmt: skip

    def validate(self, model):
        where = f"force element '{self.name}'"
        b = _body(model, self.body, where)
        h = _body(model, self.plane_body, where)
        if b < 0:
            raise ModelError(f"{where}: the sphere must be on a body, not on the ground")
        if b == h:
            raise ModelError(f"{where}: the sphere and the half-space are on the same body")

    def _evaluate(self, kin):
        where = f"force element '{self.name}'"
        b = _body(kin.model, self.body, where)
        h = _body(kin.model, self.plane_body, where)
        Rh, oh = _st.rotation_bl(kin, h), _st.origin_bl(kin, h)
        n = mv_bl(Rh, self.plane_normal[:, None])
        p0 = oh + mv_bl(Rh, self.plane_point[:, None])
        c = _st.point_bl(kin, b, self.center[:, None])
        Rb, ob = _st.rotation_bl(kin, b), _st.origin_bl(kin, b)

        def velocity(point):
            v = _st.point_velocity_bl(kin, b, mtv_bl(Rb, point - ob))
            if h >= 0:
                v = v - _st.point_velocity_bl(kin, h, mtv_bl(Rh, point - oh))
            return v

        force, point, fn, depth = sphere_halfspace_force(
            c, n, p0, self.radius, velocity, self.parameters, law=self.law
        )
        return b, h, force, point, fn, depth

    def evaluate(self, model, q, qd, *, kin=None) -> SmoothContactState:
        """Force, point, normal force and penetration at states ``(q (..., nq), qd (..., nv))``."""
        kin = _st.resolve(model, kin, q, qd, needs_qd=True)
        _, _, force, point, fn, depth = self._evaluate(kin)
        return SmoothContactState(
            force=_st.out(kin, force),
            point=_st.out(kin, point),
            normal_force=_st.out(kin, fn),
            depth=_st.out(kin, depth),
        )

    def _gf(self, kin, t):
        b, h, force, point, _, _ = self._evaluate(kin)
        tau = _gen(_st.points_jacobian_bl(kin, b, point), force)
        if h >= 0:
            tau -= _gen(_st.points_jacobian_bl(kin, h, point), force)
        return tau


class HuntCrossleySphereContact(SmoothSphereContact):
    """A contact sphere with the non-smooth law of OpenSim's ``HuntCrossleyForce``.

    Parameters as :class:`SmoothSphereContact` (the smoothing constants are
    not used); the law is :func:`hunt_crossley_law`.
    :func:`ahbm.opensim.osim_smooth_contacts` makes these of the
    sphere–half-space pairs of a ``HuntCrossleyForce``.

    Examples
    --------
    >>> from ahbm.kinematics.tree import Model
    >>> m = Model()
    >>> _ = m.add_body("ball", "ground", {"type": "prismatic", "axis": [0, 0, 1]}, mass=1.0)
    >>> c = HuntCrossleySphereContact("ball", [0, 0, 0], 0.05, stiffness=1e6)
    >>> [round(float(c.generalized_force(m, [z], [0.0])[0]), 2) for z in (0.045, 0.06)]
    [37.27, 0.0]
    """

    law = staticmethod(hunt_crossley_law)


def smooth_shape_contacts(model, shapes=None, *, parameters=None, **options) -> list:
    """Smooth contact spheres of a model's collision shapes against the ground plane.

    Parameters
    ----------
    model : Model
    shapes : sequence of CollisionShape or str, optional
        Shapes (or names of the model's shapes); default all of
        :func:`ahbm.kinematics.geometry.collision_shapes` ``(model)``, e.g. the
        heel sphere and forefoot capsule of
        :func:`ahbm.kinematics.contact.foot_contact_shapes`.
    parameters : SmoothContactParameters, optional
    **options
        Contact parameters (``stiffness=``, ...) and the keywords
        ``plane_point``/``plane_normal`` of :class:`SmoothSphereContact`.

    Returns
    -------
    list of SmoothSphereContact
        One sphere per vertex of each shape's core (a sphere gives one, a
        capsule its two end spheres, a lozenge three), named
        ``<shape>`` or ``<shape>_<k>``.

    Examples
    --------
    >>> from ahbm.kinematics.tree import Model
    >>> from ahbm.kinematics.contact import foot_contact_shapes
    >>> m = Model("foot")
    >>> _ = m.add_body("foot", "ground", {"type": "free_euler", "sequence": "XYZ"}, mass=1.0,
    ...                inertia=np.eye(3) * 0.01)
    >>> m.collision = foot_contact_shapes("foot", length=0.26, height=0.08, posterior=0.06)
    >>> [c.name for c in smooth_shape_contacts(m)]
    ['foot_heel', 'foot_forefoot_0', 'foot_forefoot_1']
    """
    own = {s.name: s for s in collision_shapes(model)}
    if shapes is None:
        shapes = list(own.values())
    elif isinstance(shapes, (str, CollisionShape)):
        shapes = [shapes]
    out = []
    for k, s in enumerate(shapes):
        if isinstance(s, str):
            if s not in own:
                raise ModelError(f"shapes[{k}]: the model has no collision shape {s!r}; its "
                                 f"shapes are {sorted(own)}")  # fmt: skip
            s = own[s]
        if not isinstance(s, CollisionShape):
            raise DataError(
                f"shapes[{k}]: expected a CollisionShape or a shape name, got {type(s).__name__}"
            )
        pts = np.atleast_2d(s.points)
        for j, p in enumerate(pts):
            name = s.name if len(pts) == 1 else f"{s.name}_{j}"
            out.append(SmoothSphereContact(s.body, p, s.radius, parameters=parameters,
                                           name=name, **options))  # fmt: skip
    if not out:
        raise ModelError("no collision shapes to make contact spheres of; add them with "
                         "model.collision = [...] or pass `shapes`")  # fmt: skip
    return out
