"""Drawing multibody models: bodies, joints, frames, centres of mass, geometry."""

from __future__ import annotations

import warnings
from collections.abc import Mapping

import numpy as np

from ahbm._internal.validation import as_float_array, as_int, as_positive_float, check_model
from ahbm.errors import AhbmWarning, DataError, ModelError
from ahbm.graphics._common import pyplot, set_equal_3d
from ahbm.graphics.figures import plain_text

__all__ = ["draw_model", "geometry_mesh", "model_skeleton"]

_TRIAD_COLORS = ("red", "green", "blue")


def model_skeleton(model, transforms) -> np.ndarray:
    """Stick segments of a model pose: parent origin -> child origin, leaf origin -> COM.

    Parameters
    ----------
    model : Model
        The multibody model (uses ``model.parent`` and each body's ``com``).
    transforms : array_like, shape (..., n_bodies, 4, 4)
        World poses of the bodies (``forward_kinematics(model, q).transforms``).

    Returns
    -------
    ndarray, shape (..., n_segments, 2, 3)
        Start and end point of each stick in the world frame, m. One stick per
        body that has a parent body, then one per body without children from
        its origin to its centre of mass (when the COM is not at the origin).

    Examples
    --------
    >>> import numpy as np
    >>> from ahbm.kinematics import Model, forward_kinematics
    >>> m = Model()
    >>> _ = m.add_body("link", "ground", {"type": "revolute", "axis": [1, 0, 0]}, com=[0, 0, -1.0])
    >>> T = forward_kinematics(m, np.zeros(1)).transforms
    >>> model_skeleton(m, T)[0].tolist()
    [[0.0, 0.0, 0.0], [0.0, 0.0, -1.0]]
    """
    check_model(model)
    T = as_float_array(transforms, "transforms")
    if T.ndim < 3 or T.shape[-3:] != (model.n_bodies, 4, 4):
        raise DataError(
            f"Expected `transforms` to have shape (..., {model.n_bodies}, 4, 4) (one per body), "
            f"got {T.shape}"
        )
    parents = np.asarray(model.parent, dtype=int)
    origins = T[..., :3, 3]
    segs = []
    kids = np.flatnonzero(parents >= 0)
    if kids.size:
        segs.append(np.stack([origins[..., parents[kids], :], origins[..., kids, :]], axis=-2))
    has_child = np.zeros(len(parents), dtype=bool)
    has_child[parents[parents >= 0]] = True
    for i, body in enumerate(model.bodies):
        com = np.asarray(body.com, dtype=float)
        if has_child[i] or not np.any(com):
            continue
        world_com = T[..., i, :3, :3] @ com + origins[..., i, :]
        segs.append(np.stack([origins[..., i, :], world_com], axis=-2)[..., None, :, :])
    if not segs:
        return np.zeros((*T.shape[:-3], 0, 2, 3))
    return np.concatenate(segs, axis=-3)


def _entry_pose(entry: Mapping, where: str) -> tuple[np.ndarray, np.ndarray]:
    pos = entry.get("position", (0.0, 0.0, 0.0))
    rot = entry.get("rotation")
    origin = entry.get("origin")
    if isinstance(origin, Mapping):
        pos = origin.get("position", pos)
        rot = origin.get("rotation", rot)
    p = np.asarray(pos, dtype=float)
    R = np.eye(3) if rot is None else np.asarray(rot, dtype=float)
    if p.shape != (3,) or R.shape != (3, 3) or not (np.isfinite(p).all() and np.isfinite(R).all()):
        raise ModelError(f"{where}: position must be 3 numbers and rotation a 3x3 matrix")
    if not np.allclose(R.T @ R, np.eye(3), atol=1e-6) or np.linalg.det(R) < 0:
        raise ModelError(f"{where}: rotation is not a proper orthonormal matrix")
    return p, R


def _positive(entry: Mapping, key: str, shape, where: str) -> np.ndarray:
    if key not in entry:
        raise ModelError(f"{where}: missing '{key}'")
    a = np.asarray(entry[key], dtype=float)
    if a.shape != shape or not np.isfinite(a).all() or (a <= 0).any():
        raise ModelError(f"{where}: '{key}' must be positive with shape {shape}, got {a.tolist()}")
    return a


def _axis_rotation(axis) -> np.ndarray:
    """Rotation taking the local z axis onto `axis` ('x', 'y', 'z' or a vector)."""
    if isinstance(axis, str):
        axis = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}[axis.lower()]
    z = np.asarray(axis, dtype=float)
    z = z / np.linalg.norm(z)
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(z, x), z])


def geometry_mesh(entry: Mapping, *, resolution: int = 16, where: str = "geometry") -> np.ndarray:
    """Polygon faces of one geometry entry, in the body frame.

    Parameters
    ----------
    entry : mapping
        One drawing primitive of a model body's ``geometry``:

        - ``{"type": "box", "size": [lx, ly, lz]}`` (edge lengths, m);
        - ``{"type": "sphere", "radius": r}``;
        - ``{"type": "ellipsoid", "radii": [a, b, c]}`` (semi-axes along x, y, z);
        - ``{"type": "cylinder", "radius": r, "length": l, "axis": "z"}``
          (centred; `axis` is "x", "y", "z" or a vector, default "z").

        Each may have ``"position"`` (3,) and ``"rotation"`` (3, 3) (or an
        ``"origin"`` with both) placing the primitive's centre and axes in the
        body frame, and a ``"color"``.
    resolution : int, optional
        Number of facets around curved primitives.
    where : str, optional
        Text naming the entry in error messages.

    Returns
    -------
    ndarray, shape (n_faces, n_vertices, 3)
        Vertices of each face in the body frame, m (quadrilaterals).

    Raises
    ------
    ModelError
        Missing or non-positive dimensions, bad position/rotation, or an
        unknown type.

    Examples
    --------
    >>> geometry_mesh({"type": "box", "size": [2, 2, 2]}).shape
    (6, 4, 3)
    """
    if not isinstance(entry, Mapping) or "type" not in entry:
        raise ModelError(f"{where}: each geometry entry must be a mapping with a 'type'")
    resolution = as_int(resolution, "resolution", minimum=3)
    kind = str(entry["type"]).lower()
    p, R = _entry_pose(entry, where)
    if kind == "box":
        half = 0.5 * _positive(entry, "size", (3,), where)
        signs = np.array(
            [[[-1, -1, s], [1, -1, s], [1, 1, s], [-1, 1, s]] for s in (-1, 1)]
            + [[[-1, s, -1], [1, s, -1], [1, s, 1], [-1, s, 1]] for s in (-1, 1)]
            + [[[s, -1, -1], [s, 1, -1], [s, 1, 1], [s, -1, 1]] for s in (-1, 1)],
            dtype=float,
        )
        local = signs * half
    elif kind in ("sphere", "ellipsoid"):
        if kind == "sphere":
            radii = np.full(3, float(_positive(entry, "radius", (), where)))
        else:
            radii = _positive(entry, "radii", (3,), where)
        n = max(int(resolution), 4)
        theta = np.linspace(0.0, np.pi, n // 2 + 1)
        phi = np.linspace(0.0, 2.0 * np.pi, n + 1)
        th, ph = np.meshgrid(theta, phi, indexing="ij")
        grid = np.stack([np.sin(th) * np.cos(ph), np.sin(th) * np.sin(ph), np.cos(th)], -1)
        grid = grid * radii
        local = _grid_faces(grid)
    elif kind == "cylinder":
        r = float(_positive(entry, "radius", (), where))
        length = float(_positive(entry, "length", (), where))
        n = max(int(resolution), 4)
        phi = np.linspace(0.0, 2.0 * np.pi, n + 1)
        zz = np.array([-0.5 * length, 0.5 * length])
        ph, z = np.meshgrid(phi, zz, indexing="ij")
        grid = np.stack([r * np.cos(ph), r * np.sin(ph), z], -1)
        local = _grid_faces(grid) @ _axis_rotation(entry.get("axis", "z")).T
    else:
        raise ModelError(
            f"{where}: unknown geometry type {entry['type']!r}; use box, sphere, ellipsoid "
            "or cylinder"
        )
    return local @ R.T + p


def _grid_faces(grid: np.ndarray) -> np.ndarray:
    """Quadrilaterals of a (n_u, n_v, 3) parametric grid."""
    a = grid[:-1, :-1]
    b = grid[1:, :-1]
    c = grid[1:, 1:]
    d = grid[:-1, 1:]
    return np.stack([a, b, c, d], axis=-2).reshape(-1, 4, 3)


def _geometry_entries(body) -> list:
    geom = getattr(body, "geometry", None)
    if geom is None:
        return []
    if isinstance(geom, Mapping):
        if "type" in geom:
            return [geom]
        if "shapes" in geom:
            return list(geom["shapes"])
        return [geom]
    if isinstance(geom, (list, tuple)):
        return list(geom)
    return [geom]


def draw_model(
    model,
    q=None,
    *,
    ax=None,
    frames: bool = True,
    com: bool = True,
    markers: bool = True,
    geometry: bool = True,
    triad_length: float | None = None,
    color="tab:brown",
):
    """Draw a multibody model in one configuration.

    Parameters
    ----------
    model : Model
        The model (``ahbm.kinematics.Model``).
    q : array_like, shape (nq,), optional
        Generalized coordinates; default the neutral configuration (zeros,
        identity quaternions).
    ax : Axes3D, optional
        3-D axes to draw into (default: a new figure).
    frames : bool, optional
        Draw each body frame as an RGB triad (x red, y green, z blue).
    com : bool, optional
        Mark each centre of mass of a body with mass.
    markers : bool, optional
        Draw the model markers (``body.markers``).
    geometry : bool, optional
        Draw the bodies' ``geometry`` entries (see :func:`geometry_mesh`: a
        mapping, a list of mappings, or ``{"shapes": [...]}``).
    triad_length : float, optional
        Triad axis length, m (default: 15 % of the model's extent).
    color : color, optional
        Colour of the sticks and joints.

    Returns
    -------
    mpl_toolkits.mplot3d.axes3d.Axes3D
        The axes. Artists carry gids ``"bodies"`` (sticks, see
        :func:`model_skeleton`), ``"joints"``, ``"frames"``, ``"com"``,
        ``"markers"`` and ``"geometry:<body>"``; geometry collections also
        hold their world-frame faces in ``.ahbm_faces``.

    Raises
    ------
    DataError
        If `q` does not have shape (nq,).
    ModelError
        If a geometry entry is malformed.

    Notes
    -----
    A point `p` fixed in body `i` is drawn at ``0_T_i @ [p; 1]`` with the
    world poses ``0_T_i`` of :func:`ahbm.kinematics.forward_kinematics`.
    Unknown geometry types are skipped with an :class:`AhbmWarning`.

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> from ahbm.graphics import draw_model
    >>> ax = draw_model(double_pendulum_3d())
    >>> ax.name
    '3d'
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    from mpl_toolkits.mplot3d.art3d import Line3DCollection, Poly3DCollection

    from ahbm.kinematics.configuration import neutral_q
    from ahbm.kinematics.forward import forward_kinematics

    check_model(model)
    if triad_length is not None:
        triad_length = as_positive_float(triad_length, "triad_length", unit="m")
    from matplotlib.colors import is_color_like

    if not is_color_like(color):
        raise DataError(
            f"`color` {color!r} is not a matplotlib color (e.g. 'tab:brown', '#1f77b4')"
        )
    if q is None:
        q = neutral_q(model)
    q = as_float_array(q, "q")
    if q.shape != (model.nq,):
        raise DataError(
            f"Expected `q` to have shape ({model.nq},), got {q.shape}; draw_model draws one "
            "configuration (use stick_view(model=..., q=...) for a motion)"
        )
    T = np.asarray(forward_kinematics(model, q).transforms)  # (n_bodies, 4, 4)
    origins = T[:, :3, 3]
    if ax is None:
        fig = pyplot().figure(figsize=(6.4, 6.4))
        ax = fig.add_subplot(projection="3d")
    elif getattr(ax, "name", "") != "3d":
        raise DataError("`ax` must be a 3-D axes, e.g. fig.add_subplot(projection='3d')")

    cloud = [origins]
    sticks = model_skeleton(model, T)
    cloud.append(sticks.reshape(-1, 3))
    if sticks.shape[0]:
        coll = Line3DCollection(sticks, colors=color, linewidths=3.0)
        coll.set_gid("bodies")
        ax.add_collection3d(coll)
    (joints,) = ax.plot(*origins.T, "o", ls="", ms=6, color=color, mfc="white", mew=1.5)
    joints.set_gid("joints")
    if com:
        heavy = [i for i, b in enumerate(model.bodies) if b.mass > 0]
        if heavy:
            c = np.array(
                [T[i, :3, :3] @ np.asarray(model.bodies[i].com) + origins[i] for i in heavy]
            )
            (line,) = ax.plot(*c.T, "o", ls="", ms=7, color="k", mfc="yellow")
            line.set_gid("com")
            cloud.append(c)
    if markers:
        pts = [
            T[i, :3, :3] @ np.asarray(p) + origins[i]
            for i, b in enumerate(model.bodies)
            for p in b.markers.values()
        ]
        if pts:
            pts = np.array(pts)
            (line,) = ax.plot(*pts.T, "^", ls="", ms=4, color="tab:blue")
            line.set_gid("markers")
            cloud.append(pts)
    if geometry:
        for i, body in enumerate(model.bodies):
            for k, entry in enumerate(_geometry_entries(body)):
                where = f"body '{body.name}': geometry[{k}]"
                if isinstance(entry, Mapping) and str(entry.get("type", "")).lower() not in (
                    "box",
                    "sphere",
                    "ellipsoid",
                    "cylinder",
                ):
                    warnings.warn(
                        f"{where}: type {entry.get('type')!r} cannot be drawn; skipped",
                        AhbmWarning,
                        stacklevel=2,
                    )
                    continue
                local = geometry_mesh(entry, where=where)
                faces = local @ T[i, :3, :3].T + origins[i]
                poly = Poly3DCollection(
                    faces,
                    facecolors=entry.get("color", "tab:orange"),
                    edgecolors="none",
                    alpha=0.35,
                )
                poly.set_gid(f"geometry:{body.name}")
                poly.ahbm_faces = faces
                ax.add_collection3d(poly)
                cloud.append(faces.reshape(-1, 3))
    allpts = np.concatenate(cloud, axis=0)
    lo, hi = allpts.min(axis=0), allpts.max(axis=0)
    extent = float(np.max(hi - lo))
    if frames and model.n_bodies:
        L = triad_length if triad_length is not None else 0.15 * (extent if extent > 0 else 1.0)
        if not (np.isfinite(L) and L > 0):
            raise DataError(f"`triad_length` must be a positive length in m, got {triad_length}")
        axes_w = np.swapaxes(T[:, :3, :3], -1, -2)  # rows: world x, y, z axes of each body
        segs = np.stack(
            [np.broadcast_to(origins[:, None, :], axes_w.shape), origins[:, None, :] + L * axes_w],
            axis=-2,
        ).reshape(-1, 2, 3)
        coll = Line3DCollection(segs, colors=list(_TRIAD_COLORS) * model.n_bodies, linewidths=1.5)
        coll.set_gid("frames")
        ax.add_collection3d(coll)
        lo = np.minimum(lo, segs.reshape(-1, 3).min(axis=0))
        hi = np.maximum(hi, segs.reshape(-1, 3).max(axis=0))
    set_equal_3d(ax, lo, hi, margin=0.1)
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.set_zlabel("z (m)")
    ax.set_title(getattr(model, "name", ""))
    plain_text(ax)  # the model's name is data, not mathtext
    return ax
