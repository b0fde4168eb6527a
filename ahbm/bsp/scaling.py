"""Scale a multibody model's inertial parameters from a BSP table.

:func:`scale_model` sets masses, COMs and inertias from a regression table
(stature and body mass). Scaling by segment scale factors, as OpenSim's Scale
tool does, is :mod:`ahbm.bsp.segment_scaling`.
"""

from __future__ import annotations

import re
import warnings

import numpy as np

from ahbm._internal.validation import (
    as_float_array,
)
from ahbm.bsp.tables import get_table, segment_parameters
from ahbm.errors import AhbmWarning, DataError, ModelError

__all__ = ["scale_model", "SEGMENT_ALIASES"]

#: Body-name stems recognised for table segments (after removing a side suffix).
SEGMENT_ALIASES = {
    "femur": "thigh",
    "upper_leg": "thigh",
    "tibia": "shank",
    "leg": "shank",
    "lower_leg": "shank",
    "calf": "shank",
    "humerus": "upper_arm",
    "arm": "upper_arm",
    "radius": "forearm",
    "lower_arm": "forearm",
    "abdomen": "middle_trunk",
    "thorax": "upper_trunk",
    "torso": "trunk",
}

_SIDE = re.compile(r"^(?P<stem>.+?)[_ ]?(?P<side>r|l|right|left)$", re.IGNORECASE)


def _candidates(body: str, segments) -> list[str]:
    """Table segment names a body name may refer to, best first."""
    name = body.lower()
    out = [name]
    m = _SIDE.match(name)
    stem, suffix = (m["stem"], "_" + m["side"][0].lower()) if m else (name, "")
    for s in (stem, SEGMENT_ALIASES.get(stem, stem)):
        out.append(s + suffix)
        out.append(s)
    # synonyms between tables (de Leva 'forearm' = HeiMan 'lower_arm', ...)
    syn = {
        "forearm": "lower_arm",
        "lower_arm": "forearm",
        "trunk": "torso",
        "torso": "trunk",
        "head": "head_neck",
    }
    for c in list(out):
        tail = c[-2:] if c.endswith(("_r", "_l")) else ""
        root = c[: len(c) - len(tail)]
        if root in syn:
            out.append(syn[root] + tail)
    return [c for c in dict.fromkeys(out) if c in segments]


def scale_model(
    model,
    *,
    mass,
    height,
    table="de_leva",
    sex=None,
    segment_map=None,
    segment_lengths=None,
    frame_rotations=None,
    use_model_lengths: bool = True,
):
    """Return a copy of `model` with masses, COMs and inertias from a BSP table.

    Parameters
    ----------
    model : ahbm.kinematics.tree.Model
        The model; its joints, geometry and markers are kept.
    mass : float
        Body mass, kg.
    height : float
        Stature, m.
    table : str or BSPTable, optional
        Table name (see :data:`ahbm.bsp.TABLES`), default ``"de_leva"``.
    sex : {"male", "female"}, optional
        Needed for tables that distinguish sex.
    segment_map : dict, optional
        ``{body name: segment name or list of segment names}``. A list merges
        segments stacked along the body's -z axis (each starts where the
        previous one ends, e.g. ``["forearm_r", "hand_r"]``). Bodies not in
        the map are matched by name: exact table names (``thigh_r``), side
        suffixes (``_r``/``_l``/``right``/``left``) and the aliases in
        :data:`SEGMENT_ALIASES` (``femur_r`` -> ``thigh_r``).
    segment_lengths : dict, optional
        Measured segment lengths, m (see
        :func:`~ahbm.bsp.segment_parameters`); they take precedence.
    frame_rotations : dict or array_like (3, 3), optional
        ``body_R_segment``: orientation of the table's segment frame (x
        anterior, y left, z superior in the neutral posture) in each body
        frame, one matrix for all bodies or a dict per body name; default
        identity (body frames aligned with the anatomical axes, as in the
        ahbm example models).
    use_model_lengths : bool, optional
        If True (default), a body mapped to one segment that has exactly one
        child takes the distance to the child's joint origin as the segment
        length (unless given in `segment_lengths`); otherwise
        ``fraction * height``.

    Returns
    -------
    Model
        New model (the input is not modified).

    Raises
    ------
    DataError, ModelError
        Bad mass/height/table, unknown body or segment names in
        `segment_map`, a table segment used twice.

    Warns
    -----
    AhbmWarning
        Bodies that no table segment maps to keep their parameters; table
        mass not assigned to any body is reported.

    Notes
    -----
    For body ``b`` with segments ``s_k`` (offset ``o_k = -sum_{j<k} L_j e_z``):
    ``m_b = sum m_k``, ``c_b = R sum m_k (o_k + c_k) / m_b`` and
    ``I_b = R [sum I_k + m_k (|d_k|^2 1 - d_k d_k^T)] R^T`` with
    ``d_k = o_k + c_k - c`` (parallel-axis theorem) and ``R = body_R_segment``.

    Examples
    --------
    >>> import numpy as np
    >>> from ahbm.kinematics.tree import Model
    >>> m = Model("leg")
    >>> m.add_body("thigh_r", "ground", {"type": "revolute", "axis": [0, 1, 0]},
    ...            mass=1.0, com=[0, 0, 0], inertia=np.eye(3))
    0
    >>> import warnings
    >>> with warnings.catch_warnings():  # the other table segments have no body here
    ...     warnings.simplefilter("ignore")
    ...     scaled = scale_model(m, mass=80.0, height=1.8, table="de_leva", sex="male")
    >>> round(scaled.bodies[0].mass, 3)
    11.328
    """
    if not hasattr(model, "to_dict") or not hasattr(model, "bodies"):
        raise DataError("`model` must be an ahbm.kinematics.tree.Model")
    tab = get_table(table)
    base = segment_parameters(
        tab, mass=mass, height=height, segment_lengths=segment_lengths, sex=sex
    )
    names = list(model.body_names)
    if segment_map is not None and not isinstance(segment_map, dict):
        raise DataError(
            "Expected `segment_map` to be a dict {body: segment}, got "
            f"{type(segment_map).__name__}"
        )
    segment_map = dict(segment_map or {})
    for b in segment_map:
        if b not in names:
            raise ModelError(
                f"segment_map names body {b!r}, which is not in model '{model.name}'; "
                f"bodies: {', '.join(names)}"
            )
    mapping: dict[str, list[str]] = {}
    for b in names:
        if b in segment_map:
            segs = segment_map[b]
            segs = [segs] if isinstance(segs, str) else list(segs)
            for s in segs:
                if s not in base:
                    raise DataError(
                        f"segment_map[{b!r}] names segment {s!r}, not in table {tab.name!r}; "
                        f"segments: {', '.join(base)}"
                    )
            mapping[b] = segs
        else:
            cand = _candidates(b, base)
            if cand:
                mapping[b] = [cand[0]]
    used = [s for segs in mapping.values() for s in segs]
    dup = sorted({s for s in used if used.count(s) > 1})
    if dup:
        raise ModelError(
            f"Table segments {dup} are assigned to more than one body; give `segment_map`"
        )
    lengths = dict(segment_lengths or {})
    if use_model_lengths:
        for b, segs in mapping.items():
            i = names.index(b)
            kids = model.children[i]
            if len(segs) == 1 and len(kids) == 1 and segs[0] not in lengths:
                stem = segs[0][:-2] if segs[0].endswith(("_r", "_l")) else segs[0]
                if stem in lengths:
                    continue
                dist = float(np.linalg.norm(model.bodies[kids[0]].position))
                if dist > 0:
                    lengths[segs[0]] = dist
    params = segment_parameters(tab, mass=mass, height=height, segment_lengths=lengths, sex=sex)
    if frame_rotations is None:
        rot_of = dict.fromkeys(names, np.eye(3))
    elif isinstance(frame_rotations, dict):
        rot_of = {
            b: as_float_array(frame_rotations.get(b, np.eye(3)), f"frame_rotations[{b!r}]")
            for b in names
        }
    else:
        r = as_float_array(frame_rotations, "frame_rotations")
        rot_of = dict.fromkeys(names, r)
    for b, r in rot_of.items():
        if r.shape != (3, 3) or not np.allclose(r @ r.T, np.eye(3), atol=1e-9):
            raise DataError(f"frame_rotations for body {b!r} is not a 3x3 rotation matrix")
    data = model.to_dict()
    for body in data["bodies"]:
        b = body["name"]
        if b not in mapping:
            continue
        offset = np.zeros(3)
        ms, cs, Is = [], [], []
        for s in mapping[b]:
            p = params[s]
            ms.append(p.mass)
            cs.append(offset + p.com)
            Is.append(p.inertia)
            offset = offset - np.array([0.0, 0.0, p.length])
        m_b = float(sum(ms))
        if m_b > 0:
            c = sum(mi * ci for mi, ci in zip(ms, cs, strict=True)) / m_b
        else:
            c = np.zeros(3)
        inertia = np.zeros((3, 3))
        for mi, ci, ii in zip(ms, cs, Is, strict=True):
            d = ci - c
            inertia += ii + mi * (d @ d * np.eye(3) - np.outer(d, d))
        r = rot_of[b]
        body["mass"] = m_b
        body["com"] = (r @ c).tolist()
        body["inertia"] = (r @ inertia @ r.T).tolist()
    unmapped = [b for b in names if b not in mapping]
    if unmapped:
        warnings.warn(
            f"scale_model: no {tab.name!r} segment for bodies {unmapped}; their inertial "
            "parameters are unchanged (use `segment_map`)",
            AhbmWarning,
            stacklevel=2,
        )
    missing = [s for s in params if s not in used and params[s].mass > 0]
    if missing:
        lost = sum(params[s].mass for s in missing)
        warnings.warn(
            f"scale_model: table segments {missing} ({lost:.2f} kg) are not assigned to any "
            "body (merge them with `segment_map`)",
            AhbmWarning,
            stacklevel=2,
        )
    return type(model).from_dict(data, source=f"scale_model({model.name})")
