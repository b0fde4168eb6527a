"""Denavit–Hartenberg models: a :class:`~ahbm.kinematics.tree.Model` from a DH table.

A DH table lists one row ``(θ, d, a, α)`` per frame. Each row moves a frame
relative to its parent frame by one joint coordinate ``q``: about the parent's
``z`` axis (revolute, ``θ + q``) or along it (prismatic, ``d + q``). The
tabulated ``θ`` of a revolute row and ``d`` of a prismatic row are the joint
offsets of the home pose (``q = 0``), as in Chung (2009, §2.3), where the
optimization starts from ``q = 0`` in the tabulated configuration.

Conventions
-----------
``convention="standard"`` (distal; Denavit & Hartenberg 1955; Chung 2009,
eqs 2.4–2.5)::

    i-1_T_i = Rz(θ_i) Tz(d_i) Tx(a_i) Rx(α_i)

``convention="modified"`` (proximal; Craig 2005, eq. 3.6)::

    i-1_T_i = Rx(α_i) Tx(a_i) Rz(θ_i) Tz(d_i)

where the modified row's ``a`` and ``α`` are Craig's ``a_{i-1}`` and
``α_{i-1}`` (the link before the joint). ``0_T_n`` is the product of the rows
from the base to ``n`` (Chung eq. 2.3), left-multiplied by ``base``.

Branches (Chung 2009, §2.3.1)
-----------------------------
In the standard convention the frame of a joint depends on the next joint's
axis, so a frame with several child branches (Chung's pelvis GR3 and upper
spine Q12) has one row *per child branch*. Rows that name the same
``coordinate`` are the branches of one joint: they share the parent, the joint
type and (modified convention) ``a`` and ``α``, i.e. the joint axis, and each
gives the frame its children hang from.

The model built
---------------
Every row becomes one body whose frame is the row's DH frame, so the body
poses of :func:`~ahbm.kinematics.forward_kinematics` are the DH frames
``0_T_i``. The first row of a coordinate is a ``revolute`` or ``prismatic``
joint about the ``z`` axis of the joint frame (origin ``Rx(α) Tx(a)`` in the
parent frame for the modified convention, identity for the standard one) with
the child offset ``Rz(θ) Tz(d) [Tx(a) Rx(α)]``; the other branch rows of the
same coordinate are ``fixed`` joints on that body (offset
``D_first⁻¹ D_branch``), so ``nq`` is the number of coordinates, not of rows.
A ``fixed`` row (no coordinate) is a constant frame, e.g. a tool or an end.
Masses, centres of mass and inertias of a row are given in its DH frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np

from ahbm._internal.validation import as_choice, as_float_array
from ahbm.errors import DataError, ModelError
from ahbm.kinematics.tree import Model

__all__ = ["DHRow", "dh_transform", "dh_model"]

_CONVENTIONS = ("standard", "modified")
_JOINTS = ("revolute", "prismatic", "fixed")
_BASE_NAMES = ("ground", "base")


@dataclass(frozen=True)
class DHRow:
    """One row of a Denavit–Hartenberg table (one frame of the model).

    Parameters
    ----------
    name : str
        Name of the frame (the body of the built model).
    theta : float
        ``θ``, rad: the joint angle of the home pose for a revolute row
        (``θ + q``), a constant otherwise.
    d : float
        ``d``, m: the offset along the joint axis (``d + q`` for a prismatic row).
    a : float
        ``a``, m: the link length (common normal).
    alpha : float
        ``α``, rad: the link twist.
    joint : {"revolute", "prismatic", "fixed"}
        What the coordinate moves; ``"fixed"`` rows have no coordinate.
    parent : str, optional
        Name of the parent row; default the previous row (the base for the
        first row). ``"ground"`` or ``"base"`` for the base frame.
    coordinate : str, optional
        Name of the coordinate (default ``name``). Rows that name the same
        coordinate are the branches of one joint (Chung's branch points).
    mass : float
        kg.
    com : array_like, shape (3,)
        Centre of mass in the row's DH frame, m.
    inertia : array_like, shape (3, 3), optional
        Inertia about the centre of mass in the DH frame axes, kg m^2.
    limits : object, optional
        Joint limits stored on the joint (e.g. ``[lower, upper]``).
    """

    name: str
    theta: float = 0.0
    d: float = 0.0
    a: float = 0.0
    alpha: float = 0.0
    joint: str = "revolute"
    parent: str | None = None
    coordinate: str | None = None
    mass: float = 0.0
    com: tuple = (0.0, 0.0, 0.0)
    inertia: object = None
    limits: object = None


_FIELDS = tuple(f.name for f in fields(DHRow))


def _rz(t):
    c, s = np.cos(t), np.sin(t)
    out = np.zeros(np.shape(t) + (4, 4))
    out[..., 0, 0], out[..., 0, 1], out[..., 1, 0], out[..., 1, 1] = c, -s, s, c
    out[..., 2, 2] = out[..., 3, 3] = 1.0
    return out


def _rx(t):
    c, s = np.cos(t), np.sin(t)
    out = np.zeros(np.shape(t) + (4, 4))
    out[..., 1, 1], out[..., 1, 2], out[..., 2, 1], out[..., 2, 2] = c, -s, s, c
    out[..., 0, 0] = out[..., 3, 3] = 1.0
    return out


def _trans(x, axis):
    out = np.zeros(np.shape(x) + (4, 4))
    out[...] = np.eye(4)
    out[..., axis, 3] = x
    return out


def dh_transform(theta, d, a, alpha, *, convention: str = "standard") -> np.ndarray:
    """Homogeneous transform of one DH row, ``i-1_T_i``, shape (..., 4, 4).

    Parameters
    ----------
    theta, d, a, alpha : array_like, broadcastable shapes (...)
        DH parameters (rad, m, m, rad); for a moving row pass ``θ + q`` or
        ``d + q``.
    convention : {"standard", "modified"}
        ``"standard"``: ``Rz(θ) Tz(d) Tx(a) Rx(α)`` (Chung 2009, eq. 2.5);
        ``"modified"`` (Craig): ``Rx(α) Tx(a) Rz(θ) Tz(d)``.

    Returns
    -------
    ndarray, shape (..., 4, 4)
        Pose of frame ``i`` in frame ``i-1``.

    Raises
    ------
    DataError
        Non-numeric or non-finite parameters, shapes that do not broadcast,
        an unknown convention.

    Examples
    --------
    >>> T = dh_transform(np.pi / 2, 0.1, 0.3, 0.0)
    >>> np.round(T[:3, 3], 12)
    array([0. , 0.3, 0.1])
    """
    conv = as_choice(convention, "convention", _CONVENTIONS)
    names = ("theta", "d", "a", "alpha")
    vals = [as_float_array(v, k) for k, v in zip(names, (theta, d, a, alpha), strict=True)]
    try:
        t, dd, aa, al = np.broadcast_arrays(*vals)
    except ValueError as err:
        shapes = ", ".join(str(v.shape) for v in vals)
        raise DataError(f"`theta`, `d`, `a` and `alpha` do not broadcast: {shapes}") from err
    if conv == "standard":
        return _rz(t) @ _trans(dd, 2) @ _trans(aa, 0) @ _rx(al)
    return _rx(al) @ _trans(aa, 0) @ _rz(t) @ _trans(dd, 2)


def _row(item, k: int) -> DHRow:
    """A DHRow from a DHRow, a mapping of its fields or four numbers (θ, d, a, α)."""
    if isinstance(item, DHRow):
        return item
    if isinstance(item, dict):
        unknown = sorted(set(item) - set(_FIELDS))
        if unknown:
            raise ModelError(
                f"`rows[{k}]` has unknown keys {unknown}; DH row fields are {list(_FIELDS)}"
            )
        if "name" not in item:
            item = {**item, "name": f"link{k + 1}"}
        return DHRow(**item)
    try:
        vals = as_float_array(item, f"rows[{k}]")
    except DataError as err:
        raise ModelError(str(err)) from err
    if vals.shape != (4,):
        raise ModelError(
            f"`rows[{k}]` must be a DHRow, a dict or four numbers (theta, d, a, alpha), "
            f"got shape {vals.shape}"
        )
    return DHRow(f"link{k + 1}", *map(float, vals))


def _number(value, what: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        raise ModelError(f"{what} must be a real number, got {value!r:.60}")
    x = float(value)
    if not math.isfinite(x):
        raise ModelError(f"{what} must be finite, got {value!r}")
    return x


def _base(base):
    if base is None:
        return np.eye(4)
    try:
        T = as_float_array(base, "base")
    except DataError as err:
        raise ModelError(str(err)) from err
    if T.shape != (4, 4) or not np.allclose(T[3], [0, 0, 0, 1]):
        raise ModelError("`base` must be a 4x4 homogeneous transform (last row 0, 0, 0, 1)")
    R = T[:3, :3]
    if not np.allclose(R.T @ R, np.eye(3), atol=1e-9) or np.linalg.det(R) < 0:
        raise ModelError("`base` must hold a proper rotation (orthonormal, det +1)")
    return T


def _inverse(T):
    out = np.eye(4)
    out[:3, :3] = T[:3, :3].T
    out[:3, 3] = -T[:3, :3].T @ T[:3, 3]
    return out


def dh_model(
    rows,
    *,
    convention: str = "standard",
    name: str = "dh",
    gravity=(0.0, 0.0, -9.81),
    base=None,
) -> Model:
    """Build a :class:`~ahbm.kinematics.tree.Model` from a Denavit–Hartenberg table.

    Parameters
    ----------
    rows : sequence of DHRow, dict or (θ, d, a, α)
        The table, parents before children. A dict holds :class:`DHRow`
        fields; four numbers are a revolute row named ``link<k>`` whose
        parent is the previous row.
    convention : {"standard", "modified"}
        Standard (distal) or modified (proximal, Craig) DH (module docstring).
    name : str
        Model name.
    gravity : array_like, shape (3,)
        World gravity, m/s^2.
    base : array_like, shape (4, 4), optional
        Pose of the DH base frame 0 in the world (default identity), e.g. to
        stand a Y-up table upright in ahbm's Z-up world.

    Returns
    -------
    Model
        One body per row (named after the row; its frame is the row's DH
        frame); coordinates in row order, one per distinct ``coordinate``.

    Raises
    ------
    ModelError
        Unknown convention or joint type, duplicate row names, an unknown or
        later parent, non-finite parameters, branch rows of one coordinate
        that do not share the parent, the joint type and (modified) the axis,
        a ``fixed`` row with a coordinate, a bad base transform or bad
        inertial parameters.

    Notes
    -----
    The pose of row ``i`` is ``0_T_i = base · Π_k k-1_T_k`` over the rows from
    the base to ``i`` (Chung 2009, eqs 2.1–2.5); in the standard convention
    ``k-1_T_k = Rz(θ_k + q_k) Tz(d_k) Tx(a_k) Rx(α_k)`` for a revolute row and
    ``Rz(θ_k) Tz(d_k + q_k) Tx(a_k) Rx(α_k)`` for a prismatic one. Since
    ``Rz(θ + q) = Rz(q) Rz(θ)`` and ``Rz`` commutes with ``Tz``, each row is a
    joint about the parent's ``z`` (motion ``Rz(q)`` or ``Tz(q)``) followed by
    the constant offset ``Rz(θ) Tz(d) Tx(a) Rx(α)``: an ordinary revolute or
    prismatic joint with a constant child offset. Modified:
    ``Rx(α) Tx(a)`` (joint frame) · motion · ``Rz(θ) Tz(d)`` (child offset).

    Examples
    --------
    >>> from ahbm.kinematics import forward_kinematics
    >>> m = dh_model([(0, 0, 1.0, 0), (0, 0, 0.5, 0)])  # two-link planar arm
    >>> m.nq, m.body_names
    (2, ['link1', 'link2'])
    >>> T = forward_kinematics(m, [np.pi / 2, -np.pi / 2]).transforms[-1]
    >>> np.round(T[:3, 3], 12)
    array([0.5, 1. , 0. ])
    """
    conv = as_choice(convention, "convention", _CONVENTIONS, error=ModelError)
    if isinstance(rows, (str, bytes, dict)) or not hasattr(rows, "__iter__"):
        raise ModelError(f"`rows` must be a sequence of DH rows, got {rows!r:.80}")
    table = [_row(item, k) for k, item in enumerate(rows)]
    if not table:
        raise ModelError("`rows` is empty; give at least one DH row")
    T0 = _base(base)
    model = Model(name, gravity)
    frames = set()  # row names seen (each row's body frame is its DH frame)
    first = {}  # coordinate -> (first row, parent, joint, a, alpha, child offset)
    prev = None
    for k, r in enumerate(table):
        where = f"DH row {k} ({r.name!r})"
        if not isinstance(r.name, str) or not r.name or r.name in _BASE_NAMES:
            raise ModelError(f"{where}: the name must be a non-empty string other than 'ground'")
        if r.name in frames:
            raise ModelError(f"{where}: duplicate row name; row names must be unique")
        joint = as_choice(r.joint, f"{where}: joint", _JOINTS, error=ModelError)
        theta, d, a, alpha = (
            _number(getattr(r, f), f"{where}: {f}") for f in ("theta", "d", "a", "alpha")
        )
        parent = prev if r.parent is None else r.parent
        if parent in _BASE_NAMES:
            parent = None
        if parent is not None and parent not in frames:
            raise ModelError(f"{where}: unknown parent {parent!r}; name an earlier row or 'ground'")
        if conv == "standard":
            pre = np.eye(4)
            post = dh_transform(theta, d, a, alpha, convention="standard")
        else:
            pre = dh_transform(0.0, 0.0, a, alpha, convention="modified")
            post = dh_transform(theta, d, 0.0, 0.0, convention="modified")
        parent_body, P = ("ground", T0) if parent is None else (parent, np.eye(4))
        inertial = {"mass": r.mass, "com": r.com, "inertia": r.inertia}
        if joint == "fixed":
            if r.coordinate is not None:
                raise ModelError(f"{where}: a fixed row has no coordinate; remove `coordinate`")
            J = P @ pre @ post
            model.add_body(
                r.name, parent_body, {"type": "fixed", "name": r.name},
                position=J[:3, 3], rotation=J[:3, :3], **inertial,
            )  # fmt: skip
            frames.add(r.name)
        else:
            coord = r.name if r.coordinate is None else r.coordinate
            if not isinstance(coord, str) or not coord:
                raise ModelError(f"{where}: `coordinate` must be a non-empty string")
            if coord not in first:
                J = P @ pre
                C = _inverse(post)  # moving frame in the body (DH) frame
                model.add_body(
                    r.name,
                    parent_body,
                    {"type": joint, "axis": [0.0, 0.0, 1.0], "name": coord,
                     "coordinates": [coord], "limits": r.limits},
                    position=J[:3, 3], rotation=J[:3, :3],
                    child_position=C[:3, 3], child_rotation=C[:3, :3],
                    **inertial,
                )  # fmt: skip
                first[coord] = (r.name, parent, joint, a, alpha, post)
                frames.add(r.name)
            else:
                body0, parent0, joint0, a0, alpha0, post0 = first[coord]
                if parent != parent0 or joint != joint0:
                    raise ModelError(
                        f"{where}: branch row of coordinate {coord!r} must have the parent "
                        f"({parent0 or 'ground'!r}) and joint type ({joint0!r}) of row {body0!r}"
                    )
                if conv == "modified" and (a != a0 or alpha != alpha0):
                    raise ModelError(
                        f"{where}: in the modified convention the branch rows of {coord!r} "
                        f"share the joint axis, so `a` and `alpha` must equal those of {body0!r}"
                    )
                if r.limits is not None:
                    raise ModelError(
                        f"{where}: give the limits of {coord!r} on its first row {body0!r}"
                    )
                J = _inverse(post0) @ post
                model.add_body(
                    r.name, body0, {"type": "fixed", "name": r.name},
                    position=J[:3, 3], rotation=J[:3, :3], **inertial,
                )  # fmt: skip
                frames.add(r.name)
        prev = r.name
    return model
