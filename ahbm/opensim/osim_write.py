"""Write a :class:`~ahbm.kinematics.tree.Model` as an OpenSim 4 model file (``.osim``).

:func:`write_osim` writes bodies, joints (custom joints where no OpenSim
joint type fits), coordinates with their table, couplers, markers and the
elements kept in the ``"opensim"`` section (:mod:`ahbm.opensim.osim_section`),
atomically. The mapping is described in ``docs/opensim.md``.
"""

from __future__ import annotations

from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

import numpy as np

from ahbm._internal.files import atomic_path
from ahbm._internal.validation import output_path
from ahbm.errors import ModelError
from ahbm.kinematics.tree import Model
from ahbm.opensim._osim_frames import _N_COORDS, _axis_item, _body_path, _standard_axes
from ahbm.opensim._osim_values import (
    _AXIS_NAMES,
    _EX,
    _EY,
    _EZ,
    _IDENTITY,
    _ZERO,
    _function_xml,
    _is_zero_constant,
    _num,
    _xyz_angles,
)
from ahbm.opensim.coordinate_table import _coordinate_rows, _transform_item
from ahbm.opensim.osim_section import _SUMMARY_KEY, OSIM_SECTION, _json_xml, _leaf_text

__all__ = ["write_osim"]


# ----------------------------------------------------------------------------
# Writing
# ----------------------------------------------------------------------------

_LETTER_AXIS = {"X": _EX, "Y": _EY, "Z": _EZ}


def _vec_text(v) -> str:
    return " ".join(_num(x) for x in np.asarray(v, dtype=float).ravel())


def _complement(axes: list) -> list:
    """Unit axes completing `axes` (1 or 2 unit vectors) to a right-handed basis."""
    axes = [np.asarray(a, dtype=float) / np.linalg.norm(a) for a in axes]
    if len(axes) == 1:
        a = axes[0]
        trial = _EX if abs(a[0]) < 0.9 else _EY
        b = np.cross(a, trial)
        b /= np.linalg.norm(b)
        return [b.tolist(), np.cross(a, b).tolist()]
    c = np.cross(axes[0], axes[1])
    return [(c / np.linalg.norm(c)).tolist()]


def _axes_for(joint) -> tuple[str, list]:
    """(OpenSim joint type, six transform axes) of an ahbm joint (ModelError if none)."""
    t, coords = joint.type, list(joint.coordinates)
    if t == "fixed":
        return "WeldJoint", _standard_axes("WeldJoint", [])
    if t == "revolute" and np.allclose(joint.axis, _EZ, rtol=0, atol=1e-15):
        return "PinJoint", _standard_axes("PinJoint", coords)
    if t == "prismatic" and np.allclose(joint.axis, _EX, rtol=0, atol=1e-15):
        return "SliderJoint", _standard_axes("SliderJoint", coords)
    if t == "universal" and joint.sequence == "XY":
        return "UniversalJoint", _standard_axes("UniversalJoint", coords)
    if t == "euler" and joint.sequence == "XYZ":
        return "GimbalJoint", _standard_axes("GimbalJoint", coords)
    zero = dict(_ZERO)
    if t in ("revolute", "prismatic"):
        a = joint.axis.tolist()
        b, c = _complement([a])
        moving = [_axis_item(a, coords[0], dict(_IDENTITY))]
        rest = [_axis_item(b, None, zero), _axis_item(c, None, zero)]
        plain = [_axis_item(x, None, zero) for x in (_EX, _EY, _EZ)]
        axes = moving + rest + plain if t == "revolute" else plain + moving + rest
        return "CustomJoint", axes
    if t in ("universal", "euler", "free_euler"):
        seq = joint.sequence
        rc = coords[3:] if t == "free_euler" else coords
        rot = [
            _axis_item(_LETTER_AXIS[s], c, dict(_IDENTITY)) for s, c in zip(seq, rc, strict=False)
        ]
        if t == "universal":
            rot.append(_axis_item(_complement([r["axis"] for r in rot])[0], None, zero))
        tc = coords[:3] if t == "free_euler" else [None] * 3
        tra = [
            _axis_item(a, c, dict(_IDENTITY) if c else zero)
            for a, c in zip((_EX, _EY, _EZ), tc, strict=False)
        ]
        return "CustomJoint", rot + tra
    if t == "planar":
        return "CustomJoint", [
            _axis_item(_EZ, coords[2], dict(_IDENTITY)),
            _axis_item(_EX, None, zero),
            _axis_item(_EY, None, zero),
            _axis_item(_EX, coords[0], dict(_IDENTITY)),
            _axis_item(_EY, coords[1], dict(_IDENTITY)),
            _axis_item(_EZ, None, zero),
        ]
    if t == "custom":
        return "CustomJoint", [_transform_item(a) for a in joint.transform]
    raise ModelError(
        f"write_osim: joint '{joint.name}' is a {t!r} joint (quaternion coordinates), which an "
        "OpenSim model cannot express; use an 'euler' joint (GimbalJoint) or 'free_euler'"
    )


def _same_axes(a: list, b: list) -> bool:
    for x, y in zip(a, b, strict=False):
        if x["coordinate"] != y["coordinate"] or not np.allclose(x["axis"], y["axis"], atol=0):
            return False
        if x["function"] != y["function"] and not (
            _is_zero_constant(x["function"]) and _is_zero_constant(y["function"])
        ):
            return False
    return True


def _frame_xml(name, parent_path, R, p, ind) -> str:
    i2 = ind + "\t"
    return (
        f"{ind}<PhysicalOffsetFrame name={quoteattr(name)}>\n"
        f"{i2}<socket_parent>{escape(parent_path)}</socket_parent>\n"
        f"{i2}<translation>{_vec_text(p)}</translation>\n"
        f"{i2}<orientation>{_vec_text(_xyz_angles(R))}</orientation>\n"
        f"{ind}</PhysicalOffsetFrame>\n"
    )


def _constant_transform(axes: list) -> tuple[np.ndarray, np.ndarray]:
    """Pose (R, p) of the moving frame in the joint frame for six constant transform axes.

    OpenSim's SpatialTransform: ``R = R(a1, f1) R(a2, f2) R(a3, f3)`` (body-fixed),
    ``p = f4 a4 + f5 a5 + f6 a6`` in the joint frame (unit axes).
    """
    from ahbm.kinematics.functions import function_from_dict

    R, p = np.eye(3), np.zeros(3)
    for k, a in enumerate(axes):
        u = np.asarray(a["axis"], dtype=float)
        u = u / np.linalg.norm(u)
        v = float(function_from_dict(a["function"])(0.0))
        if k < 3:
            K = np.array([[0, -u[2], u[1]], [u[2], 0, -u[0]], [-u[1], u[0], 0]])
            R = R @ (np.eye(3) + np.sin(v) * K + (1 - np.cos(v)) * (K @ K))
        else:
            p = p + v * u
    return R, p


def _joint_xml(model: Model, i: int, rows: dict, osim_types: dict, ind: str) -> str:
    body = model.bodies[i]
    joint = body.joint
    otype, axes = _axes_for(joint)
    coords = list(joint.coordinates)
    kept = osim_types.get(joint.name)
    if otype in ("GimbalJoint",) and kept == "BallJoint":
        otype = "BallJoint"
    if otype == "CustomJoint" and kept in ("FreeJoint", "PlanarJoint"):
        order = _standard_axes(kept, coords)
        if len(coords) == _N_COORDS[kept] and _same_axes(axes, order):
            otype = kept
    parent = "ground" if body.parent < 0 else model.bodies[body.parent].name
    prot, ppos = body.rotation, body.position
    if otype == "CustomJoint" and not coords:
        # no coordinate (all locked): OpenSim 4.6 crashes on such a CustomJoint in
        # initSystem; a WeldJoint whose parent offset frame holds the constant transform
        R, p = _constant_transform(axes)
        otype, prot, ppos = "WeldJoint", prot @ R, ppos + prot @ p
    i2, i3, i4 = ind + "\t", ind + "\t\t", ind + "\t\t\t"
    out = [f"{ind}<{otype} name={quoteattr(joint.name)}>\n"]
    pname, cname = f"{parent}_offset", f"{body.name}_offset"
    out.append(f"{i2}<socket_parent_frame>{escape(pname)}</socket_parent_frame>\n")
    out.append(f"{i2}<socket_child_frame>{escape(cname)}</socket_child_frame>\n")
    if coords:
        out.append(f"{i2}<coordinates>\n")
        for c in coords:
            r = rows[c]
            out.append(
                f"{i3}<Coordinate name={quoteattr(c)}>\n"
                f"{i4}<default_value>{_num(r['default_value'])}</default_value>\n"
                f"{i4}<default_speed_value>{_num(r.get('default_speed_value', 0.0))}"
                "</default_speed_value>\n"
                f"{i4}<range>{_vec_text(r['range'])}</range>\n"
                f"{i4}<clamped>{_leaf_text(bool(r['clamped']))}</clamped>\n"
                f"{i4}<locked>false</locked>\n"
                f"{i3}</Coordinate>\n"
            )
        out.append(f"{i2}</coordinates>\n")
    cpos = getattr(body, "child_position", np.zeros(3))
    crot = getattr(body, "child_rotation", np.eye(3))
    out.append(f"{i2}<frames>\n")
    out.append(_frame_xml(pname, _body_path(parent), prot, ppos, i3))
    out.append(_frame_xml(cname, _body_path(body.name), crot, cpos, i3))
    out.append(f"{i2}</frames>\n")
    if otype == "CustomJoint":
        out.append(f"{i2}<SpatialTransform>\n")
        for name, a in zip(_AXIS_NAMES, axes, strict=False):
            out.append(
                f"{i3}<TransformAxis name={quoteattr(name)}>\n"
                f"{i4}<coordinates>{escape(a['coordinate'] or '')}</coordinates>\n"
                f"{i4}<axis>{_vec_text(a['axis'])}</axis>\n"
                + _function_xml(a["function"], "function", i4)
                + f"{i3}</TransformAxis>\n"
            )
        out.append(f"{i2}</SpatialTransform>\n")
    out.append(f"{ind}</{otype}>\n")
    return "".join(out)


def _coupler_xml(c, ind: str) -> str:
    from ahbm.dynamics.coordinate_constraints import CoordinateCoupling

    if not isinstance(c, CoordinateCoupling):
        raise ModelError(
            f"write_osim: constraint '{getattr(c, 'name', c)}' ({type(c).__name__}) has no "
            "OpenSim counterpart that ahbm writes; only CoordinateCoupling "
            "(CoordinateCouplerConstraint) is written"
        )
    rel = c.relation
    if rel is None:
        fdict = {"type": "LinearFunction", "slope": c.ratio, "intercept": c.offset}
    elif hasattr(rel, "to_dict") and not callable(getattr(rel, "tolist", None)):
        fdict = rel.to_dict()
    else:
        raise ModelError(
            f"write_osim: constraint '{c.name}' has a table or Python relation, which OpenSim "
            "cannot express exactly; give a function of ahbm.kinematics.functions"
        )
    i2 = ind + "\t"
    return (
        f"{ind}<CoordinateCouplerConstraint name={quoteattr(str(c.name))}>\n"
        f"{i2}<isEnforced>true</isEnforced>\n"
        f"{i2}<coupled_coordinates_function>\n"
        + _function_xml(fdict, None, i2 + "\t")
        + f"{i2}</coupled_coordinates_function>\n"
        f"{i2}<independent_coordinate_names>{escape(str(c.driver))}"
        "</independent_coordinate_names>\n"
        f"{i2}<dependent_coordinate_name>{escape(str(c.coordinate))}"
        "</dependent_coordinate_name>\n"
        f"{ind}</CoordinateCouplerConstraint>\n"
    )


def _osim_text(model: Model) -> str:
    items = list(model.section(OSIM_SECTION))
    rows = {r["name"]: r for r in _coordinate_rows(model)}
    osim_types = {it.data["name"]: it.data["type"] for it in items if it.kind == "joint"}
    by_body: dict[str, dict[str, list]] = {}
    for it in items:
        if it.kind in ("wrap_object", "geometry"):
            by_body.setdefault(it.data["body"], {}).setdefault(it.kind, []).append(it.data)
        elif it.kind == "force" and it.get(_SUMMARY_KEY):
            raise ModelError(
                f"model '{model.name}': force {it.name!r} holds only its scalar properties "
                "(read with read_osim(..., forces='summary')), so OpenSim could not use it; "
                "read the model with forces='full' to write it"
            )
    for c in model.constraints:
        _coupler_xml(c, "")  # checks before anything is written

    def frame_extras(name, ind):
        got = by_body.get(name, {})
        out = []
        for g in got.get("geometry", []):
            out.append(_json_xml("attached_geometry", g["attached_geometry"], ind))
        wraps = got.get("wrap_object", [])
        if wraps:
            inner = "".join(_json_xml(w["type"], w, ind + "\t\t") for w in wraps)
            out.append(
                f'{ind}<WrapObjectSet name="wrapobjectset">\n{ind}\t<objects>\n{inner}'
                f"{ind}\t</objects>\n{ind}</WrapObjectSet>\n"
            )
        return "".join(out)

    t1, t2, t3, t4 = "\t", "\t\t", "\t\t\t", "\t\t\t\t"
    out = ['<?xml version="1.0" encoding="UTF-8" ?>\n<OpenSimDocument Version="40000">\n']
    out.append(f"{t1}<Model name={quoteattr(model.name)}>\n")
    out.append(f'{t2}<Ground name="ground">\n{frame_extras("ground", t3)}{t2}</Ground>\n')
    out.append(f"{t2}<gravity>{_vec_text(model.gravity)}</gravity>\n")
    out.append(f'{t2}<BodySet name="bodyset">\n{t3}<objects>\n')
    for b in model.bodies:
        I = b.inertia
        inertia = [I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]]
        out.append(
            f"{t4}<Body name={quoteattr(b.name)}>\n"
            f"{t4}\t<mass>{_num(b.mass)}</mass>\n"
            f"{t4}\t<mass_center>{_vec_text(b.com)}</mass_center>\n"
            f"{t4}\t<inertia>{_vec_text(inertia)}</inertia>\n"
            f"{frame_extras(b.name, t4 + chr(9))}{t4}</Body>\n"
        )
    out.append(f"{t3}</objects>\n{t2}</BodySet>\n")
    out.append(f'{t2}<JointSet name="jointset">\n{t3}<objects>\n')
    for i in range(model.n_bodies):
        out.append(_joint_xml(model, i, rows, osim_types, t4))
    out.append(f"{t3}</objects>\n{t2}</JointSet>\n")
    if model.constraints:
        out.append(f'{t2}<ConstraintSet name="constraintset">\n{t3}<objects>\n')
        out += [_coupler_xml(c, t4) for c in model.constraints]
        out.append(f"{t3}</objects>\n{t2}</ConstraintSet>\n")
    for kind, tag, name in (
        ("force", "ForceSet", "forceset"),
        ("contact_geometry", "ContactGeometrySet", "contactgeometryset"),
    ):
        objs = [it.data for it in items if it.kind == kind]
        if objs:
            inner = "".join(_json_xml(o["type"], o, t4) for o in objs)
            out.append(
                f"{t2}<{tag} name={quoteattr(name)}>\n{t3}<objects>\n{inner}"
                f"{t3}</objects>\n{t2}</{tag}>\n"
            )
    markers = [(b.name, m, p) for b in model.bodies for m, p in b.markers.items()]
    if markers:
        out.append(f'{t2}<MarkerSet name="markerset">\n{t3}<objects>\n')
        for bname, m, p in markers:
            out.append(
                f"{t4}<Marker name={quoteattr(m)}>\n"
                f"{t4}\t<socket_parent_frame>{escape(_body_path(bname))}</socket_parent_frame>\n"
                f"{t4}\t<location>{_vec_text(p)}</location>\n"
                f"{t4}\t<fixed>false</fixed>\n{t4}</Marker>\n"
            )
        out.append(f"{t3}</objects>\n{t2}</MarkerSet>\n")
    out.append(f"{t1}</Model>\n</OpenSimDocument>\n")
    return "".join(out)


def write_osim(model: Model, path) -> Path:
    """Write a model as an OpenSim 4 model file (``.osim``), atomically.

    Parameters
    ----------
    model : Model
        Any model whose joints OpenSim can express (every joint type except
        the quaternion joints ``spherical`` and ``free``) and whose
        constraints are :class:`~ahbm.dynamics.CoordinateCoupling` with a
        linear relation or a function of :mod:`ahbm.kinematics.functions`.
    path : str or os.PathLike
        Destination file.

    Returns
    -------
    Path
        The written path.

    Raises
    ------
    ModelError
        A joint or constraint OpenSim cannot express, or forces read with
        ``read_osim(..., forces="summary")`` (nothing is written).
    DataError
        The folder does not exist.

    Notes
    -----
    Joints: ``fixed`` → WeldJoint, ``revolute`` about z → PinJoint,
    ``prismatic`` along x → SliderJoint, ``universal "XY"`` → UniversalJoint,
    ``euler "XYZ"`` → GimbalJoint (BallJoint if read from one), everything
    else (other axes and sequences, ``free_euler``, ``planar``, ``custom``) →
    CustomJoint, written back as FreeJoint or PlanarJoint when it was read
    from one. Each joint gets a parent offset frame (the joint frame) and a
    child offset frame (the body's child pose). Coordinates keep the table of
    :func:`~ahbm.opensim.coordinate_table.osim_coordinates`; locked coordinates
    that :func:`~ahbm.opensim.osim.read_osim` fixed stay fixed (their joint
    keeps the fixed value). The ``"opensim"``
    section (forces, wrap objects, contact and display geometry) is written
    back.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from ahbm.kinematics.tree import Model
    >>> from ahbm.opensim.osim import read_osim
    >>> m = Model("arm", gravity=[0, -9.81, 0])
    >>> _ = m.add_body("upper", "ground", {"type": "revolute", "axis": [0, 0, 1]},
    ...                mass=2.0, com=[0, -0.15, 0], inertia=0.01 * np.eye(3),
    ...                markers={"elbow": [0, -0.3, 0]})
    >>> p = write_osim(m, pathlib.Path(tempfile.mkdtemp()) / "arm.osim")
    >>> read_osim(p).bodies[0].markers["elbow"].tolist()
    [0.0, -0.3, 0.0]
    """
    if not isinstance(model, Model):
        raise ModelError(f"write_osim expects a Model, got {type(model).__name__}")
    path = output_path(path, "path")
    text = _osim_text(model)
    with atomic_path(path, argname="path") as tmp:
        tmp.write_text(text, encoding="utf-8")
    return path
