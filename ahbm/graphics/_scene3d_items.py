"""Data of the 3-D browser viewer: markers, forces, muscles and plots along the frames (internal).

Every item is resampled onto the scene's frame times by linear interpolation
(NaN outside its own time range) and returned as float32 arrays.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ahbm._internal.validation import as_float_array
from ahbm.errors import DataError, ModelError
from ahbm.graphics._scene3d import is_result, is_table
from ahbm.graphics._stick_data import _as_markers, _is_trial


def resample(t_src: np.ndarray | None, values: np.ndarray, t: np.ndarray | None) -> np.ndarray:
    """Values (n_src, ...) at the times `t` (linear; NaN outside `t_src`); as is without times."""
    values = np.asarray(values, dtype=float)
    if t is None or t_src is None:
        return values
    t_src = np.asarray(t_src, dtype=float)
    if t_src.shape == t.shape and np.allclose(t_src, t, rtol=0, atol=1e-9):
        return values
    if t_src.shape[0] != values.shape[0]:
        raise DataError(f"{t_src.shape[0]} times for {values.shape[0]} samples")
    flat = values.reshape(values.shape[0], -1)
    idx = np.clip(np.searchsorted(t_src, t, side="right") - 1, 0, max(len(t_src) - 2, 0))
    if len(t_src) == 1:
        out = np.repeat(flat[:1], len(t), axis=0)
    else:
        h = t_src[idx + 1] - t_src[idx]
        w = np.where(h > 0, (t - t_src[idx]) / np.where(h > 0, h, 1.0), 0.0)[:, None]
        out = flat[idx] * (1 - w) + flat[idx + 1] * w
    tol = 1e-9 * max(1.0, float(np.abs(t_src).max()))
    outside = (t < t_src[0] - tol) | (t > t_src[-1] + tol)
    out[outside] = np.nan
    return out.reshape((len(t), *values.shape[1:]))


def experimental_markers(markers, labels, t):
    """(points (n, m, 3) at the frame times, labels, their own times or None)."""
    pts, labels, rate, time, trial = _as_markers(markers, labels, None)
    own_t = time if (trial is not None and rate) else None
    if t is not None and own_t is None and pts.shape[0] not in (1, len(t)):
        raise DataError(
            f"`markers` has {pts.shape[0]} frames and the motion {len(t)}: give a Trial "
            "(with its times) or markers sampled at the motion's frames"
        )
    if t is not None and own_t is not None:
        pts = resample(own_t, pts, t)
    elif t is not None and pts.shape[0] == 1:
        pts = np.repeat(pts, len(t), axis=0)
    return pts, labels, own_t


def model_markers(model, T: np.ndarray):
    """World positions (n, m, 3) and names of the model's markers at poses T (n, nb, 4, 4)."""
    names, body_idx, local = [], [], []
    for i, body in enumerate(model.bodies):
        for name, p in (body.markers or {}).items():
            names.append(str(name))
            body_idx.append(i)
            local.append(np.asarray(p, dtype=float))
    if not names:
        return np.zeros((T.shape[0], 0, 3)), []
    b = np.asarray(body_idx)
    L = np.asarray(local)
    Tb = T[:, b]
    W = np.einsum("nmij,mj->nmi", Tb[..., :3, :3], L) + Tb[..., :3, 3]
    return W, names


def _force_entry(name, entry, t):
    if not isinstance(entry, Mapping):
        raise DataError(f"`forces[{name!r}]` must be a mapping with 'force' and 'point' arrays")
    missing = [k for k in ("force", "point") if k not in entry]
    if missing:
        raise DataError(f"`forces[{name!r}]` needs {missing} (force, N; point of application, m)")
    F = as_float_array(entry["force"], f"forces[{name!r}]['force']", allow_nan=True)
    P = as_float_array(entry["point"], f"forces[{name!r}]['point']", allow_nan=True)
    if F.ndim == 1:
        F, P = F[None], P[None]
    if F.shape != P.shape or F.shape[-1] != 3:
        raise DataError(
            f"`forces[{name!r}]`: force and point must both have shape (n, 3), "
            f"got {F.shape} and {P.shape}"
        )
    src_t = entry.get("time")
    src_t = None if src_t is None else as_float_array(src_t, f"forces[{name!r}]['time']")
    if t is not None and src_t is None and F.shape[0] not in (1, len(t)):
        raise DataError(
            f"`forces[{name!r}]` has {F.shape[0]} samples and the scene {len(t)} frames: "
            "give its 'time'"
        )
    if t is not None and src_t is not None:
        F, P = resample(src_t, F, t), resample(src_t, P, t)
    elif t is not None and F.shape[0] == 1:
        F, P = np.repeat(F, len(t), 0), np.repeat(P, len(t), 0)
    return F, P


def force_arrays(forces, t, n_frames: int):
    """(names, array (n, n_forces, 6) = point, force) of the `forces` argument."""
    from ahbm.opensim.storage import table_to_grf

    entries: dict = {}
    if forces is None:
        return [], np.zeros((n_frames, 0, 6))
    if is_table(forces):
        for prefix, d in table_to_grf(forces).items():
            name = prefix.rstrip("_") or "force"
            entries[name] = {"force": d["force"], "point": d["point"], "time": forces.time}
    elif hasattr(forces, "force_plates"):
        t0 = float(np.asarray(forces.time)[0]) if len(getattr(forces, "time", [])) else 0.0
        for k, plate in enumerate(forces.force_plates):
            f = np.asarray(plate.force, dtype=float)
            if not plate.rate or plate.rate <= 0:
                raise DataError(f"force plate {k + 1} has no sample rate")
            scale = _length_scale(getattr(forces, "point_units", "m"))
            f_t = t0 + np.arange(f.shape[0]) / float(plate.rate)
            entries[f"plate {k + 1}"] = {
                "force": f,
                "point": np.asarray(plate.cop) * scale,
                "time": f_t,
            }
    elif isinstance(forces, Mapping):
        entries = dict(forces)
    else:
        raise DataError(
            "`forces` must be a ground-reaction table (read_mot), a Trial with force plates, "
            "or a mapping {name: {'force', 'point'[, 'time']}}"
        )
    names, out = [], []
    for name, entry in entries.items():
        F, P = _force_entry(name, entry, t)
        if F.shape[0] != n_frames:
            raise DataError(f"`forces[{name!r}]` has {F.shape[0]} frames, the scene {n_frames}")
        names.append(str(name))
        out.append(np.concatenate([P, F], axis=-1))
    arr = np.stack(out, axis=1) if out else np.zeros((n_frames, 0, 6))
    return names, arr


def _length_scale(units) -> float:
    return {"m": 1.0, "cm": 1e-2, "mm": 1e-3}.get(str(units).strip().lower(), 1.0)


def muscle_values(model, muscles, result, t, n_frames, color_by):
    """(values (n, n_muscles) or None, label, range) colouring the model's muscles."""
    names = [m.name for m in getattr(model, "muscles", ())]
    fmax = np.array([float(m.max_isometric_force) for m in getattr(model, "muscles", ())])
    src = muscles if muscles is not None and not isinstance(muscles, bool) else result
    if src is None:
        return None, "", (0.0, 1.0)
    vals = None
    src_t = None
    if is_result(src) and hasattr(src, "muscles"):
        order = list(src.muscles)
        arr = (
            src.tendon_force / fmax[[names.index(m) for m in order]]
            if color_by == "force"
            else src.activation
        )
        vals, src_t = _columns(order, np.asarray(arr, dtype=float), names), np.asarray(src.t)
    elif is_table(src):
        vals = _table_muscles(src, names, color_by)
        src_t = np.asarray(src.time, dtype=float)
        if color_by == "force":
            vals = vals / fmax
    elif isinstance(src, Mapping):
        cols = {
            str(k): as_float_array(v, f"muscles[{k!r}]", allow_nan=True).ravel()
            for k, v in src.items()
        }
        unknown = [k for k in cols if k not in names]
        if unknown:
            raise DataError(
                f"`muscles` names {unknown[:5]}, not muscles of the model ({names[:8]})"
            )
        vals = _columns(list(cols), np.column_stack(list(cols.values())), names)
        if color_by == "force":
            vals = vals / fmax
    elif result is not None and src is result:
        return None, "", (0.0, 1.0)
    else:
        arr = as_float_array(src, "muscles", allow_nan=True)
        if arr.ndim != 2 or arr.shape[1] != len(names):
            raise DataError(
                f"Expected `muscles` to have shape (n_frames, {len(names)}) (one column per "
                f"muscle of the model, in model.muscles order), got {arr.shape}"
            )
        vals = arr / fmax if color_by == "force" else arr
    if src_t is not None and t is not None:
        vals = resample(src_t, vals, t)
    if vals.shape[0] != n_frames:
        raise DataError(f"the muscle values have {vals.shape[0]} frames, the scene {n_frames}")
    label = "force / max isometric force" if color_by == "force" else "activation"
    return vals, label, (0.0, 1.0)


def _columns(order: list, arr: np.ndarray, names: list) -> np.ndarray:
    out = np.full((arr.shape[0], len(names)), np.nan)
    for k, m in enumerate(order):
        if m in names:
            out[:, names.index(m)] = arr[:, k]
    return out


def _table_muscles(table, names, color_by) -> np.ndarray:
    """Muscle columns of a table: ``<muscle>``, ``/forceset/<muscle>/activation``, ..."""
    want = "activation" if color_by == "activation" else "tendon_force"
    cols = {}
    for i, c in enumerate(table.columns):
        parts = [p for p in c.split("/") if p]
        if len(parts) >= 2 and parts[-1] == want and parts[-2] in names:
            cols.setdefault(parts[-2], i)
        elif c in names:
            cols.setdefault(c, i)
    if not cols:
        raise DataError(
            f"the table '{table.source or table.name}' has no column of a muscle of the model "
            f"({names[:6]}...); expected muscle names or /forceset/<muscle>/{want}"
        )
    values = np.asarray(table.values, dtype=float)
    out = np.full((values.shape[0], len(names)), np.nan)
    for m, i in cols.items():
        out[:, names.index(m)] = values[:, i]
    return out


def muscle_paths(model, Q) -> tuple[list[str], list[int], np.ndarray]:
    """Names, point counts and path points (n, total, 3) of the model's muscles (wraps included)."""
    from ahbm.muscles.paths import path_points

    names, counts, blocks = [], [], []
    for m in getattr(model, "muscles", ()):
        P = np.asarray(path_points(model, Q, m.name, wrap_points=True), dtype=float)
        P = P.reshape(Q.shape[0], -1, 3)
        names.append(m.name)
        counts.append(P.shape[1])
        blocks.append(P)
    if not blocks:
        return [], [], np.zeros((Q.shape[0], 0, 3))
    return names, counts, np.concatenate(blocks, axis=1)


def plot_series(plots, *, model, Q, t, n_frames, muscle_vals, force_names, forces):
    """Plots [{title, unit, series: [{label, key}]}] and their arrays (n_frames,) each."""
    if plots is None:
        return [], {}
    items = plots.items() if isinstance(plots, Mapping) else [(p, p) for p in plots]
    coords = list(model.coordinate_names) if model is not None else []
    mus = [m.name for m in getattr(model, "muscles", ())] if model is not None else []
    rot = _rotational(model) if model is not None else {}
    out, arrays = [], {}
    for k, (label, spec) in enumerate(items):
        label = str(label)
        unit = ""
        if isinstance(spec, str):
            if spec in coords and Q is not None:
                y = Q[:, coords.index(spec)].copy()
                if rot.get(spec, False):
                    y, unit = np.degrees(y), "deg"
                else:
                    unit = "m"
            elif spec in mus and muscle_vals is not None:
                y, unit = muscle_vals[:, mus.index(spec)], ""
            elif _force_channel(spec, force_names) is not None:
                j, c = _force_channel(spec, force_names)
                y, unit = forces[:, j, 3 + c], "N"
            else:
                raise DataError(
                    f"`plots`: {spec!r} is neither a coordinate ({', '.join(coords[:6])}...), "
                    f"a muscle nor a force channel ('<force> Fx/Fy/Fz' of {force_names}); "
                    "or give {label: values (n_frames,)}"
                )
        else:
            y = as_float_array(spec, f"plots[{label!r}]", allow_nan=True).ravel()
            if y.shape[0] != n_frames:
                raise DataError(f"`plots[{label!r}]` has {y.shape[0]} values, the scene {n_frames}")
        key = f"plot{k}"
        arrays[key] = np.asarray(y, dtype=float)
        out.append({"title": label, "unit": unit, "key": key})
    return out, arrays


def _force_channel(spec: str, names: list):
    parts = spec.rsplit(" ", 1)
    if len(parts) == 2 and parts[0] in names and parts[1] in ("Fx", "Fy", "Fz"):
        return names.index(parts[0]), "xyz".index(parts[1][1])
    return None


def _rotational(model) -> dict:
    """Coordinate name -> rotational? from the joints (prismatic coordinates are lengths)."""
    try:
        from ahbm.opensim.coordinate_table import osim_motion_types

        return {k: v == "rotational" for k, v in osim_motion_types(model).items()}
    except (ModelError, AttributeError, KeyError, TypeError, ValueError):  # by joint type
        out = {}
        for body in model.bodies:
            j = body.joint
            kind = getattr(j, "type", "")
            for c in getattr(j, "coordinates", ()):
                out[c] = kind != "prismatic"
        return out


def is_trial(obj) -> bool:
    """A Trial-like object with marker data."""
    return _is_trial(obj)
