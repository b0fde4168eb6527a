"""A 3-D viewer in the browser: bodies, markers, forces and muscles you turn with the mouse.

:func:`view3d` builds a WebGL scene of a model and its motion with three.js
(bundled with ahbm, see ``docs/design.md``) and returns a :class:`View3D`:
``save("walk.html")`` writes one self-contained HTML file that opens offline
in any browser, and in Jupyter the object shows itself inline. The frames are
packed as float32 arrays (base64 in the page, decoded once into typed arrays),
and each frame rewrites in place the matrices of a few batched and instanced
meshes (the bodies' shapes, force arrows, muscle pieces) and the markers'
points, in a handful of draw calls, so that long trials play smoothly even on
software WebGL (``docs/viewer.md``).
"""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path

import numpy as np

from ahbm._internal.validation import as_choice, as_positive_float, check_model, output_path
from ahbm.errors import DataError

__all__ = ["View3D", "view3d"]

_FORMAT_VERSION = 1
_DEFAULT_RATE = 100.0  # frame rate of a motion without times


def _web_file(name: str) -> str:
    return resources.files("ahbm.graphics").joinpath("_web", name).read_text(encoding="utf-8")


class View3D:
    """A 3-D scene ready to be written as a page (result of :func:`view3d`).

    Attributes
    ----------
    meta : dict
        The scene description (bodies, shapes, item names, array layout).
    arrays : dict of str to ndarray
        The packed arrays (float32 or uint32), frames first.
    n_frames : int
    time : ndarray, shape (n_frames,)
        Frame times, s.
    """

    def __init__(self, meta: dict, arrays: dict):
        self.meta = meta
        self.arrays = arrays
        self.n_frames = int(meta["n_frames"])
        self.time = np.asarray(arrays["time"], dtype=float)

    def __repr__(self) -> str:
        m = self.meta
        return (
            f"View3D({m['title']!r}, {self.n_frames} frames, {len(m['bodies'])} bodies, "
            f"{len(m['markers']['labels'])} markers, {len(m['forces']['names'])} forces, "
            f"{len(m['muscles']['names'])} muscles)"
        )

    def _blob(self) -> tuple[dict, str]:
        """The array layout and the base64 text of all arrays, 4-byte aligned."""
        layout, chunks, offset = {}, [], 0
        for name, arr in self.arrays.items():
            a = np.ascontiguousarray(arr)
            a = a.astype("<u4") if a.dtype.kind in "iu" else a.astype("<f4")
            raw = a.tobytes()
            layout[name] = {
                "offset": offset,
                "length": int(a.size),
                "dtype": "u4" if a.dtype.kind == "u" else "f4",
                "shape": list(a.shape),
            }
            chunks.append(raw)
            offset += len(raw)
        return layout, base64.b64encode(b"".join(chunks)).decode("ascii")

    def to_html(self, *, height: str = "100vh") -> str:
        """The self-contained page (three.js, the viewer and the data inlined).

        Parameters
        ----------
        height : str, optional
            CSS height of the viewer (the whole window by default).

        Returns
        -------
        str
            An HTML document that needs no server and no network.
        """
        layout, data = self._blob()
        meta = dict(self.meta, arrays=layout)
        meta_json = json.dumps(meta, separators=(",", ":"), allow_nan=False)
        meta_json = meta_json.replace("</", "<\\/")
        page = _web_file("page.html")
        parts = {
            "{{TITLE}}": html.escape(self.meta["title"] or "ahbm 3-D view"),
            "{{HEIGHT}}": html.escape(height),
            "{{STYLE}}": _web_file("viewer.css"),
            "{{THREE}}": _web_file("three.min.js"),
            "{{META}}": meta_json,
            "{{DATA}}": data,
            "{{VIEWER}}": _web_file("viewer.js"),
        }
        out = []
        rest = page
        while "{{" in rest:  # one pass, so that nothing inserted is substituted again
            i = rest.index("{{")
            j = rest.index("}}", i) + 2
            out.append(rest[:i])
            key = rest[i:j]
            out.append(parts.get(key, key))
            rest = rest[j:]
        out.append(rest)
        return "".join(out)

    def save(self, path) -> Path:
        """Write the self-contained HTML page to `path` (atomically).

        Parameters
        ----------
        path : str or Path
            The ``.html`` file to write.

        Returns
        -------
        Path
            The file written.
        """
        from ahbm._internal.files import atomic_path

        target = output_path(path, "path")
        text = self.to_html()
        with atomic_path(target, argname="path") as tmp:
            tmp.write_text(text, encoding="utf-8")
        return target

    def _repr_html_(self) -> str:
        """Jupyter: the page in an inline frame (its own document, no kernel needed)."""
        doc = html.escape(self.to_html(height="560px"), quote=True)
        return (
            f'<iframe srcdoc="{doc}" style="width:100%;height:600px;border:0" '
            'sandbox="allow-scripts" title="ahbm 3-D view"></iframe>'
        )


def view3d(
    model=None,
    motion=None,
    *,
    markers=None,
    marker_labels: Sequence[str] | None = None,
    forces=None,
    muscles=None,
    muscle_color: str = "activation",
    plots=None,
    time=None,
    rate: float | None = None,
    geometry: str = "auto",
    mesh_dirs: Sequence = (),
    collision: bool = False,
    frames: bool = True,
    com: bool = True,
    model_markers: bool = True,
    force_scale: float = 0.001,
    title: str | None = None,
) -> View3D:
    """A WebGL scene of a model and its motion, for the browser and Jupyter.

    Parameters
    ----------
    model : Model, optional
        The multibody model (``read_osim``, a model file, ``ahbm.models``);
        None draws markers and forces alone.
    motion : array_like (n_frames, nq), OpenSimTable or result, optional
        The coordinates along the frames: an array, a coordinates table
        (``read_mot`` of an IK ``.mot`` or a states ``.sto``; degrees are
        converted, missing coordinates keep their defaults) or a simulation
        result with ``t`` and ``q`` (``simulate``, ``simulate_muscles``; its
        activations colour the muscles). None: the default pose.
    markers : Trial or array_like (n, n_markers, 3), optional
        Experimental markers (m, or a Trial in its units), resampled onto the
        motion's frame times when both have times.
    marker_labels : sequence of str, optional
        Labels of an array of markers.
    forces : OpenSimTable, Trial or mapping, optional
        Ground reactions drawn as arrows from their point of application: an
        OpenSim GRF table (``read_mot``), a Trial's force plates, or
        ``{name: {"force": (n, 3) N, "point": (n, 3) m, "time": (n,)}}``.
    muscles : bool, array_like, mapping, OpenSimTable or result, optional
        The model's muscle paths (with their wrap points) are drawn when it
        has muscles (False: not drawn). The colour follows `muscle_color`
        from: an array (n_frames, n_muscles) in ``model.muscles`` order,
        ``{muscle: values}``, a table with muscle columns (static
        optimization's activations, or states ``/forceset/<m>/activation``),
        or a result with ``activation``, ``tendon_force`` and ``muscles``.
    muscle_color : {"activation", "force"}, optional
        Colour by activation (0-1) or by force / maximum isometric force.
    plots : sequence of str or mapping, optional
        2-D plots beside the scene, a cursor following the frame: coordinate
        names (angles in degrees), muscle names, force channels
        (``"<force> Fy"``), or ``{label: values (n_frames,)}``.
    time : array_like (n_frames,), optional
        Frame times, s (default: the motion's, else ``arange(n) / rate``).
    rate : float, optional
        Frame rate, Hz, of a motion without times (default 100).
    geometry : {"auto", "meshes", "primitives", "skeleton"}, optional
        "auto"/"meshes": the model's mesh files where they are found
        (``mesh_dirs``), its primitive shapes, and for bodies without either
        bones (capsules between the joints) and the ellipsoid of inertia;
        "primitives": no mesh files; "skeleton": bones and ellipsoids only.
    mesh_dirs : sequence of str or Path, optional
        Folders searched for mesh files (each also with ``Geometry/``), e.g.
        the folder of the ``.osim`` file.
    collision : bool, optional
        Draw the model's swept-sphere collision shapes (``model.collision``).
    frames, com, model_markers : bool, optional
        Draw the joint frames (body axes), the whole-body centre of mass and
        the model's markers.
    force_scale : float, optional
        Arrow length per newton, m/N (default 1 m per 1000 N).
    title : str, optional
        Shown in the page and its tab.

    Returns
    -------
    View3D
        ``save(path)`` writes the page; Jupyter displays it inline.

    Raises
    ------
    DataError
        Shapes, names or times that do not fit together.
    ModelError
        Malformed geometry entries.

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> import numpy as np
    >>> m = double_pendulum_3d()
    >>> v = view3d(m, np.zeros((10, m.nq)), rate=50)
    >>> v.n_frames, v.meta["bodies"][0]["name"]
    (10, 'pendulum1')
    """
    from ahbm.graphics import _scene3d as sc
    from ahbm.graphics import _scene3d_items as it

    if model is not None:
        check_model(model)
    geometry = as_choice(geometry, "geometry", ("auto", "meshes", "primitives", "skeleton"))
    muscle_color = as_choice(muscle_color, "muscle_color", ("activation", "force"))
    force_scale = as_positive_float(force_scale, "force_scale", unit="m/N")
    if rate is not None:
        rate = as_positive_float(rate, "rate", unit="Hz")
    if model is None and markers is None and forces is None:
        raise DataError("view3d needs a `model`, `markers` or `forces` to draw")
    if isinstance(mesh_dirs, (str, Path)):
        mesh_dirs = [mesh_dirs]

    Q, t, result = sc.frames_of_motion(model, motion, time, rate)
    exp = None
    if markers is not None:
        if Q is None or (motion is None and Q.shape[0] == 1):
            pts, labels, own_t = it.experimental_markers(markers, marker_labels, None)
            t = own_t if own_t is not None else t
            if Q is not None:
                Q = np.repeat(Q, pts.shape[0], axis=0)
            exp = (pts, labels)
        else:
            if t is None:
                t = np.arange(Q.shape[0]) / (rate or _DEFAULT_RATE)
            exp = it.experimental_markers(markers, marker_labels, t)[:2]
    n = Q.shape[0] if Q is not None else (exp[0].shape[0] if exp is not None else None)
    if n is None:
        if not (isinstance(forces, Mapping) or it.is_table(forces)):
            raise DataError("`forces` alone must be a table or a mapping with times")
        t = np.asarray(forces.time, dtype=float) if it.is_table(forces) else None
        n = len(t) if t is not None else None
        if n is None:
            raise DataError("give `time` or a `model` and `motion` to draw `forces` alone")
    if t is None:
        t = np.arange(n) / (rate or _DEFAULT_RATE)
    if t.shape[0] != n:
        raise DataError(f"{t.shape[0]} frame times for {n} frames")

    arrays: dict[str, np.ndarray] = {"time": t.astype(np.float32)}
    meta: dict = {
        "version": _FORMAT_VERSION,
        "n_frames": int(n),
        "title": title or "",
        "bodies": [],
        "meshes": [],
    }
    cloud = []
    up = np.array([0.0, 0.0, 1.0])
    if model is not None:
        g = np.asarray(model.gravity, dtype=float)
        if np.linalg.norm(g) > 0:
            up = -g / np.linalg.norm(g)
        if not meta["title"]:
            meta["title"] = str(model.name or "")
        pos, quat, T = sc.poses(model, Q)
        T0 = sc.poses(model, sc.default_q(model)[None])[2][0]
        scale = _model_scale(T0, pos)
        store = sc.MeshStore(list(mesh_dirs))
        shapes = sc.body_shapes(
            model, T0, geometry=geometry, meshes=store, collision=collision, scale=scale
        )
        meta["bodies"] = [
            {"name": b.name, "shapes": s} for b, s in zip(model.bodies, shapes, strict=True)
        ]
        meta["meshes"] = [
            {"vertices": f"mesh{k}_v", "indices": f"mesh{k}_i", "file": Path(f).name}
            for k, f in enumerate(store.found)
        ]
        meta["missing_meshes"] = sorted(set(store.missing))
        arrays.update(store.arrays)
        arrays["body_pos"] = pos.astype(np.float32)
        arrays["body_quat"] = quat.astype(np.float32)
        cloud.append(pos.reshape(-1, 3))
        meta["frames"] = bool(frames)
        meta["joint_scale"] = scale
        c = sc.whole_body_com(model, Q) if com else None
        if c is not None:
            arrays["com"] = c.astype(np.float32)
        meta["com"] = c is not None
    else:
        meta["frames"], meta["com"], meta["joint_scale"] = False, False, 0.0
    if model is None and exp is not None and exp[0].size:
        up = _vertical_of_markers(exp[0])
    meta["up"] = up.tolist()

    # markers: the model's, then the experimental ones
    groups, all_pts, labels = [], [], []
    if model is not None and model_markers:
        W, names = it.model_markers(model, T)
        if names:
            groups.append({"name": "model", "count": len(names), "color": [0.2, 0.45, 1.0]})
            all_pts.append(W)
            labels += names
    if exp is not None and exp[0].shape[1]:
        groups.append(
            {"name": "experimental", "count": exp[0].shape[1], "color": [1.0, 0.35, 0.75]}
        )
        all_pts.append(exp[0])
        labels += list(exp[1])
    meta["markers"] = {"labels": labels, "groups": groups}
    if all_pts:
        M = np.concatenate(all_pts, axis=1)
        arrays["markers"] = M.astype(np.float32)
        cloud.append(M.reshape(-1, 3))

    fnames, farr = it.force_arrays(forces, t if forces is not None else None, n)
    meta["forces"] = {"names": fnames, "scale": force_scale}
    if fnames:
        arrays["forces"] = farr.astype(np.float32)
        cloud.append(farr[..., :3].reshape(-1, 3))

    mnames: list = []
    mvals = None
    if model is not None and muscles is not False and getattr(model, "muscles", ()):
        mnames, counts, P = it.muscle_paths(model, Q)
        mvals, mlabel, mrange = it.muscle_values(model, muscles, result, t, n, muscle_color)
        arrays["muscle_points"] = P.astype(np.float32)
        meta["muscles"] = {
            "names": mnames,
            "counts": counts,
            "color_by": mlabel if mvals is not None else "",
            "range": list(mrange),
        }
        if mvals is not None:
            arrays["muscle_values"] = mvals.astype(np.float32)
    else:
        meta["muscles"] = {"names": [], "counts": [], "color_by": "", "range": [0.0, 1.0]}

    plot_meta, plot_arrays = it.plot_series(
        plots,
        model=model,
        Q=Q,
        t=t,
        n_frames=n,
        muscle_vals=mvals,
        force_names=fnames,
        forces=farr if fnames else None,
    )
    meta["plots"] = plot_meta
    arrays.update({k: v.astype(np.float32) for k, v in plot_arrays.items()})
    meta["bounds"] = _bounds(cloud)
    return View3D(meta, arrays)


def _vertical_of_markers(P: np.ndarray) -> np.ndarray:
    """The lab's up axis guessed from markers alone: the axis of the body's height.

    A person's markers spread most along the vertical within a frame (head to
    toes), whatever the walking direction; up is that axis, positive.
    """
    with np.errstate(all="ignore"):
        spread = np.nanmax(P, axis=1) - np.nanmin(P, axis=1)  # (n, 3)
        med = np.nanmedian(spread, axis=0)
    up = np.zeros(3)
    up[int(np.nanargmax(np.nan_to_num(med, nan=-1.0)))] = 1.0
    return up


def _model_scale(T0: np.ndarray, pos: np.ndarray) -> float:
    """A length typical of the model (its extent at the default pose), m."""
    p = T0[:, :3, 3]
    ext = float(np.max(p.max(axis=0) - p.min(axis=0))) if len(p) else 0.0
    if ext <= 0:
        frame = pos[0] if pos.size else np.zeros((1, 3))
        ext = float(np.max(frame.max(axis=0) - frame.min(axis=0))) if len(frame) else 0.0
    return ext if ext > 0 else 1.0


def _bounds(cloud) -> list:
    """[[min x, y, z], [max x, y, z]] of every finite point of the scene."""
    if not cloud:
        return [[-1.0, -1.0, -1.0], [1.0, 1.0, 1.0]]
    P = np.concatenate(cloud, axis=0)
    P = P[np.isfinite(P).all(axis=1)]
    if not len(P):
        return [[-1.0, -1.0, -1.0], [1.0, 1.0, 1.0]]
    return [P.min(axis=0).tolist(), P.max(axis=0).tolist()]
