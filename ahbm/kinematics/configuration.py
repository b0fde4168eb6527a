"""Configuration space of a :class:`~ahbm.kinematics.tree.Model`: neutral and
random coordinates, integration and difference on the joint manifolds.

``q`` (..., nq) holds the joints' coordinates in body order; a velocity
``v`` (..., nv) is a tangent vector (angular velocity in the body frame for
quaternion joints). :func:`integrate_q` and :func:`difference_q` are
inverse to each other: ``integrate_q(q0, difference_q(q0, q1)) == q1``.
These functions are re-exported by :mod:`ahbm.kinematics.tree`.
"""

from __future__ import annotations

import numpy as np

from ahbm._internal.validation import (
    as_finite_float,
    as_float_array,
    as_int,
    check_model,
    check_trailing_shape,
)
from ahbm.errors import DataError, ModelError
from ahbm.kinematics import functions as fn
from ahbm.kinematics.joints import FREE, JOINT_TYPES, SPHERICAL
from ahbm.kinematics.rotations import (
    quat_multiply,
    quat_normalize,
    quat_to_matrix,
    quat_to_rotvec,
    rotvec_to_quat,
)
from ahbm.kinematics.tree import Model

__all__ = [
    "neutral_q",
    "random_model",
    "random_q",
    "integrate_q",
    "difference_q",
    "check_q",
    "check_v",
]


def _check_rng(rng) -> None:
    if not isinstance(rng, np.random.Generator):
        raise DataError(
            f"Expected `rng` to be a numpy Generator (np.random.default_rng(seed)), got "
            f"{type(rng).__name__}"
        )


def check_q(model: Model, q, name: str = "q") -> np.ndarray:
    """Validate generalized coordinates (..., nq) (internal helper)."""
    check_model(model)
    arr = as_float_array(q, name)
    return check_trailing_shape(arr, (model.nq,), name)


def check_v(model: Model, v, name: str) -> np.ndarray:
    """Validate velocity-like arrays (..., nv) (internal helper)."""
    check_model(model)
    arr = as_float_array(v, name)
    return check_trailing_shape(arr, (model.nv,), name)


def neutral_q(model: Model) -> np.ndarray:
    """Neutral configuration: zeros, identity quaternions.

    Examples
    --------
    >>> m = Model(); _ = m.add_body("b", "ground", "spherical", mass=1.0)
    >>> neutral_q(m)
    array([0., 0., 0., 1.])
    """
    check_model(model)
    q = np.zeros(model.nq)
    for i, code in enumerate(model.joint_codes):
        k = model.q_index[i]
        if code == SPHERICAL:
            q[k + 3] = 1.0
        elif code == FREE:
            q[k + 6] = 1.0
    return q


def random_model(
    n_bodies: int,
    *,
    rng,
    joint_types=("revolute", "prismatic", "universal", "euler", "spherical", "free"),
    name: str = "random",
    child_offsets: bool = False,
) -> Model:
    """A random tree for tests and benchmarks (bodies numbered depth-first).

    Parameters
    ----------
    n_bodies : int
        Number of bodies (>= 1).
    rng : numpy.random.Generator
        Source of randomness.
    joint_types : sequence of str, optional
        Joint types to draw from (any of ``JOINT_TYPES``; ``fixed`` is never
        used for a body attached to the ground). A ``custom`` joint gets 1 to 3
        coordinates, each driving one axis linearly, and its other axes are
        random functions of :mod:`ahbm.kinematics.functions` (or constants)
        about random directions.
    name : str, optional
    child_offsets : bool, optional
        Give every body a random child offset frame (``child_position``,
        ``child_rotation``).

    Returns
    -------
    Model
        Random parents (about one body in ten is a root), joint axes and
        sequences, origins within 0.5 m, masses in [0.5, 5] kg, COMs within
        0.3 m and random inertias that satisfy the triangle inequality.

    Examples
    --------
    >>> m = random_model(5, rng=np.random.default_rng(0))
    >>> m.n_bodies, bool(np.all(m.parent < np.arange(5)))
    (5, True)
    """
    n = as_int(n_bodies, "n_bodies", error=ModelError)
    if n < 1:
        raise ModelError(f"`n_bodies` must be >= 1, got {n_bodies!r}")
    _check_rng(rng)
    if isinstance(joint_types, (str, bytes, dict)) or not hasattr(joint_types, "__iter__"):
        raise ModelError(f"Expected `joint_types` to be a list of joint types, got {joint_types!r}")
    for jt in joint_types:
        if jt not in JOINT_TYPES:
            raise ModelError(f"unknown joint type {jt!r} in `joint_types`")
    parents = [-1] + [int(rng.integers(0, i)) if rng.random() < 0.9 else -1 for i in range(1, n)]
    children = [[c for c in range(n) if parents[c] == k] for k in range(n)]
    order = []
    stack = [r for r in range(n) if parents[r] < 0][::-1]
    while stack:
        k = stack.pop()
        order.append(k)
        stack.extend(children[k][::-1])
    new_index = {old: new for new, old in enumerate(order)}

    def rotation():
        quat = rng.normal(size=4)
        return quat_to_matrix(quat)

    def sequence(k):
        seq = ["XYZ"[rng.integers(3)]]
        while len(seq) < k:
            ch = "XYZ"[rng.integers(3)]
            if ch != seq[-1]:
                seq.append(ch)
        return "".join(seq)

    model = Model(name, gravity=rng.normal(size=3) * 5.0)
    for i, old in enumerate(order):
        parent = -1 if parents[old] < 0 else new_index[parents[old]]
        jtype = joint_types[int(rng.integers(len(joint_types)))]
        if parent < 0 and jtype == "fixed":
            jtype = "revolute"
        joint = {"type": jtype}
        if jtype in ("revolute", "prismatic"):
            a = rng.normal(size=3)
            joint["axis"] = a / np.linalg.norm(a)
        elif jtype == "universal":
            joint["sequence"] = sequence(2)
        elif jtype in ("euler", "free_euler"):
            joint["sequence"] = sequence(3)
        elif jtype == "custom":
            joint["transform"], joint["coordinates"] = _random_transform(rng, f"b{i}")
        extra = {}
        if child_offsets:
            extra = {"child_position": rng.normal(size=3) * 0.3, "child_rotation": rotation()}
        d = rng.uniform(0.05, 1.0, size=3)
        lo, hi = abs(d[0] - d[1]), d[0] + d[1]
        d[2] = lo + (hi - lo) * rng.uniform(0.05, 0.95)
        Rot = rotation()
        model.add_body(
            f"b{i}",
            parent,
            joint,
            position=rng.normal(size=3) * 0.5,
            rotation=rotation(),
            mass=rng.uniform(0.5, 5.0),
            com=rng.normal(size=3) * 0.3,
            inertia=Rot @ np.diag(d) @ Rot.T,
            **extra,
        )
    return model


def _random_function(rng):
    """A random function of one coordinate (every type of ahbm.kinematics.functions)."""
    x = np.sort(rng.uniform(-3.0, 3.0, size=int(rng.integers(2, 7))))
    while np.any(np.diff(x) < 0.05):
        x = np.sort(rng.uniform(-3.0, 3.0, size=x.size))
    y = rng.normal(size=x.size) * 0.3
    kind = int(rng.integers(6))
    if kind == 0:
        return fn.SimmSpline(x, y)
    if kind == 1:
        return fn.NaturalCubicSpline(x, y)
    if kind == 2:
        return fn.PiecewiseLinearFunction(x, y)
    if kind == 3:
        return fn.PolynomialFunction(rng.normal(size=int(rng.integers(1, 4))) * 0.2)
    if kind == 4:
        return fn.MultiplierFunction(fn.SimmSpline(x, y), rng.uniform(-2.0, 2.0))
    return fn.LinearFunction(rng.uniform(-1.0, 1.0), rng.normal() * 0.2)


def _random_transform(rng, name):
    """6 random transform axes of a custom joint and its coordinates."""
    n = int(rng.integers(1, 4))
    coords = [f"{name}_c{k}" for k in range(n)]
    primary = rng.permutation(6)[:n]  # one axis per coordinate, driven linearly
    items = []
    for k in range(6):
        a = rng.normal(size=3)
        item = {"axis": a / np.linalg.norm(a)}
        if k in primary:
            j = int(np.flatnonzero(primary == k)[0])
            slope = rng.uniform(0.5, 1.5) * rng.choice([-1.0, 1.0])
            item["coordinate"] = coords[j]
            item["function"] = fn.LinearFunction(slope, rng.normal() * 0.2)
        elif rng.random() < 0.3:
            item["coordinate"] = None
            item["function"] = fn.Constant(rng.normal() * 0.3)
        else:
            item["coordinate"] = coords[int(rng.integers(n))]
            item["function"] = _random_function(rng)
        items.append(item)
    return items, coords


def random_q(model: Model, *, rng, size=(), scale: float = 1.0) -> np.ndarray:
    """Random coordinates (..., nq): normal angles/translations, uniform unit quaternions.

    Examples
    --------
    >>> m = random_model(3, rng=np.random.default_rng(1))
    >>> random_q(m, rng=np.random.default_rng(2), size=(4,)).shape[0]
    4
    """
    check_model(model)
    _check_rng(rng)
    scale = as_finite_float(scale, "scale")
    if isinstance(size, (str, bytes, dict)) or not (np.isscalar(size) or hasattr(size, "__iter__")):
        raise DataError(f"Expected `size` to be an int or a tuple of ints, got {size!r}")
    size = (size,) if np.isscalar(size) else tuple(size)
    size = tuple(as_int(s, "size", minimum=0) for s in size)
    q = rng.normal(size=size + (model.nq,)) * scale
    for i, code in enumerate(model.joint_codes):
        if code in (SPHERICAL, FREE):
            k = model.q_index[i] + (3 if code == FREE else 0)
            quat = rng.normal(size=size + (4,))
            q[..., k : k + 4] = quat / np.linalg.norm(quat, axis=-1, keepdims=True)
    return q


def integrate_q(model: Model, q, v, dt=1.0) -> np.ndarray:
    """Integrate coordinates with a constant velocity: q ⊕ v dt.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
    v : array_like, shape (..., nv)
        Generalized velocity (see the joint types for its meaning).
    dt : float or array_like, shape (...)
        Time step, s.

    Returns
    -------
    ndarray, shape (..., nq)

    Notes
    -----
    Quaternion joints use the exponential map in the body frame,
    ``Q_new = Q ⊗ exp(ω dt / 2)`` (angular velocity ``ω`` in the body frame);
    the translation of a ``free`` joint moves by ``ṙ dt``. All other
    coordinates are added: ``q + v dt``.

    Examples
    --------
    >>> m = Model(); _ = m.add_body("b", "ground", "spherical", mass=1.0)
    >>> integrate_q(m, [0, 0, 0, 1], [0, 0, np.pi], 1.0).round(12)
    array([0., 0., 1., 0.])
    """
    q = check_q(model, q)
    v = check_v(model, v, "v")
    dt = as_float_array(dt, "dt")
    shape = np.broadcast_shapes(q.shape[:-1], v.shape[:-1], dt.shape)
    q = np.broadcast_to(q, shape + (model.nq,))
    v = np.broadcast_to(v, shape + (model.nv,))
    dt = np.broadcast_to(dt, shape)[..., None]
    out = np.empty(shape + (model.nq,))
    for i, code in enumerate(model.joint_codes):
        qi, vi = model.q_index[i], model.v_index[i]
        nq, nv = model.joint_nq[i], model.joint_nv[i]
        if code in (SPHERICAL, FREE):
            t = 3 if code == FREE else 0
            if t:
                out[..., qi : qi + 3] = q[..., qi : qi + 3] + v[..., vi : vi + 3] * dt
            quat = q[..., qi + t : qi + t + 4]
            dq = rotvec_to_quat(v[..., vi + t : vi + t + 3] * dt)
            new = quat_multiply(quat_normalize(quat), dq)
            out[..., qi + t : qi + t + 4] = new / np.linalg.norm(new, axis=-1, keepdims=True)
        else:
            out[..., qi : qi + nq] = q[..., qi : qi + nq] + v[..., vi : vi + nv] * dt
    return out


def difference_q(model: Model, q0, q1) -> np.ndarray:
    """Velocity that moves ``q0`` to ``q1`` in unit time: ``integrate_q(q0, v, 1) == q1``.

    Parameters
    ----------
    model : Model
    q0, q1 : array_like, shape (..., nq)

    Returns
    -------
    ndarray, shape (..., nv)

    Notes
    -----
    Quaternion joints use the logarithm of the relative rotation,
    ``ω = log(Q0* ⊗ Q1)`` (shortest arc, body frame).

    Examples
    --------
    >>> m = Model(); _ = m.add_body("b", "ground", "spherical", mass=1.0)
    >>> difference_q(m, [0, 0, 0, 1], [0, 0, 1, 0]).round(12)
    array([0.        , 0.        , 3.14159265])
    """
    q0 = check_q(model, q0, "q0")
    q1 = check_q(model, q1, "q1")
    shape = np.broadcast_shapes(q0.shape[:-1], q1.shape[:-1])
    q0 = np.broadcast_to(q0, shape + (model.nq,))
    q1 = np.broadcast_to(q1, shape + (model.nq,))
    out = np.empty(shape + (model.nv,))
    for i, code in enumerate(model.joint_codes):
        qi, vi = model.q_index[i], model.v_index[i]
        nq = model.joint_nq[i]
        if code in (SPHERICAL, FREE):
            t = 3 if code == FREE else 0
            if t:
                out[..., vi : vi + 3] = q1[..., qi : qi + 3] - q0[..., qi : qi + 3]
            a = q0[..., qi + t : qi + t + 4]
            b = q1[..., qi + t : qi + t + 4]
            conj = a * np.array([-1.0, -1.0, -1.0, 1.0])
            rel = quat_multiply(quat_normalize(conj), quat_normalize(b))
            out[..., vi + t : vi + t + 3] = quat_to_rotvec(rel)
        else:
            out[..., vi : vi + nq] = q1[..., qi : qi + nq] - q0[..., qi : qi + nq]
    return out
