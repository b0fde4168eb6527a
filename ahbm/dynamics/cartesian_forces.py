"""Force elements acting on body points and frames.

:class:`PointSpringDamper`, :class:`Bushing`, :class:`BodyForce`,
:class:`BodyTorque`, :class:`PenaltyGroundContact` and
:class:`GravityOverride`, importable from :mod:`ahbm.dynamics.forces` (which
describes the protocol). Bodies are given by name or index, or ``"ground"``
for the inertial frame; points are in the body frame (world frame for the
ground), m.
"""

from __future__ import annotations

import numpy as np

from ahbm._engine import state as _st
from ahbm._engine.arrays import cross, mtv_bl, mv_bl
from ahbm._internal.validation import (
    as_finite_float,
    as_float_array,
    as_nonnegative_float,
    as_positive_float,
)
from ahbm.dynamics.force_element import (
    ForceElement,
    _as_bn,
    _body,
    _characteristic,
    _gen,
    _time_value,
    _vec3,
)
from ahbm.errors import DataError, ModelError
from ahbm.kinematics.geometry import CollisionShape, collision_shapes
from ahbm.kinematics.rotations import matrix_to_rotvec

__all__ = [
    "PointSpringDamper",
    "Bushing",
    "BodyForce",
    "BodyTorque",
    "PenaltyGroundContact",
    "shape_ground_contacts",
    "GravityOverride",
]


class PointSpringDamper(ForceElement):
    """Spring-damper along the line between two body points.

    Parameters
    ----------
    body_a, body_b : str or int
        Bodies (``"ground"`` allowed).
    point_a, point_b : array_like, shape (3,)
        Attachment points in the body frames (world for the ground), m.
    stiffness : float, callable or table
        Force characteristic ``k(l − l0)``, N (N/m for a number); tension positive.
    damping : float, callable or table, optional
        Damper characteristic ``c(l̇)``, N.
    rest_length : float, optional
        Rest length ``l0``, m.
    name : str, optional

    Notes
    -----
    With ``d = p_b − p_a``, ``l = |d|``, ``u = d / l``: the tension
    ``s = k(l − l0) + c(l̇)`` pulls ``b`` towards ``a`` (force ``−s u`` on
    ``b``, ``+s u`` on ``a``); the generalized force is
    ``τ = −(J_b − J_a)ᵀ u s`` with the point Jacobians (the spring of the
    mass-spring-mass test of AHBM §5.2.1, which prints no formula). The
    direction is undefined at zero length; there the element gives no force.

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> s = PointSpringDamper("ground", [0, 0, 0], "pendulum1", [0, 0, -1], stiffness=10.0)
    >>> s.generalized_force(m, np.zeros(4), np.zeros(4))
    array([0., 0., 0., 0.])
    """

    def __init__(
        self, body_a, point_a, body_b, point_b, stiffness, damping=0.0, *, rest_length=0.0,
        name=None,
    ):  # fmt: skip
        self.body_a, self.body_b = body_a, body_b
        self.point_a = _vec3(point_a, "point_a")
        self.point_b = _vec3(point_b, "point_b")
        self.stiffness = _characteristic(stiffness, "stiffness")
        self.damping = _characteristic(damping, "damping")
        self.rest_length = as_nonnegative_float(rest_length, "rest_length", unit="m")
        self.name = name or "point_spring_damper"

    def validate(self, model):
        _body(model, self.body_a, f"force element '{self.name}' body_a")
        _body(model, self.body_b, f"force element '{self.name}' body_b")

    def _geometry_kin(self, kin, rates=True):
        model = kin.model
        a = _body(model, self.body_a, f"force element '{self.name}' body_a")
        b = _body(model, self.body_b, f"force element '{self.name}' body_b")
        ra, rb = self.point_a[:, None], self.point_b[:, None]
        d = _st.point_bl(kin, b, rb) - _st.point_bl(kin, a, ra)
        length = np.sqrt(np.sum(d * d, axis=0))
        safe = np.where(length > 1e-12, length, 1.0)
        u = np.where(length > 1e-12, d / safe, 0.0)
        ldot = None
        if rates:
            dv = _st.point_velocity_bl(kin, b, rb) - _st.point_velocity_bl(kin, a, ra)
            ldot = np.sum(u * dv, axis=0)
        return kin, a, b, ra, rb, length, u, ldot

    def tension(self, model, q, qd, *, kin=None) -> np.ndarray:
        """Tension ``s = k(l − l0) + c(l̇)`` (...), N (positive pulls the points together)."""
        kin = _st.resolve(model, kin, q, qd, needs_qd=True)
        *_, length, u, ldot = self._geometry_kin(kin)
        s = self.stiffness(length - self.rest_length) + self.damping(ldot)
        return s.reshape(kin.batch_shape)

    def length(self, model, q, *, kin=None) -> np.ndarray:
        """Current length (...) of the element, m."""
        kin = _st.resolve(model, kin, q)
        *_, length, _, _ = self._geometry_kin(kin, rates=False)
        return length.reshape(kin.batch_shape)

    def _gf(self, kin, t):
        kin, a, b, ra, rb, length, u, ldot = self._geometry_kin(kin)
        s = self.stiffness(length - self.rest_length) + self.damping(ldot)
        F = -u * s  # force on b
        Jp = _st.point_jacobian_bl
        return _gen(Jp(kin, b, rb), F) - _gen(Jp(kin, a, ra), F)


class Bushing(ForceElement):
    """Six-dimensional viscoelastic element between two body frames.

    Parameters
    ----------
    body_a, body_b : str or int
        Bodies (``"ground"`` allowed).
    frame_a, frame_b : dict, optional
        ``{"position": (3,), "rotation": (3, 3)}`` of the bushing frames in
        the body frames (identity / origin by default).
    stiffness : array_like, shape (6,) or (6, 6)
        Rotational then translational stiffness (N m/rad, N/m), diagonal or full.
    damping : array_like, shape (6,) or (6, 6), optional
        Rotational then translational damping (N m s/rad, N s/m).
    name : str, optional

    Notes
    -----
    With the frames ``A`` (on ``a``) and ``B`` (on ``b``): the deflection is
    ``x = [θ; d]`` with ``θ`` the rotation vector of ``A_R_B`` and ``d`` the
    position of ``B``'s origin in ``A``; its rate is ``ẋ = [ω_rel; ḋ]`` with
    the relative angular velocity in ``A``. The wrench on ``b`` (in ``A``) is
    ``[M; F] = −K x − D ẋ``, applied at ``B``'s origin; ``a`` receives the
    opposite wrench at the same point. For small rotations this is the usual
    linear bushing (e.g. intervertebral elements of head-neck models).

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> bu = Bushing("ground", "pendulum1", stiffness=np.full(6, 10.0))
    >>> float(bu.generalized_force(m, [0.1, 0, 0, 0], np.zeros(4))[0].round(6))
    -1.0
    """

    def __init__(
        self, body_a, body_b, *, frame_a=None, frame_b=None, stiffness, damping=None, name=None
    ):
        self.body_a, self.body_b = body_a, body_b
        self.pa, self.Ea = self._frame(frame_a, "frame_a")
        self.pb, self.Eb = self._frame(frame_b, "frame_b")
        self.K = self._matrix(stiffness, "stiffness")
        self.D = np.zeros((6, 6)) if damping is None else self._matrix(damping, "damping")
        self.name = name or "bushing"

    @staticmethod
    def _frame(frame, what):
        if frame is None:
            return np.zeros(3), np.eye(3)
        if not isinstance(frame, dict):
            raise DataError(f"`{what}` must be a dict with 'position' and 'rotation'")
        p = _vec3(frame.get("position", (0.0, 0.0, 0.0)), f"{what}['position']")
        R = as_float_array(frame.get("rotation", np.eye(3)), f"{what}['rotation']")
        if R.shape != (3, 3) or not np.allclose(R.T @ R, np.eye(3), atol=1e-8):
            raise DataError(f"`{what}['rotation']` must be a 3x3 rotation matrix")
        return p, R

    @staticmethod
    def _matrix(value, what):
        arr = as_float_array(value, what)
        if arr.shape == (6,):
            return np.diag(arr)
        if arr.shape == (6, 6):
            return arr
        raise DataError(f"Expected `{what}` to have shape (6,) or (6, 6), got {arr.shape}")

    def validate(self, model):
        _body(model, self.body_a, f"force element '{self.name}' body_a")
        _body(model, self.body_b, f"force element '{self.name}' body_b")

    def deflection(self, model, q, qd, *, kin=None):
        """Deflection ``x`` and rate ``ẋ`` (..., 6) in frame A (see Notes)."""
        kin = _st.resolve(model, kin, q, qd, needs_qd=True)
        kin, a, b, RA, x, xd, pB = self._state_kin(kin)
        return _st.out(kin, x), _st.out(kin, xd)

    def _state_kin(self, kin):
        model = kin.model
        a = _body(model, self.body_a, f"force element '{self.name}' body_a")
        b = _body(model, self.body_b, f"force element '{self.name}' body_b")
        RA = np.einsum("ijN,jk->ikN", _st.rotation_bl(kin, a), self.Ea)
        RB = np.einsum("ijN,jk->ikN", _st.rotation_bl(kin, b), self.Eb)
        pA = _st.point_bl(kin, a, self.pa[:, None])
        pB = _st.point_bl(kin, b, self.pb[:, None])
        rel = np.einsum("jiN,jkN->Nik", RA, RB)
        theta = matrix_to_rotvec(rel).T
        d = mtv_bl(RA, pB - pA)
        wa, wb = _st.angular_velocity_bl(kin, a), _st.angular_velocity_bl(kin, b)
        va = _st.point_velocity_bl(kin, a, self.pa[:, None])
        vb = _st.point_velocity_bl(kin, b, self.pb[:, None])
        w_rel = mtv_bl(RA, wb - wa)
        d_dot = mtv_bl(RA, vb - va - cross(wa, pB - pA, axis=-2))
        x = np.concatenate([theta, d])
        xd = np.concatenate([w_rel, d_dot])
        return kin, a, b, RA, x, xd, pB

    def _gf(self, kin, t):
        kin, a, b, RA, x, xd, pB = self._state_kin(kin)
        W = -(self.K @ x) - (self.D @ xd)
        M = mv_bl(RA, W[:3])
        F = mv_bl(RA, W[3:])
        Jw, Jp = _st.angular_jacobian_bl, _st.point_jacobian_bl
        tau = _gen(Jw(kin, b), M) + _gen(Jp(kin, b, self.pb[:, None]), F)
        if a >= 0:
            # the point of body a coincident with B
            ra = mtv_bl(_st.rotation_bl(kin, a), pB - _st.origin_bl(kin, a))
            tau -= _gen(Jw(kin, a), M) + _gen(Jp(kin, a, ra), F)
        return tau


class BodyForce(ForceElement):
    """External force on a body point: constant, a function of time, or a follower.

    Parameters
    ----------
    body : str or int
    force : array_like, shape (3,), or callable ``f(t) -> (3,)``
        Force, N.
    point : array_like, shape (3,), optional
        Application point in the body frame, m.
    frame : {"world", "local"}
        ``"local"``: the force is fixed in the body frame and turns with it
        (follower force, AHBM §5.2.2).
    name : str, optional

    Notes
    -----
    ``τ = J_pᵀ F_world`` with ``F_world = R_body F`` for a follower force.

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> f = BodyForce("pendulum1", [0, 1.0, 0], point=[0, 0, -1], frame="local")
    >>> float(f.generalized_force(m, np.zeros(4), np.zeros(4))[0])
    1.0
    """

    def __init__(self, body, force, *, point=(0.0, 0.0, 0.0), frame="world", name=None):
        frame = _element_frame(frame, "BodyForce")
        self.body = body
        self.force = force if callable(force) else _vec3(force, "force")
        self.point = _vec3(point, "point")
        self.frame = frame
        self.name = name or f"force_{body}"

    def validate(self, model):
        b = _body(model, self.body, f"force element '{self.name}'")
        if b < 0:
            raise ModelError(f"force element '{self.name}': cannot apply a force to the ground")

    def world_force(self, model, q, *, t=0.0, kin=None) -> np.ndarray:
        """The force in world coordinates (..., 3), N."""
        kin = _st.resolve(model, kin, q)
        return _st.out(kin, self._world(kin, t))

    def _world(self, kin, t):
        b = _body(kin.model, self.body, f"force element '{self.name}'")
        F = _as_bn(_time_value(self.force, t, kin.batch_shape, "force"), kin.n_frames)
        return mv_bl(_st.rotation_bl(kin, b), F) if self.frame == "local" else F

    def _gf(self, kin, t):
        b = _body(kin.model, self.body, f"force element '{self.name}'")
        F = self._world(kin, t)
        return _gen(_st.point_jacobian_bl(kin, b, self.point[:, None]), F)


def _element_frame(frame, where: str) -> str:
    """Return "world" or "local" (one frame vocabulary)."""
    if frame not in ("world", "local"):
        raise DataError(f"`frame` must be 'world' or 'local', got {frame!r}")
    return frame


class BodyTorque(ForceElement):
    """External pure moment on a body: constant, a function of time, or a follower.

    Parameters
    ----------
    body : str or int
    torque : array_like, shape (3,), or callable ``f(t) -> (3,)``
        Moment, N m.
    frame : {"world", "local"}
        ``"local"``: a follower moment fixed in the body frame.
    name : str, optional

    Notes
    -----
    ``τ = J_ωᵀ M_world`` with the angular-velocity Jacobian of the body.

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> BodyTorque("pendulum1", [2.0, 0, 0]).generalized_force(m, np.zeros(4), np.zeros(4))
    array([2., 0., 0., 0.])
    """

    def __init__(self, body, torque, *, frame="world", name=None):
        frame = _element_frame(frame, "BodyTorque")
        self.body = body
        self.torque = torque if callable(torque) else _vec3(torque, "torque")
        self.frame = frame
        self.name = name or f"torque_{body}"

    validate = BodyForce.validate

    def _gf(self, kin, t):
        b = _body(kin.model, self.body, f"force element '{self.name}'")
        M = _as_bn(_time_value(self.torque, t, kin.batch_shape, "torque"), kin.n_frames)
        if self.frame == "local":
            M = mv_bl(_st.rotation_bl(kin, b), M)
        return _gen(_st.angular_jacobian_bl(kin, b), M)


class PenaltyGroundContact(ForceElement):
    """Compliant ground contact of body points: Hunt–Crossley normal force, regularized friction.

    Parameters
    ----------
    body : str or int
    points : array_like, shape (k, 3)
        Contact points in the body frame (e.g. heel and toe), m; with `radii`,
        the centres of contact spheres.
    stiffness : float
        ``k`` in N/m**exponent.
    damping : float, optional
        Hunt–Crossley damping ``c`` in s/m.
    exponent : float, optional
        Exponent ``e`` of the penetration (1.5 for Hertzian contact).
    friction : float, optional
        Coulomb friction coefficient ``μ``.
    slip_velocity : float, optional
        Regularization velocity ``v_s`` of the friction law, m/s.
    normal : array_like, shape (3,), optional
        Ground normal (world), default ``(0, 0, 1)``.
    height : float, optional
        Ground height along the normal, m.
    radii : array_like, shape (k,), optional
        Radius of each contact sphere, m (>= 0; default 0: the points
        themselves touch the ground). :func:`shape_ground_contacts` builds
        the spheres from a model's collision shapes.
    name : str, optional

    Notes
    -----
    Penetration ``δ = h + ρ − n·c`` of the sphere of radius ``ρ`` about the
    body point ``c`` (``δ = h − n·p`` for a point). The force acts at the
    sphere's lowest point ``p = c − ρ n``; its velocity ``ṗ`` and Jacobian
    ``J_p`` are those of the body point that coincides with ``p`` in the
    current configuration (body-frame position ``r_c − ρ Rᵀ n``, per frame), so
    a sphere rolling without slip has ``ṗ = 0`` and feels no friction. Rate
    ``δ̇ = −n·ṗ`` (equal to ``−n·ċ``). Normal force
    ``F_n = max(0, k δ^e (1 + c δ̇))`` for ``δ > 0`` (Hunt & Crossley 1975);
    friction ``F_t = −μ F_n v_t / sqrt(|v_t|² + v_s²)`` with the tangential
    velocity ``v_t`` of ``p``. ``τ = Σ J_pᵀ (F_n n + F_t)``; since
    ``n·J_p = n·J_c``, the elastic part is ``−∂V/∂q`` with
    ``V = Σ k δ^(e+1) / (e+1)``.

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> c = PenaltyGroundContact("pendulum1", [[0, 0, -1]], stiffness=1e4, height=-0.99)
    >>> c.normal_forces(m, np.zeros(4), np.zeros(4)).round(6)
    array([10.])
    """

    def __init__(
        self, body, points, *, stiffness, damping=0.0, exponent=1.5, friction=0.0,
        slip_velocity=0.01, normal=(0.0, 0.0, 1.0), height=0.0, radii=None, name=None,
    ):  # fmt: skip
        pts = as_float_array(points, "points")
        if pts.ndim == 1:
            pts = pts[None]
        if pts.ndim != 2 or pts.shape[1] != 3:
            raise DataError(f"Expected `points` to have shape (k, 3), got {pts.shape}")
        if radii is None:
            rad = np.zeros(len(pts))
        else:
            rad = as_float_array(radii, "radii").reshape(-1)
            if rad.shape != (len(pts),):
                raise DataError(
                    f"Expected `radii` to have one radius per point ({len(pts)}), got "
                    f"{np.shape(radii)}"
                )
            if np.any(rad < 0):
                raise DataError(f"Expected `radii` to be >= 0 m, got {rad.tolist()}")
        n = _vec3(normal, "normal")
        if np.linalg.norm(n) < 1e-12:
            raise DataError("`normal` must be a non-zero vector")
        stiffness = as_nonnegative_float(stiffness, "stiffness")
        damping = as_nonnegative_float(damping, "damping")
        friction = as_nonnegative_float(friction, "friction")
        slip_velocity = as_positive_float(slip_velocity, "slip_velocity", unit="m/s")
        exponent = as_positive_float(exponent, "exponent")
        height = as_finite_float(height, "height", unit="m")
        self.body, self.points, self.radii = body, pts, rad
        self.k, self.c, self.e = float(stiffness), float(damping), float(exponent)
        self.mu, self.vs = float(friction), float(slip_velocity)
        self.n = n / np.linalg.norm(n)
        self.h = float(height)
        self.name = name or f"contact_{body}"

    validate = BodyForce.validate

    def _forces(self, kin):
        b = _body(kin.model, self.body, f"force element '{self.name}'")
        n = self.n[:, None]
        out = []
        for r, rho in zip(self.points, self.radii, strict=True):
            r = r[:, None]
            depth = self.h + rho - np.sum(n * _st.point_bl(kin, b, r), axis=0)
            if rho > 0:  # the body point at the sphere's lowest point, per frame
                r = r - rho * mtv_bl(_st.rotation_bl(kin, b), n)
            v = _st.point_velocity_bl(kin, b, r)
            rate = -np.sum(n * v, axis=0)
            pen = np.maximum(depth, 0.0)
            Fn = np.maximum(self.k * pen**self.e * (1.0 + self.c * rate), 0.0)
            vt = v + rate * n
            Ft = -self.mu * Fn * vt / np.sqrt(np.sum(vt * vt, axis=0) + self.vs**2)
            out.append((r, Fn, Fn * n + Ft))
        return b, out

    def normal_forces(self, model, q, qd, *, kin=None) -> np.ndarray:
        """Normal force at each contact point (..., k), N."""
        kin = _st.resolve(model, kin, q, qd, needs_qd=True)
        _, out = self._forces(kin)
        return _st.out(kin, np.array([Fn for _, Fn, _ in out]))

    def _gf(self, kin, t):
        b, out = self._forces(kin)
        tau = np.zeros((kin.model.nv, kin.n_frames))
        for r, _, F in out:
            tau += _gen(_st.point_jacobian_bl(kin, b, r), F)
        return tau


def shape_ground_contacts(model, shapes=None, *, stiffness, **options) -> list:
    """Ground contact of a model's collision shapes: one :class:`PenaltyGroundContact` per body.

    Parameters
    ----------
    model : Model
    shapes : sequence of CollisionShape or str, optional
        Shapes (or names of the model's shapes); default all of
        :func:`ahbm.kinematics.geometry.collision_shapes` ``(model)``, e.g. the
        heel spheres and forefoot capsules of
        :func:`ahbm.kinematics.contact.foot_contact_shapes`.
    stiffness : float
        ``k`` in N/m**exponent of every contact sphere.
    **options
        Further keywords of :class:`PenaltyGroundContact` (``damping``,
        ``exponent``, ``friction``, ``slip_velocity``, ``normal``, ``height``).

    Returns
    -------
    list of PenaltyGroundContact
        One element per body carrying shapes, in the model's body order, named
        ``contact_<body>``; pass them to ``simulate(..., forces=[...])``.

    Notes
    -----
    A swept-sphere shape's lowest point over a plane lies on the sphere about
    one of its core's vertices (the height is linear along the core), so each
    shape becomes the spheres about its vertices: a sphere gives one, a
    capsule its two end spheres, a lozenge its three corner spheres. The
    first touch and the deepest penetration are exact; when a capsule (line)
    lies flat on the ground its end spheres penetrate equally and share the
    load, ``F = 2 k δ^e`` (the load of the line is carried by its ends rather
    than spread along it, as for Felis' (2015) forefoot line).

    Examples
    --------
    >>> from ahbm.kinematics.tree import Model
    >>> from ahbm.kinematics.contact import foot_contact_shapes
    >>> m = Model("foot")
    >>> _ = m.add_body("foot", "ground", "free", mass=1.0, inertia=np.eye(3) * 0.01)
    >>> m.collision = foot_contact_shapes("foot", length=0.26, height=0.08, posterior=0.06)
    >>> [c.radii.tolist() for c in shape_ground_contacts(m, stiffness=1e6)]
    [[0.04, 0.02, 0.02]]
    """
    own = {s.name: s for s in collision_shapes(model)}
    if shapes is None:
        shapes = list(own.values())
    elif isinstance(shapes, (str, CollisionShape)):
        shapes = [shapes]
    by_body: dict[str, tuple[list, list]] = {}
    for k, s in enumerate(shapes):
        if isinstance(s, str):
            if s not in own:
                raise ModelError(
                    f"shapes[{k}]: the model has no collision shape {s!r}; its shapes are "
                    f"{sorted(own)}"
                )
            s = own[s]
        if not isinstance(s, CollisionShape):
            raise DataError(
                f"shapes[{k}]: expected a CollisionShape or a shape name, got {type(s).__name__}"
            )
        if s.body not in model.body_names:
            raise ModelError(
                f"collision shape {s.name!r}: unknown body {s.body!r}; the model's bodies are "
                f"{list(model.body_names)}"
            )
        pts, rad = by_body.setdefault(s.body, ([], []))
        pts.extend(s.points)
        rad.extend([s.radius] * len(s.points))
    if not by_body:
        raise ModelError(
            "no collision shapes to make contacts of; add them with model.collision = [...] "
            "(e.g. foot_contact_shapes) or pass `shapes`"
        )
    out = []
    for body in model.body_names:
        if body in by_body:
            pts, rad = by_body[body]
            out.append(PenaltyGroundContact(body, np.array(pts), radii=rad, stiffness=stiffness,
                                            name=f"contact_{body}", **options))  # fmt: skip
    return out


class GravityOverride(ForceElement):
    """Replace the model's gravity by another gravity vector.

    Parameters
    ----------
    gravity : array_like, shape (3,)
        Gravity to use instead of ``model.gravity``, m/s^2 (zeros switch gravity off).
    name : str, optional

    Notes
    -----
    Generalized gravity forces are linear in the gravity vector,
    ``τ_g = Σ m_i J_ciᵀ g``, so adding ``Σ m_i J_ciᵀ (g_new − g_model)``
    replaces the model's gravity.

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> from ahbm.dynamics import gravity_torques
    >>> m = double_pendulum_3d()
    >>> q = np.array([0.3, 0.1, 0.2, 0.3])
    >>> g = GravityOverride([0, 0, 0]).generalized_force(m, q, np.zeros(4))
    >>> bool(np.allclose(g, gravity_torques(m, q)))
    True
    """

    def __init__(self, gravity, *, name=None):
        self.gravity = _vec3(gravity, "gravity")
        self.name = name or "gravity_override"

    def _gf(self, kin, t):
        model = kin.model
        dg = (self.gravity - model.gravity)[:, None]
        tau = np.zeros((model.nv, kin.n_frames))
        for i in range(model.n_bodies):
            if model.masses[i] > 0:
                J = _st.point_jacobian_bl(kin, i, model.coms[i][:, None])
                tau += model.masses[i] * _gen(J, np.broadcast_to(dg, (3, kin.n_frames)))
        return tau
