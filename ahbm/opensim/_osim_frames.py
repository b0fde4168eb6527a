"""Reading ``.osim`` files: component paths, frames and joint transforms (internal).

The document's frames (``Ground``, bodies, offset frames) resolved by their
component paths (:class:`_Doc`), and OpenSim joints as spatial transforms:
the six transform axes of each joint type, of custom joints, and the motion
type of each coordinate.
"""

from __future__ import annotations

import math

import numpy as np

from ahbm.opensim._osim_values import (
    _AXIS_NAMES,
    _DEFAULT_RANGE,
    _EX,
    _EY,
    _EYE3,
    _EZ,
    _FUNCTION_TYPES,
    _IDENTITY,
    _ZERO,
    _euler_xyz,
    _function_dict,
    _function_node,
    _function_object,
    _Node,
    _Reader,
    _Unsupported,
)

__all__ = []


# ----------------------------------------------------------------------------
# Reading: component paths and frames
# ----------------------------------------------------------------------------

_FRAME_TAGS = ("Ground", "Body", "PhysicalOffsetFrame", "OffsetFrame")


class _Doc:
    """Component paths of a 4.x model (``/bodyset/pelvis``) and frame poses."""

    def __init__(self, model: _Node, rd: _Reader):
        self.rd = rd
        self.model = model
        self.paths: dict[str, _Node] = {}
        self.node_path: dict[int, str] = {}
        self.frames_by_name: dict[str, list[_Node]] = {}
        self._walk(model, "")
        if "/ground" not in self.paths:  # <Ground> may be left out of a file
            ground = _Node("Ground", {"name": "ground"}, model.line, model)
            self.paths["/ground"] = ground
            self.node_path[id(ground)] = "/ground"
            self.frames_by_name.setdefault("ground", []).append(ground)
        self._poses: dict[int, tuple] = {}
        #: ids of the frames whose pose is exactly (I, +0 0 0): the body frames and offset
        #: frames of zero translation and orientation on them
        self._unit: set[int] = set()

    def _walk(self, node: _Node, path: str):
        for c in node.children:
            p = path
            name = c.attrib.get("name")
            if name is not None and c.tag not in _FUNCTION_TYPES:
                p = f"{path}/{name}"
                self.paths.setdefault(p, c)
                self.node_path[id(c)] = p
                if c.tag in _FRAME_TAGS:
                    self.frames_by_name.setdefault(name, []).append(c)
            if c.children:
                self._walk(c, p)

    def path_of(self, node: _Node) -> str:
        return self.node_path.get(id(node), "")

    def resolve(self, owner: _Node, text: str, where: _Node) -> _Node:
        """The frame that the socket path `text` (of component `owner`) names."""
        text = (text or "").strip()
        if not text:
            raise self.rd.error(where, "is empty; it must name a frame")
        if text[0] == "/" and "//" not in text and "/." not in text and text[-1] != "/":
            node = self.paths.get(text)  # an absolute path with nothing to normalize
            if node is not None:
                return node
        elif "/" not in text and text[0] != ".":
            # a name next to the owner (``femur_r_offset`` of a joint): the path below when
            # neither the owner's path nor the name has anything to normalize
            base = self.path_of(owner) + "/" + text
            if "//" not in base and "/." not in base:
                node = self.paths.get(base)
                if node is not None:
                    return node
        # absolute from the model, or relative to the component that owns the socket
        base = text if text.startswith("/") else self.path_of(owner) + "/" + text
        parts: list[str] = []
        for part in base.split("/"):
            if part in ("", "."):
                continue
            if part == "..":
                if parts:
                    parts.pop()
                continue
            parts.append(part)
        node = self.paths.get("/" + "/".join(parts))
        if node is None and not text.startswith("/"):  # a model path written without its "/"
            node = self.paths.get("/" + "/".join(p for p in text.split("/") if p not in ("", ".")))
        if node is None:
            # last resort (older 4.0 files): a frame with that name, if unique
            cands = self.frames_by_name.get(text.rstrip("/").split("/")[-1], [])
            if len(cands) == 1:
                node = cands[0]
        if node is None:
            raise self.rd.error(where, f"names the frame {text!r}, which the model does not have")
        return node

    def pose(self, frame: _Node, where: _Node, _seen=None):
        """(body name, R, p): the pose of `frame` in the frame of the body it is fixed to."""
        key = id(frame)
        if key in self._poses:
            return self._poses[key]
        if frame.tag == "Ground":
            out = ("ground", _EYE3.copy(), np.zeros(3))
            self._unit.add(key)
        elif frame.tag == "Body":
            out = (frame.name, _EYE3.copy(), np.zeros(3))
            self._unit.add(key)
        elif frame.tag in ("PhysicalOffsetFrame", "OffsetFrame"):
            seen = set() if _seen is None else _seen
            if key in seen:
                raise self.rd.error(frame, "is part of a cycle of offset frames")
            seen.add(key)
            sock = self.rd.child(frame, "socket_parent")
            parent = self.resolve(frame, sock.text, sock)
            body, Rp, pp = self.pose(parent, sock, seen)
            angles = self.rd.vec(frame, "orientation", default=(0, 0, 0))
            t = self.rd.vec(frame, "translation", default=(0, 0, 0))
            if id(parent) in self._unit and not any(angles):
                # (body, Rp @ R, pp + Rp @ t) with Rp = R = I and pp = +0 without numpy's
                # calls: I @ I is I, and pp + I @ t is t with -0.0 made 0.0 (t is finite)
                p = [v + 0.0 for v in t]
                out = (body, _EYE3.copy(), np.array(p))
                if not any(p):
                    self._unit.add(key)
            else:
                out = (body, Rp @ _euler_xyz(angles), pp + Rp @ np.asarray(t))
        else:
            raise self.rd.error(where, f"names {frame.label()}, which is not a physical frame")
        self._poses[key] = out
        return out


def _set_objects(model: _Node, tag: str) -> list[_Node]:
    s = model.find(tag)
    if s is None:
        return []
    objs = s.find("objects")
    return [] if objs is None else list(objs.children)


# ----------------------------------------------------------------------------
# Reading: joints as OpenSim spatial transforms
# ----------------------------------------------------------------------------


def _axis_item(axis, coordinate, function):
    return {"axis": [float(v) for v in axis], "coordinate": coordinate, "function": function}


#: OpenSim's transform axes of the (non-custom) joints: (axis, index of the coordinate or
#: None) for rotation1-3, then translation1-3
_STANDARD_AXES = {
    "WeldJoint": ((_EX, None), (_EY, None), (_EZ, None)),
    "PinJoint": ((_EZ, 0), (_EX, None), (_EY, None)),
    "SliderJoint": ((_EZ, None), (_EX, None), (_EY, None), (_EX, 0), (_EY, None), (_EZ, None)),
    "UniversalJoint": ((_EX, 0), (_EY, 1), (_EZ, None)),
    "BallJoint": ((_EX, 0), (_EY, 1), (_EZ, 2)),
    "GimbalJoint": ((_EX, 0), (_EY, 1), (_EZ, 2)),
    "FreeJoint": ((_EX, 0), (_EY, 1), (_EZ, 2), (_EX, 3), (_EY, 4), (_EZ, 5)),
    "PlanarJoint": ((_EZ, 0), (_EX, None), (_EY, None), (_EX, 1), (_EY, 2), (_EZ, None)),
}
_STANDARD_AXES = {
    k: v if len(v) == 6 else v + ((_EX, None), (_EY, None), (_EZ, None))
    for k, v in _STANDARD_AXES.items()
}


def _standard_axes(jtype: str, coords: list) -> list:
    """The six transform axes of a (non-custom) OpenSim joint (OpenSim's definitions)."""
    c = list(coords) + [None] * 6
    out = []
    for a, i in _STANDARD_AXES[jtype]:
        k = None if i is None else c[i]
        out.append(_axis_item(a, k, dict(_IDENTITY) if k else dict(_ZERO)))
    return out


_N_COORDS = {
    "WeldJoint": 0, "PinJoint": 1, "SliderJoint": 1, "UniversalJoint": 2, "BallJoint": 3,
    "GimbalJoint": 3, "FreeJoint": 6, "PlanarJoint": 3,
}  # fmt: skip
_MOTION = {
    "PinJoint": "r", "SliderJoint": "t", "UniversalJoint": "rr", "BallJoint": "rrr",
    "GimbalJoint": "rrr", "FreeJoint": "rrrttt", "PlanarJoint": "rtt",
}  # fmt: skip


def _tagged(node: _Node, tag: str, out: list) -> None:
    """Append the descendants of `node` with `tag` to `out`, in document order."""
    for c in node.children:
        if c.tag == tag:
            out.append(c)
        if c.children:
            _tagged(c, tag, out)


def _custom_axes(rd: _Reader, joint: _Node, coords: list, functions=None) -> list:
    """The six transform axes of a CustomJoint's SpatialTransform.

    `functions` (a dict), if given, receives ``id(function dict) -> function object``
    for the functions built here (checked with the element's line), so that the model
    build can use them instead of building them again.
    """
    st = rd.child(joint, "SpatialTransform")
    found = {}
    tagged = [st] if st.tag == "TransformAxis" else []
    _tagged(st, "TransformAxis", tagged)  # the subtree in document order, as st.iter()
    for ta in tagged:
        if ta.name not in _AXIS_NAMES:
            raise rd.error(ta, f"name must be one of {list(_AXIS_NAMES)}")
        found[ta.name] = ta
    axes = []
    for k, name in enumerate(_AXIS_NAMES):
        ta = found.get(name)
        if ta is None:  # OpenSim's default: no coordinate, zero
            axes.append(_axis_item((_EX, _EY, _EZ)[k % 3], None, dict(_ZERO)))
            continue
        names = (rd.text(ta, "coordinates", "") or "").split()
        if len(names) > 1:
            raise _Unsupported(
                f"{ta.label()} of joint '{joint.name}' depends on {len(names)} "
                "coordinates (ahbm's custom axes take one)"
            )
        if names and names[0] not in coords:
            raise rd.error(
                ta,
                f"uses the coordinate {names[0]!r}, which joint "
                f"'{joint.name}' does not have (its coordinates: {coords})",
            )
        axis = rd.vec(ta, "axis")
        if math.hypot(*axis) < 1e-12:
            raise rd.error(ta, "has a zero <axis>")
        fnode = _function_node(rd, ta)
        if fnode is None:
            fdict = dict(_IDENTITY) if names else dict(_ZERO)
        else:
            fdict = _function_dict(rd, fnode)
            fobj = _function_object(rd, fnode, fdict)
            if functions is not None:
                functions[id(fdict)] = fobj
            if not names and not fobj.is_constant:
                raise _Unsupported(
                    f"{ta.label()} of joint '{joint.name}': a non-constant "
                    "function without a coordinate"
                )
        axes.append(_axis_item(axis, names[0] if names else None, fdict))
    return axes


def _coordinate_info(rd: _Reader, c: _Node, joint_name: str, motion: str) -> dict:
    rng = rd.child(c, "range", required=False)
    lo_hi = rd.numbers(rng, 2) if rng is not None else list(_DEFAULT_RANGE)
    info = {
        "name": c.name,
        "joint": joint_name,
        "motion_type": motion,
        "range": lo_hi,
        "default_value": rd.number(c, "default_value", 0.0),
        "default_speed_value": rd.number(c, "default_speed_value", 0.0),
        "clamped": rd.boolean(c, "clamped", False),
        "locked": rd.boolean(c, "locked", False),
        "prescribed": rd.boolean(c, "prescribed", False),
        "line": c.line,
    }
    if info["prescribed"]:
        pf = c.find("prescribed_function")
        if pf is not None and pf.children:
            try:
                info["prescribed_function"] = _function_dict(rd, pf.children[0])
            except _Unsupported:
                pass
    return info


def _custom_motion(axes, name) -> str:
    """OpenSim's motion type of a CustomJoint coordinate (``Coordinate.getMotionType()``).

    OpenSim 4.6's rule, axis by axis from rotation1 to translation3: an axis
    that the coordinate drives through a ``LinearFunction`` of slope +1 or -1
    makes it rotational (rotation axes) or translational (translation axes),
    a later such axis overriding an earlier one; any other function
    (a ``MultiplierFunction``, as older OpenSim versions left on the axes of
    scaled models, a spline, a slope of 2) makes it coupled unless an axis
    already made it rotational or translational. A coordinate that drives no
    axis with a function is undefined. Only rotational coordinates are in
    degrees in OpenSim's files, and only their generalized forces are
    ``<name>_moment`` (the others ``<name>_force``).
    """
    motion = "undefined"
    for k, a in enumerate(axes):
        if a["coordinate"] != name:
            continue
        f = a.get("function")
        if not f:
            continue
        if f.get("type") == "LinearFunction" and f.get("slope") in (1.0, -1.0):
            motion = "rotational" if k < 3 else "translational"
        elif motion == "undefined":
            motion = "coupled"
    return motion


def _body_path(name: str) -> str:
    return "/ground" if name == "ground" else f"/bodyset/{name}"
