"""Read OpenSim model files (``.osim``) into a :class:`~ahbm.kinematics.tree.Model`.

:func:`read_osim` reads OpenSim 4.x model files (and 3.3 files, where bodies
hold their joints). The mapping of OpenSim's elements onto ahbm is described
in ``docs/opensim.md``. The reading runs in stages: the XML tree and values
(:mod:`ahbm.opensim._osim_values`), frames and joint transforms
(:mod:`ahbm.opensim._osim_frames`), the model description
(:mod:`ahbm.opensim._osim_describe`), and here the Model built from it.

:func:`~ahbm.opensim.osim_write.write_osim` writes an OpenSim 4 file;
:func:`~ahbm.opensim.coordinate_table.osim_coordinates` is the coordinate
table (ranges, defaults, flags) of a model and
:func:`~ahbm.opensim.coordinate_table.osim_speed_matrix` maps ahbm's
generalized velocities to OpenSim's generalized speeds. Everything of an
OpenSim model that ahbm does not model is kept in the model-file section
``"opensim"`` (:mod:`ahbm.opensim.osim_section`).

Security: the XML parser refuses document type declarations and entities
(no external or internal entity is ever expanded), so a hostile file cannot
read local files or blow up memory.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np

from ahbm.errors import AhbmWarning, DataError, FileFormatError, ModelError
from ahbm.kinematics.tree import Model
from ahbm.opensim._osim_describe import _describe, _Description, _moments, _physical_inertia
from ahbm.opensim._osim_frames import _axis_item
from ahbm.opensim._osim_values import (
    _EX,
    _EY,
    _EYE_LIST,
    _EZ,
    _FORCE_OBJECTS,
    _SUMMARY_SKIP,
    _is_identity,
    _is_zero_constant,
    _parse_xml,
)
from ahbm.opensim.osim_section import OSIM_SECTION, OsimItem

__all__ = ["read_osim"]


# ----------------------------------------------------------------------------
# Reading: from the description to a Model
# ----------------------------------------------------------------------------


def _ahbm_joint(entry: dict, free: list, axes: list) -> dict:
    """The ahbm joint of an OpenSim joint with the free (unlocked) coordinates `free`."""
    jtype, name = entry["type"], entry["name"]
    names = [c["name"] for c in entry["coordinates"]]
    if names == free:  # nothing locked: OpenSim's own joint types where ahbm has them
        if jtype == "WeldJoint":
            return {"type": "fixed", "name": name, "coordinates": []}
        if jtype == "PinJoint":
            return {"type": "revolute", "axis": [0, 0, 1], "name": name, "coordinates": free}
        if jtype == "SliderJoint":
            return {"type": "prismatic", "axis": [1, 0, 0], "name": name, "coordinates": free}
        if jtype == "UniversalJoint":
            return {"type": "universal", "sequence": "XY", "name": name, "coordinates": free}
        if jtype in ("BallJoint", "GimbalJoint"):
            return {"type": "euler", "sequence": "XYZ", "name": name, "coordinates": free}
    moving = [a for a in axes if a["coordinate"] is not None]
    if not moving and all(_is_zero_constant(a["function"]) for a in axes):
        return {"type": "fixed", "name": name, "coordinates": []}
    if len(free) == 1 and len(moving) == 1 and _is_identity(moving[0]["function"]):
        k = axes.index(moving[0])
        ax = np.asarray(moving[0]["axis"], dtype=float)
        others_zero = all(_is_zero_constant(a["function"]) for a in axes if a is not moving[0])
        if others_zero and abs(np.linalg.norm(ax) - 1.0) < 1e-12:
            kind = "revolute" if k < 3 else "prismatic"
            return {"type": kind, "axis": ax.tolist(), "name": name, "coordinates": free}
    seq = _rotation_sequence(free, axes)
    if seq is not None:
        kind = "universal" if len(seq) == 2 else "euler"
        return {"type": kind, "sequence": seq, "name": name, "coordinates": free}
    return {"type": "custom", "name": name, "coordinates": free, "transform": axes}


def _rotation_sequence(free: list, axes: list):
    """ "ZXY" when the transform is a body-fixed sequence of 2 or 3 coordinate-axis rotations.

    That is: the first ``len(free)`` rotation axes are +x, +y or +z (no two
    consecutive equal) driven by the free coordinates in order with
    ``LinearFunction(1, 0)``, and every other axis is the constant 0.
    """
    n = len(free)
    if n not in (2, 3):
        return None
    letters = ""
    for k, a in enumerate(axes):
        if k < n:
            ax = [float(v) for v in a["axis"]]  # (np.array_equal on 3 numbers, in Python)
            hit = [c for c, e in zip("XYZ", (_EX, _EY, _EZ), strict=True) if ax == list(e)]
            if a["coordinate"] != free[k] or not _is_identity(a["function"]) or not hit:
                return None
            letters += hit[0]
        elif a["coordinate"] is not None or not _is_zero_constant(a["function"]):
            return None
    if any(letters[k] == letters[k + 1] for k in range(n - 1)):
        return None
    return letters


def _lock(axes: list, locked: dict) -> list:
    """Axes with each locked coordinate replaced by its function's value at the default."""
    from ahbm.kinematics.functions import function_from_dict

    out = []
    for a in axes:
        c = a["coordinate"]
        if c in locked:
            v = float(function_from_dict(a["function"])(locked[c]))
            a = _axis_item(a["axis"], None, {"type": "Constant", "value": v})
        out.append(a)
    return out


def _order_joints(d: _Description) -> list:
    """Joints level by level from the ground, in file order within a level.

    This is the order of OpenSim's (Simbody's) state vectors, so that ``q`` and
    ``qd`` of a model from :func:`read_osim` list the coordinates in the order
    of OpenSim's ``Q`` and ``U``.
    """
    by_child: dict[str, dict] = {}
    for j in d.joints:
        if j["child"] in by_child:
            d.unsupported.append(
                f"{j['node'].label()} (a second joint of body '{j['child']}': a closed loop)"
            )
            continue
        if j["child"] not in d.bodies:
            d.unsupported.append(f"{j['node'].label()} (child is not a body of the model)")
            continue
        by_child[j["child"]] = j
    placed = {"ground"}
    order = []
    remaining = [j for j in d.joints if by_child.get(j["child"]) is j]
    while remaining:
        # one level of the tree at a time, joints in file order (Simbody's order)
        progress = [j for j in remaining if j["parent"] in placed]
        if not progress:
            for j in remaining:
                d.unsupported.append(
                    f"{j['node'].label()} (its parent '{j['parent']}' is not connected to "
                    "the ground)"
                )
            break
        order += progress
        placed.update(j["child"] for j in progress)
        remaining = [j for j in remaining if j["child"] not in placed]
    for b, info in d.bodies.items():
        if b not in placed:
            d.unsupported.append(
                f"<Body name={b!r}> at line {info['line']} (no joint connects "
                "it to the ground; skipped)"
            )
    return order


def _coupled_to_locked(d: _Description, order: list) -> tuple[dict, list]:
    """Dependent coordinates of couplers whose independent coordinate is locked.

    Such a coordinate cannot move either: OpenSim's assembly puts it at
    ``f(locked value)``. Returns ``({name: value}, notes)``; chains (a
    coordinate coupled to one fixed this way) are followed.
    """
    from ahbm.kinematics.functions import function_from_dict

    fixed = {c["name"]: c["default_value"] for j in order for c in j["coordinates"] if c["locked"]}
    known = {c["name"] for j in order for c in j["coordinates"]}
    forced: dict[str, float] = {}
    notes = []
    changed = True
    while changed:
        changed = False
        for c in d.couplers:
            dep, ind = c["dependent"], c["independent"]
            if ind in fixed and dep in known and dep not in fixed:
                v = float(function_from_dict(c["function"])(fixed[ind]))
                fixed[dep] = forced[dep] = v
                notes.append(f"{dep} = {v:g} ({c['name']}, {ind} = {fixed[ind]:g})")
                changed = True
    return forced, notes


def _build(d: _Description, source: str, *, muscles: bool = True) -> Model:
    from ahbm.dynamics.coordinate_constraints import CoordinateCoupling
    from ahbm.kinematics.functions import function_from_dict

    model = Model(d.name, d.gravity)
    order = _order_joints(d)
    placed = {j["child"] for j in order}
    markers: dict[str, dict] = {b: {} for b in placed}
    for m in d.markers:
        if m["body"] not in markers:
            d.unsupported.append(
                f"{m['node'].label()} (on '{m['body']}', which is not a moving body of the model)"
            )
            continue
        markers[m["body"]][m["name"]] = m["location"]
    locked_names = []
    adjusted: list[str] = []
    free_names = set()
    forced, forced_names = _coupled_to_locked(d, order)
    for j in order:
        coords = j["coordinates"]
        locked = {c["name"]: c["default_value"] for c in coords if c["locked"]}
        locked_names += [f"{c} = {v:g}" for c, v in locked.items()]
        locked.update({c["name"]: forced[c["name"]] for c in coords if c["name"] in forced})
        free = [c["name"] for c in coords if c["name"] not in locked]
        free_names.update(free)
        axes = _lock(j["axes"], locked)
        joint = _ahbm_joint(j, free, axes)
        if joint["type"] == "custom":  # the functions _describe built (and checked) already
            built = d.functions
            joint["transform"] = [
                {**a, "function": built.get(id(a["function"]), a["function"])} for a in axes
            ]
        clamped = {c["name"]: list(c["range"]) for c in coords if c["clamped"]}
        clamped = {name: r for name, r in clamped.items() if name in free}
        if clamped:
            joint["limits"] = clamped
        b = d.bodies[j["child"]]
        (PR, Pp), (CR, Cp) = j["P"], j["C"]
        extra = {}
        # np.array_equal(CR, I) and not np.any(Cp), on Python floats (finite numbers)
        if not (CR.tolist() == _EYE_LIST and not any(Cp.tolist())):
            extra = {"child_position": np.asarray(Cp), "child_rotation": np.asarray(CR)}
        inertia = b["inertia"]
        fixed = _physical_inertia(inertia)
        if fixed is not None:
            inertia = fixed[0]
            adjusted.append(f"{j['child']} {_moments(fixed[1])} -> {_moments(fixed[2])}")
        try:
            model.add_body(
                j["child"], j["parent"], joint, position=Pp, rotation=PR, mass=b["mass"],
                com=b["com"], inertia=inertia, markers=markers[j["child"]], **extra,
            )  # fmt: skip
        except ModelError as err:
            raise FileFormatError(f"{source}: {j['node'].label()}: {err}") from err
    prescribed = [c["name"] for j in order for c in j["coordinates"] if c["prescribed"]]
    if prescribed:
        d.notes.append(
            "prescribed coordinates are free coordinates in ahbm (their functions are kept in "
            "the coordinate table): " + ", ".join(prescribed)
        )
    if adjusted:
        d.notes.append(
            "inertias whose principal moments violate the triangle inequality I1 + I2 >= I3 "
            "(OpenSim accepts them, no rigid body has them) are replaced by the nearest valid "
            "inertia with the same principal axes (principal moments, kg m^2): "
            + ", ".join(adjusted)
        )
    if locked_names:
        d.notes.append(
            "locked coordinates are fixed at their default values: " + ", ".join(locked_names)
        )
    if forced_names:
        d.notes.append(
            "coordinates coupled to a locked coordinate are fixed at the coupler's value: "
            + ", ".join(forced_names)
        )
    constraints = []
    for c in d.couplers:
        if c["dependent"] in forced:
            continue  # represented: the dependent coordinate is fixed
        missing = [n for n in (c["dependent"], c["independent"]) if n not in free_names]
        if missing:
            d.unsupported.append(
                f"{c['node'].label()} (coordinates {missing} are locked or not in the model)"
            )
            continue
        f = c["function"]
        if f["type"] == "LinearFunction":  # ahbm's linear coupling
            rel = {"ratio": f["slope"], "offset": f["intercept"]}
        else:
            rel = {"relation": function_from_dict(f)}
        constraints.append(
            CoordinateCoupling(c["dependent"], c["independent"], name=c["name"], **rel)
        )
    if constraints:
        model.constraints = constraints
    # the reader's dicts are JSON-able by construction and not kept elsewhere: the items
    # take them over (encoded to JSON when first used)
    items = [OsimItem._own("joint", {"name": j["name"], "type": j["type"]}) for j in order]
    for j in order:  # in q order
        for c in j["coordinates"]:
            info = {k: v for k, v in c.items() if k != "line"}
            items.append(OsimItem._own("coordinate", info))
    rank = {"ground": -1, **{b: k for k, b in enumerate(model.body_names)}}
    per_body = ("geometry", "wrap_object")  # in body order, as write_osim writes them
    kept = sorted(
        d.items, key=lambda it: rank.get(it[1].get("body"), 0) if it[0] in per_body else 0
    )
    for kind, data in kept:
        body = data.get("body")
        if body is not None and body != "ground" and body not in placed:
            d.unsupported.append(f"{kind} {data.get('name')!r} (on the skipped body '{body}')")
            continue
        items.append(OsimItem._own(kind, data))
    model.set_section(OSIM_SECTION, items)
    if muscles:
        _set_muscles(model, d, kept, order, forced)
    return model


def _set_muscles(model: Model, d: _Description, kept: list, order: list, forced: dict) -> None:
    """model.wrap_objects and model.muscles from the kept forces and wrap objects."""
    from ahbm.opensim.muscle_paths import muscles_from_osim

    coords = [c for j in order for c in j["coordinates"]]
    fixed = {c["name"]: c["default_value"] for c in coords if c["locked"]} | forced
    ranges = {c["name"]: tuple(c["range"]) for c in coords}
    bodies = set(model.body_names) | {"ground"}
    wraps, muscles, notes = muscles_from_osim(
        model,
        [data for kind, data in kept if kind == "force"],
        [data for kind, data in kept if kind == "wrap_object" and data.get("body") in bodies],
        frame_of=d.frame_of,
        fixed_values=fixed,
        ranges=ranges,
        remarks=d.notes,
    )
    d.unsupported.extend(f"{note} (not in model.muscles)" for note in notes)
    model.wrap_objects = wraps
    model.muscles = muscles


_FORCE_MODES = ("full", "summary")


def read_osim(path, *, muscles: bool = True, forces: str = "full", markers: bool = True) -> Model:
    """Read an OpenSim model file (``.osim``, OpenSim 4.x, or 3.x/2.x) into a Model.

    Parameters
    ----------
    path : str or os.PathLike
        The ``.osim`` file.
    muscles : bool
        Build ``model.muscles`` and ``model.wrap_objects`` (default True).
        False leaves them empty (the forces and wrap objects stay as data in
        the ``"opensim"`` section) and reads the file about a quarter faster;
        for work that uses no muscle path, such as inverse dynamics.
    forces : {"full", "summary"}
        What the ``"opensim"`` section keeps of each force of the ForceSet.
        "full" (default): everything (muscles with their paths and curves).
        "summary": only the force's own scalar properties (``type``,
        ``name``, ``appliesForce``, ``max_isometric_force``, ...; properties
        that hold elements, such as the ``GeometryPath``, are left out and
        not converted, and the item gets the key ``"ahbm_summary": True``).
        Enough to list the forces a model applies
        (:func:`ahbm.opensim.active_model_forces`) and about a third faster on
        a muscle model; needs ``muscles=False``, and
        :func:`~ahbm.opensim.osim_write.write_osim` refuses such a model (its
        forces would be incomplete). "summary" also leaves out the display
        geometry (``attached_geometry``, ``FrameGeometry``, 3.x
        ``VisibleObject``) and the wrap objects (no
        ``"geometry"`` or ``"wrap_object"`` items). The ID and IK tools
        (:func:`ahbm.opensim.run_id_setup`, :func:`ahbm.opensim.run_ik_setup`)
        read their models this way. The content left out is still parsed as
        XML (malformed XML is an error as always) but not checked further.
    markers : bool
        Read the MarkerSet (default True). False leaves ``model.markers``
        without the MarkerSet's markers (those among a 4.x model's
        ``<components>`` are still read), as the ID tool, which uses none,
        reads its model.

    Returns
    -------
    Model
        Bodies with OpenSim's names, frames, masses, centres of mass and
        inertias (about the COM, products included); one ahbm joint per
        OpenSim joint (named like it) whose coordinates are OpenSim's
        coordinates, in the order of OpenSim's state vectors (see Notes);
        markers on their bodies; gravity;
        ``model.constraints`` with a
        :class:`~ahbm.dynamics.CoordinateCoupling` per
        ``CoordinateCouplerConstraint``; ``model.muscles`` and
        ``model.wrap_objects`` (:class:`ahbm.muscles.Muscle` and
        :class:`ahbm.muscles.WrapObject`: every force with a path, see
        :mod:`ahbm.opensim.muscle_paths`); and the section ``"opensim"``
        (:class:`OsimItem` objects, ``model.section("opensim")``).

    Raises
    ------
    FileFormatError
        The file cannot be read, is not XML, declares a DOCTYPE or entities,
        or an element is malformed: the message names the element and its
        line.
    DataError
        `path`, `muscles`, `forces` or `markers` of the wrong type or value, or
        ``forces="summary"`` with ``muscles=True``.

    Warns
    -----
    AhbmWarning
        One warning listing every element that is not represented (with its
        line) and the notes (locked coordinates fixed at their defaults).

    Notes
    -----
    **Joints** (``q`` and ``u`` as OpenSim defines them):

    ========================  ================================================
    OpenSim                   ahbm
    ========================  ================================================
    WeldJoint                 ``fixed``
    PinJoint                  ``revolute`` about z of the joint frames
    SliderJoint               ``prismatic`` along x
    UniversalJoint            ``universal`` ``"XY"``
    GimbalJoint, BallJoint    ``euler`` ``"XYZ"`` (same ``q``; see below)
    FreeJoint, PlanarJoint    ``custom`` (rotations, then translations in the
                              parent frame, OpenSim's coordinate order)
    CustomJoint               ``custom`` (its SpatialTransform), or
                              ``revolute``/``prismatic`` when it is one
                              linear axis, ``universal``/``euler`` when it
                              is 2 or 3 rotations about coordinate axes
    ========================  ================================================

    The parent offset frame is the joint frame (``position``, ``rotation``),
    the child offset frame the body's ``child_position``/``child_rotation``;
    offset frames attached to other offset frames are composed. OpenSim's
    generalized speeds equal ahbm's ``qd`` for every joint except BallJoint
    and FreeJoint, whose rotational speeds are the angular velocity in the
    parent frame instead of the angle rates:
    :func:`~ahbm.opensim.coordinate_table.osim_speed_matrix` converts.

    **Coordinates**: ``model.coordinate_names`` are OpenSim's names, in the
    order of OpenSim's ``Q`` and ``U`` (Simbody's: the joints level by level
    from the ground, file order within a level; a CustomJoint's coordinates
    in the order of its transform axes), not the CoordinateSet order. A
    locked coordinate is removed and its joint fixed at the default value
    (a note in the warning). A clamped coordinate's range is the joint's
    ``limits`` (``{name: [lower, upper]}``, used as bounds by
    :func:`ahbm.kinematics.ik.fit_markers`, as OpenSim's IK does). The full
    table (name, joint, motion type, range, default value and speed,
    clamped, locked, prescribed) is
    :func:`~ahbm.opensim.coordinate_table.osim_coordinates`.

    **Numbers as OpenSim has them**: an inertia whose principal moments
    violate ``I1 + I2 >= I3`` (OpenSim accepts it; no rigid body has it) is
    replaced by the nearest valid one with the same principal axes, with a
    note. In 3.x/2.x files the body ``inertia_xx`` ... ``inertia_yz`` and the
    joint ``location_in_parent``, ``orientation_in_parent``, ``location``,
    ``orientation`` are read with 6 significant digits, as OpenSim 4 converts
    them.

    **Section** ``"opensim"``: :class:`OsimItem` objects of kind
    ``"joint"`` (``{"name", "type"}``: the OpenSim joint type),
    ``"coordinate"`` (the table rows), ``"force"`` (each element of the
    ForceSet: muscles with their ``GeometryPath``), ``"wrap_object"`` and
    ``"geometry"`` (per body), ``"contact_geometry"`` (spheres, half-spaces,
    meshes). Elements are dicts ``{"type": XML tag, "name": ..., property:
    value, ...}``; lists of objects (``"objects"``) are lists of dicts. Every
    point that has a ``"body"`` key (path points, wrap objects, contact
    geometry) has its ``"location"`` (``"translation"`` for wrap objects) in
    that body's frame, m, so scaling or a muscle module can use it directly.
    The ``SmoothSphereHalfSpaceForce`` elements with their contact geometry
    become force elements (:class:`~ahbm.dynamics.smooth_contact.SmoothSphereContact`,
    for ``simulate`` and ``ahbm.optimize``) with
    :func:`~ahbm.opensim.smooth_contacts.osim_smooth_contacts`.

    Examples
    --------
    >>> import ahbm.io, pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "pendulum.osim"
    >>> _ = p.write_text('''<OpenSimDocument Version="40000"><Model name="pendulum">
    ... <gravity>0 -9.81 0</gravity>
    ... <BodySet><objects><Body name="rod"><mass>2</mass>
    ...   <mass_center>0 -0.5 0</mass_center><inertia>0.1 0.01 0.1 0 0 0</inertia>
    ... </Body></objects></BodySet>
    ... <JointSet><objects><PinJoint name="pin">
    ...   <socket_parent_frame>/ground</socket_parent_frame>
    ...   <socket_child_frame>/bodyset/rod</socket_child_frame>
    ...   <coordinates><Coordinate name="angle"><range>-3 3</range></Coordinate></coordinates>
    ... </PinJoint></objects></JointSet></Model></OpenSimDocument>''')
    >>> m = ahbm.opensim.read_osim(p)
    >>> m.coordinate_names, m.bodies[0].joint.type, m.gravity.tolist()
    (['angle'], 'revolute', [0.0, -9.81, 0.0])
    """
    from ahbm._internal.validation import check_read_size

    if not isinstance(path, (str, os.PathLike)):
        raise DataError(
            f"Expected `path` to be a file path (str or os.PathLike), got {type(path).__name__}"
        )
    if not isinstance(muscles, bool):
        raise DataError(f"Expected `muscles` to be True or False, got {muscles!r:.60}")
    if not isinstance(markers, bool):
        raise DataError(f"Expected `markers` to be True or False, got {markers!r:.60}")
    if not isinstance(forces, str) or forces not in _FORCE_MODES:
        raise DataError(f"Expected `forces` to be one of {_FORCE_MODES}, got {forces!r:.60}")
    summary = forces == "summary"
    if summary and muscles:
        raise DataError(
            "`forces='summary'` leaves out the muscle paths that `muscles=True` builds; "
            "pass muscles=False with it (or forces='full')"
        )
    path = Path(path)
    source = f"OpenSim model file '{path}'"
    try:
        size = path.stat().st_size
        check_read_size(size, f"a model file of {size} bytes", source)
        data = path.read_bytes()
    except OSError as err:
        raise FileFormatError(f"cannot read {source}: {err}") from err
    skip = (_SUMMARY_SKIP if summary else frozenset()) | (
        frozenset() if markers else frozenset({"MarkerSet"})
    )
    root = _parse_xml(data, source, shallow=_FORCE_OBJECTS if summary else (), skip=skip)
    d = _describe(root, source, summary=summary)
    model = _build(d, source, muscles=muscles)
    if d.unsupported or d.notes:
        parts = []
        if d.unsupported:
            parts.append(
                f"{len(d.unsupported)} element(s) not represented: " + "; ".join(d.unsupported)
            )
        if d.notes:
            parts.append("notes: " + "; ".join(d.notes))
        warnings.warn(f"{source}: " + ". ".join(parts), AhbmWarning, stacklevel=2)
    return model
