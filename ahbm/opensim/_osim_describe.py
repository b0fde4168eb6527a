"""Reading ``.osim`` files: the model description (internal).

:func:`_describe` turns the XML tree of an OpenSim 4.x (or 3.3) model into a
:class:`_Description`: bodies with their inertia, joints as transform axes,
coordinates, constraints, markers and the elements kept in the ``"opensim"``
section. :func:`ahbm.opensim.osim.read_osim` builds the Model from it.
"""

from __future__ import annotations

import math

import numpy as np

from ahbm.errors import FileFormatError
from ahbm.opensim._osim_frames import (
    _FRAME_TAGS,
    _MOTION,
    _N_COORDS,
    _body_path,
    _coordinate_info,
    _custom_axes,
    _custom_motion,
    _Doc,
    _set_objects,
    _standard_axes,
)
from ahbm.opensim._osim_values import (
    _euler_xyz,
    _function_dict,
    _function_object,
    _Node,
    _Reader,
    _Unsupported,
    _xyz_angles,
)
from ahbm.opensim.osim_section import _SUMMARY_KEY, _element_json, _object_json

__all__ = []


# ----------------------------------------------------------------------------
# Reading: the model description
# ----------------------------------------------------------------------------


class _Description:
    """What :func:`~ahbm.opensim.osim.read_osim` found, before it becomes a Model."""

    def __init__(self):
        self.name = "model"
        self.gravity = [0.0, -9.80665, 0.0]
        self.bodies: dict[str, dict] = {}  # name -> {mass, com, inertia, line}
        self.joints: list[dict] = []
        self.coordinates: list[dict] = []
        self.markers: list[dict] = []
        self.couplers: list[dict] = []
        self.items: list[tuple[str, dict]] = []
        self.unsupported: list[str] = []
        self.notes: list[str] = []
        #: resolver of frame paths (4.x): path -> (body, R, p) or None
        self.frame_of = None
        #: id(function dict in a joint's axes) -> the function object built from it
        self.functions: dict[int, object] = {}


_KEEP_SETS = {"ForceSet": "force", "ContactGeometrySet": "contact_geometry"}
_IGNORED_MODEL_TAGS = {
    "Ground", "gravity", "credits", "publications", "length_units", "force_units",
    "BodySet", "JointSet", "ConstraintSet", "MarkerSet", "ForceSet", "ContactGeometrySet",
    "ComponentSet", "ProbeSet", "ControllerSet", "defaults", "ModelVisualPreferences",
    "assembly_accuracy", "WrapObjectSet", "components", "FrameGeometry", "attached_geometry",
    "validatedMarkers", "ground_body", "AnalysisSet", "Appearance",
}  # fmt: skip


def _inertia_matrix(v) -> list:
    xx, yy, zz, xy, xz, yz = v
    return [[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]


def _moments(values) -> str:
    return "[" + ", ".join(f"{v:.6g}" for v in values) + "]"


def _physical_inertia(inertia):
    """The nearest inertia that meets the triangle inequality, or None if ``inertia`` does.

    OpenSim (release builds of Simbody) accepts inertias whose principal
    moments violate ``I1 + I2 >= I3`` (Rajagopal's toes: 1e-4, 2e-4, 1e-3); no
    rigid body has one and ahbm's models refuse them. The replacement keeps the
    principal axes and moves the moments by ``t (1, 1, -1)``,
    ``t = (I3 - I1 - I2) / 3``: the nearest valid tensor in the Frobenius norm.
    `inertia`: 3x3 nested lists of floats (the description's, :func:`_inertia_matrix`).
    Returns ``(new inertia (3, 3) array, moments before, moments after)``.
    """
    (xx, xy, xz), (yx, yy, yz), (zx, zy, zz) = inertia
    # 0.5 * (I + I.T) on Python floats: numpy's IEEE operations element by element (x + y is
    # y + x exactly), without numpy's calls
    a, d, f = 0.5 * (xx + xx), 0.5 * (yy + yy), 0.5 * (zz + zz)
    b, c, e = 0.5 * (xy + yx), 0.5 * (xz + zx), 0.5 * (yz + zy)
    if not all(map(math.isfinite, (a, b, c, d, e, f))):
        return None
    ab, ac, bc = abs(b), abs(c), abs(e)
    tol = 1e-10 * max(1.0, abs(a), ab, ac, abs(d), bc, abs(f))  # the tolerance of add_body
    # I1 + I2 >= I3 <=> trace >= 2 I3, and I3 <= the largest Gershgorin row bound: when
    # trace >= 2 * that bound the inequality holds (no eigen-decomposition needed)
    if a + d + f - 2.0 * max(a + ab + ac, d + ab + bc, f + ac + bc) >= tol:
        return None
    if b == 0.0 and c == 0.0 and e == 0.0:
        # a diagonal inertia (Rajagopal's, subject01's toes): eigh's principal moments are
        # its sorted diagonal, exactly; a replacement still takes the path below
        m0, m1, m2 = sorted((a, d, f))
        if m0 < -tol or m2 - m0 - m1 <= tol:
            return None
    eig, V = np.linalg.eigh(np.array([[a, b, c], [b, d, e], [c, e, f]]))
    excess = eig[2] - eig[0] - eig[1]
    if eig[0] < -tol or excess <= tol:
        return None  # valid, or not positive semi-definite (the model reports that)
    new = eig + excess / 3.0 * np.array([1.0, 1.0, -1.0])
    return (V * new) @ V.T, eig.tolist(), new.tolist()


def _describe(root: _Node, source: str, *, summary: bool = False) -> _Description:
    """The description of a parsed model; `summary`: its ForceSet was parsed shallow."""
    rd = _Reader(source)
    if root.tag != "OpenSimDocument":
        raise FileFormatError(
            f"{source}: the root element is <{root.tag}> (line {root.line}), not "
            "<OpenSimDocument>; this is not an OpenSim model file"
        )
    model = root.find("Model")
    if model is None:
        raise rd.error(root, "has no <Model> element")
    try:
        version = int(root.attrib.get("Version", "40000"))
    except ValueError:
        raise rd.error(root, f"Version {root.attrib.get('Version')!r} is not a number") from None
    engine = model.find("DynamicsEngine")
    if engine is not None:
        raise rd.error(
            engine,
            "OpenSim 1.x/2.x model files (bodies inside a <DynamicsEngine>) are not read; open "
            "the model in OpenSim 4 and save it to convert it",
        )
    d = _Description()
    d.name = model.name or "model"
    if model.find("gravity") is not None:
        d.gravity = rd.vec(model, "gravity")
    legacy = version < 40000 or any(
        _legacy_joint(b) is not None for b in _set_objects(model, "BodySet")
    )
    if legacy:
        _describe_3(model, rd, d, summary)
    else:
        _describe_4(model, rd, d, summary)
    for c in model.children:
        if c.tag not in _IGNORED_MODEL_TAGS:
            d.unsupported.append(f"{c.label()} (model element)")
    return d


def _keep_frames_of_body(rd, doc, d, node, body_name, wrap_tag="WrapObjectSet"):
    """Wrap objects and display geometry of a body (or the ground), kept as data."""
    ws = node.find(wrap_tag)
    if ws is not None and ws.find("objects") is not None:
        for w in ws.find("objects").children:
            data = _object_json(w)
            data["body"] = body_name
            d.items.append(("wrap_object", data))
    ag = node.find("attached_geometry")
    if ag is not None and ag.children:
        d.items.append(("geometry", {"body": body_name, "attached_geometry": _element_json(ag)}))


def _normalize_points(rd, d, data: dict, frame_of, where: _Node):
    """Give every path point of a kept force its body and its location in that body."""
    for value in data.values():  # (only nested dicts change in the loop, not `data`)
        if isinstance(value, dict):
            _normalize_points(rd, d, value, frame_of, where)
        elif isinstance(value, list):
            for v in value:
                if isinstance(v, dict):
                    _normalize_points(rd, d, v, frame_of, where)
    sock = data.get("socket_parent_frame", data.get("body"))
    if data.get("type") == "MovingPathPoint" and isinstance(sock, str):
        # its location is a function of coordinates: it gets its body only when its frame
        # is the body frame itself (otherwise it stays in its frame)
        got = frame_of(sock)
        if got is not None and not np.any(got[2]) and np.array_equal(got[1], np.eye(3)):
            data["body"] = got[0]
            if "socket_parent_frame" in data:
                data["socket_parent_frame"] = _body_path(got[0])
        return
    if isinstance(sock, str) and "location" in data and isinstance(data["location"], list):
        got = frame_of(sock)
        if got is None:
            return
        body, R, p = got
        try:
            loc = np.asarray(data["location"], dtype=float)
        except (TypeError, ValueError, OverflowError):
            loc = None
        if loc is None or loc.shape != (3,):
            raise rd.error(
                where, f"a path point's location must be 3 numbers, got {data['location']!r:.60}"
            )
        data["location"] = (p + R @ loc).tolist()
        data["body"] = body
        if "socket_parent_frame" in data:
            data["socket_parent_frame"] = _body_path(body)


_FORCE_SUFFIXES = (
    "Muscle", "Force", "Actuator", "Spring", "Damper", "Bushing", "Ligament", "Limit", "Stop",
    "PathSpring",
)  # fmt: skip


def _components(model: _Node, kind: str) -> list[_Node]:
    """Elements of the model's own ``<components>`` list of one kind (4.x models built in
    code keep bodies, joints, ... there instead of in the sets)."""
    comps = model.find("components")
    out = []
    for c in comps.children if comps is not None else []:
        tag = c.tag
        k = (
            "body" if tag == "Body"
            else "joint" if tag.endswith("Joint")
            else "marker" if tag == "Marker"
            else "constraint" if tag.endswith("Constraint")
            else "frame" if tag == "PhysicalOffsetFrame"
            else "force" if tag.endswith(_FORCE_SUFFIXES)
            else "other"
        )  # fmt: skip
        if k == kind:
            out.append(c)
    return out


def _describe_4(model: _Node, rd: _Reader, d: _Description, summary: bool = False):
    doc = _Doc(model, rd)
    ground = model.find("Ground")
    if ground is not None:
        _keep_frames_of_body(rd, doc, d, ground, "ground")
    for b in _set_objects(model, "BodySet") + _components(model, "body"):
        if b.tag != "Body":
            d.unsupported.append(f"{b.label()} (not a Body)")
            continue
        if not b.name:
            raise rd.error(b, "has no name")
        if b.name in d.bodies or b.name == "ground":
            raise rd.error(b, f"duplicate body name {b.name!r}")
        d.bodies[b.name] = {
            "mass": rd.number(b, "mass", 0.0),
            "com": rd.vec(b, "mass_center", default=(0, 0, 0)),
            "inertia": _inertia_matrix(rd.vec(b, "inertia", 6, default=(0,) * 6)),
            "line": b.line,
        }
        _keep_frames_of_body(rd, doc, d, b, b.name)
        comps = b.find("components")
        for c in comps.children if comps is not None else []:
            if c.tag not in ("PhysicalOffsetFrame",):
                d.unsupported.append(f"{c.label()} (component of body '{b.name}')")
    for c in _set_objects(model, "ComponentSet"):
        if c.tag != "PhysicalOffsetFrame":
            d.unsupported.append(f"{c.label()} (component)")

    def frame_pose(owner, sock_node):
        return doc.pose(doc.resolve(owner, sock_node.text, sock_node), sock_node)

    for j in _set_objects(model, "JointSet") + _components(model, "joint"):
        sp = rd.child(j, "socket_parent_frame")
        sc = rd.child(j, "socket_child_frame")
        pb, PR, Pp = frame_pose(j, sp)
        cb, CR, Cp = frame_pose(j, sc)
        coords = [
            c
            for c in (j.find("coordinates").children if j.find("coordinates") is not None else [])
            if c.tag == "Coordinate"
        ]
        _describe_joint(rd, d, j, pb, (PR, Pp), cb, (CR, Cp), coords)

    def frame_of(path):
        node = doc.paths.get(path) if path.startswith("/") else None
        if node is None:
            cands = doc.frames_by_name.get(path.rstrip("/").split("/")[-1], [])
            node = cands[0] if len(cands) == 1 else None
        if node is None or node.tag not in _FRAME_TAGS:
            return None
        return doc.pose(node, node)

    d.frame_of = frame_of
    for mk in _set_objects(model, "MarkerSet") + _components(model, "marker"):
        if mk.tag != "Marker":
            d.unsupported.append(f"{mk.label()} (not a Marker)")
            continue
        sock = rd.child(mk, "socket_parent_frame")
        frame = doc.resolve(mk, sock.text, sock)
        if frame.tag == "Body" or frame.tag == "Ground":  # a body frame: R = I, p = 0
            body = frame.name if frame.tag == "Body" else "ground"
            # p + R @ loc without numpy: the same numbers (+ 0.0 turns -0.0 into 0.0 as it)
            location = [v + 0.0 for v in rd.vec(mk, "location", default=(0, 0, 0))]
        else:
            body, R, p = doc.pose(frame, sock)
            loc = np.asarray(rd.vec(mk, "location", default=(0, 0, 0)))
            location = (p + R @ loc).tolist()
        d.markers.append({"name": mk.name, "body": body, "location": location, "node": mk})
    constraints = _set_objects(model, "ConstraintSet") + _components(model, "constraint")
    _describe_constraints(rd, d, constraints)
    in_set = _set_objects(model, "ForceSet")
    for k, f in enumerate(in_set + _components(model, "force")):
        data = _object_json(f)
        _normalize_points(rd, d, data, frame_of, f)
        if summary and k < len(in_set):  # parsed shallow: its scalar properties only
            data[_SUMMARY_KEY] = True
        d.items.append(("force", data))
    for g in _set_objects(model, "ContactGeometrySet"):
        data = _object_json(g)
        sock = g.find("socket_frame")
        if sock is not None and sock.text:
            body, R, p = frame_pose(g, sock)
            data.update(body=body, socket_frame=_body_path(body))
            if np.any(p) or not np.array_equal(R, np.eye(3)):  # on an offset frame
                loc = np.asarray(rd.vec(g, "location", default=(0, 0, 0)))
                R2 = R @ _euler_xyz(rd.vec(g, "orientation", default=(0, 0, 0)))
                data.update(location=(p + R @ loc).tolist(), orientation=_xyz_angles(R2))
        d.items.append(("contact_geometry", data))
    for tag in ("ProbeSet", "ControllerSet"):
        for p in _set_objects(model, tag):
            d.unsupported.append(f"{p.label()} ({tag})")
    for c in _components(model, "other"):
        d.unsupported.append(f"{c.label()} (component)")


def _describe_constraints(rd, d, constraints):
    for c in constraints:
        if c.tag != "CoordinateCouplerConstraint":
            d.unsupported.append(f"{c.label()} (constraint)")
            continue
        enforced = rd.boolean(c, "isEnforced", True) and not rd.boolean(c, "isDisabled", False)
        indep = (rd.text(c, "independent_coordinate_names", "") or "").split()
        dep = (rd.text(c, "dependent_coordinate_name", "") or "").strip()
        if len(indep) != 1:
            d.unsupported.append(
                f"{c.label()} (a coupler with {len(indep)} independent coordinates)"
            )
            continue
        if not dep:
            raise rd.error(c, "has no <dependent_coordinate_name>")
        fn = rd.child(c, "coupled_coordinates_function")
        fnode = fn.children[0] if fn.children else None
        if fnode is None:
            raise rd.error(fn, "holds no function")
        try:
            fdict = _function_dict(rd, fnode)
        except _Unsupported as err:
            d.unsupported.append(f"{c.label()}: {err}")
            continue
        _function_object(rd, fnode, fdict)
        if not enforced:
            d.notes.append(f"{c.label()} is not enforced in the file and is skipped")
            continue
        d.couplers.append(
            {
                "name": c.name,
                "dependent": dep,
                "independent": indep[0],
                "function": fdict,
                "node": c,
            }
        )


def _describe_joint(rd, d, j, pb, P, cb, C, coords):
    """Add one joint (any OpenSim version) to the description."""
    jtype = j.tag
    names = [c.name for c in coords]
    if len(set(names)) != len(names) or any(not n for n in names):
        raise rd.error(j, f"has unnamed or duplicate coordinates {names}")
    entry = {
        "name": j.name or f"{cb}_joint",
        "type": jtype,
        "parent": pb,
        "child": cb,
        "P": P,
        "C": C,
        "node": j,
    }
    if cb == "ground":
        d.unsupported.append(f"{j.label()} (the ground as a child: a reversed joint)")
        return
    try:
        if jtype == "CustomJoint":
            axes = _custom_axes(rd, j, names, d.functions)
            # OpenSim orders a custom joint's coordinates (and its q, u) by the transform axes
            used = [a["coordinate"] for a in axes if a["coordinate"] is not None]
            rank = {n: k for k, n in reversed(list(enumerate(used)))}
            coords = sorted(coords, key=lambda c: rank.get(c.name, len(used)))
            names = [c.name for c in coords]
            motions = [_custom_motion(axes, n) for n in names]
        elif jtype in _N_COORDS:
            if len(names) != _N_COORDS[jtype]:
                raise rd.error(
                    j, f"a {jtype} has {_N_COORDS[jtype]} coordinates, the file gives {len(names)}"
                )
            axes = _standard_axes(jtype, names)
            motions = [{"r": "rotational", "t": "translational"}[m] for m in _MOTION.get(jtype, "")]
        else:
            raise _Unsupported(f"{j.label()} (joint type {jtype})")
    except _Unsupported as err:
        d.unsupported.append(f"{err}: the body '{cb}' is welded to '{pb}' instead")
        entry.update(type="WeldJoint", axes=_standard_axes("WeldJoint", []), coordinates=[])
        d.joints.append(entry)
        return
    infos = [
        _coordinate_info(rd, c, entry["name"], m) for c, m in zip(coords, motions, strict=False)
    ]
    entry.update(axes=axes, coordinates=infos)
    d.coordinates.extend(infos)
    d.joints.append(entry)


def _as_converted(values) -> list:
    """Numbers as OpenSim 4 has them after converting a 3.x/2.x file: 6 significant digits.

    OpenSim's update of an old file writes the six ``inertia_xx`` ... ``inertia_yz``
    elements of a body into one ``<inertia>`` element, and a joint's
    ``location_in_parent``, ``orientation_in_parent``, ``location`` and
    ``orientation`` into offset frames, through a C++ stream of default
    precision (``%g``, 6 significant digits), and then reads them back: a
    humerus ``inertia_xx`` of 0.01227763 is 0.0122776 in OpenSim 4.6 (checked
    through ``Body.get_inertia`` and ``PhysicalOffsetFrame.get_translation``).
    Masses, centres of mass, markers, coordinates, transform axes and their
    functions are kept exactly. ahbm reads these numbers the same way, so that
    the model is OpenSim's.
    """
    return [float(f"{float(v):.6g}") for v in values]


def _legacy_joint(body: _Node):
    """The ``<Joint>`` (3.x) or ``<joint>`` (2.x) element of a legacy body, if any."""
    return body.find("Joint") or body.find("joint")


def _describe_3(model: _Node, rd: _Reader, d: _Description, summary: bool = False):
    """OpenSim 3.x and 2.x: bodies hold their joints (``<Joint><PinJoint>``), markers name
    bodies."""
    bodies = _set_objects(model, "BodySet")
    names = {b.name for b in bodies}
    ground = "ground"
    for b in bodies:
        if b.tag != "Body":
            d.unsupported.append(f"{b.label()} (not a Body)")
            continue
        jn = _legacy_joint(b)
        if b.name == ground or jn is None or not jn.children:
            if b.name != ground:
                d.unsupported.append(f"{b.label()} (a body without a joint)")
            _keep_frames_of_body(rd, None, d, b, ground if b.name == ground else b.name)
            continue
        if b.find("inertia") is not None:
            inertia = rd.vec(b, "inertia", 6)
        else:  # OpenSim converts the six elements to <inertia> through text (6 digits)
            inertia = _as_converted(
                [rd.number(b, f"inertia_{k}", 0.0) for k in ("xx", "yy", "zz", "xy", "xz", "yz")]
            )
        d.bodies[b.name] = {
            "mass": rd.number(b, "mass", 0.0),
            "com": rd.vec(b, "mass_center", default=(0, 0, 0)),
            "inertia": _inertia_matrix(inertia),
            "line": b.line,
        }
        _keep_frames_of_body(rd, None, d, b, b.name)
    for b in bodies:
        jn = _legacy_joint(b)
        if b.name == ground or jn is None or not jn.children or b.name not in d.bodies:
            continue
        j = jn.children[0]
        parent = (rd.text(j, "parent_body", "") or "").strip()
        if parent not in names:
            raise rd.error(j, f"names the parent body {parent!r}, which the model does not have")
        if rd.boolean(j, "reverse", False):
            d.unsupported.append(f"{j.label()} (a reversed joint): body '{b.name}' is welded")
        # OpenSim 4 turns these into offset frames through text (6 digits): _as_converted
        P = (
            _euler_xyz(_as_converted(rd.vec(j, "orientation_in_parent", default=(0, 0, 0)))),
            np.asarray(_as_converted(rd.vec(j, "location_in_parent", default=(0, 0, 0)))),
        )
        C = (
            _euler_xyz(_as_converted(rd.vec(j, "orientation", default=(0, 0, 0)))),
            np.asarray(_as_converted(rd.vec(j, "location", default=(0, 0, 0)))),
        )
        cs = j.find("CoordinateSet")
        objs = cs.find("objects") if cs is not None else None
        coords = [c for c in (objs.children if objs is not None else []) if c.tag == "Coordinate"]
        if rd.boolean(j, "reverse", False):
            _describe_joint(
                rd, d, _Node("WeldJoint", {"name": j.name}, j.line, None), parent, P, b.name, C, []
            )
            continue
        _describe_joint(rd, d, j, parent, P, b.name, C, coords)

    def frame_of(name):
        name = name.strip().rstrip("/").split("/")[-1]
        if name == ground or name in d.bodies:
            return (name, np.eye(3), np.zeros(3))
        return None

    for mk in _set_objects(model, "MarkerSet"):
        body = (rd.text(mk, "body", "") or "").strip()
        if frame_of(body) is None:
            raise rd.error(mk, f"is on the body {body!r}, which the model does not have")
        d.markers.append(
            {
                "name": mk.name,
                "body": body,
                "location": rd.vec(mk, "location", default=(0, 0, 0)),
                "node": mk,
            }
        )
    _describe_constraints(rd, d, _set_objects(model, "ConstraintSet"))
    coordinate_paths = {
        c["name"]: f"/jointset/{j['name']}/{c['name']}" for j in d.joints for c in j["coordinates"]
    }
    for f in _set_objects(model, "ForceSet"):
        data = _object_json(f)
        _normalize_points(rd, d, data, frame_of, f)
        _legacy_sockets(data, coordinate_paths)
        _legacy_force(data)
        if summary:  # parsed shallow: its scalar properties only
            data[_SUMMARY_KEY] = True
        d.items.append(("force", data))
    for g in _set_objects(model, "ContactGeometrySet"):
        data = _object_json(g)
        body = data.pop("body_name", None)
        if isinstance(body, str):
            data["body"] = body
            data["socket_frame"] = "/ground" if body == ground else f"/bodyset/{body}"
        d.items.append(("contact_geometry", data))


def _legacy_force(data):
    """A 3.x/2.x force as OpenSim 4 updates it (so that ``write_osim`` writes a valid 4.x force).

    ``isDisabled`` becomes ``appliesForce`` (its negation; a 4.x file's
    ``isDisabled`` is ignored), and a Thelen2003Muscle's ``min_control`` is
    raised to its ``minimum_activation`` (0.01 unless given): OpenSim 4.6
    reads arm26's ``min_control`` 0 as 0.01 and refuses a 4.x file with
    ``min_control`` below ``minimum_activation``.
    """
    if isinstance(data.get("isDisabled"), bool):
        data["appliesForce"] = not data.pop("isDisabled")
    if data.get("type") == "Thelen2003Muscle" and isinstance(data.get("min_control"), (int, float)):
        low = data.get("minimum_activation", 0.01)
        if isinstance(low, (int, float)) and data["min_control"] < low:
            data["min_control"] = low


def _legacy_sockets(data, coordinate_paths=None):
    """3.3 path points name their body and coordinates; give them the 4.x sockets too.

    ``body`` gives ``socket_parent_frame``; a ConditionalPathPoint's
    ``coordinate`` and a MovingPathPoint's ``x/y/z_coordinate`` give
    ``socket_coordinate``/``socket_x_coordinate`` ... (``/jointset/JOINT/NAME``,
    from ``coordinate_paths``), as OpenSim 4 updates them.
    """
    for value in data.values():
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, dict):
                _legacy_sockets(v, coordinate_paths)
    if isinstance(data.get("body"), str) and "socket_parent_frame" not in data:
        b = data["body"]
        data["socket_parent_frame"] = "/ground" if b == "ground" else f"/bodyset/{b}"
    if data.get("type") not in ("ConditionalPathPoint", "MovingPathPoint"):
        return  # (a CoordinateLimitForce's coordinate stays a name in 4.x)
    for key in ("coordinate", "x_coordinate", "y_coordinate", "z_coordinate"):
        name = data.get(key)
        if isinstance(name, str) and coordinate_paths and name in coordinate_paths:
            data.setdefault(f"socket_{key}", coordinate_paths[name])
