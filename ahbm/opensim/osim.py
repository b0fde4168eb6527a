"""OpenSim model files (``.osim``): read them into a :class:`~ahbm.kinematics.tree.Model`
and write models back.

:func:`read_osim` reads OpenSim 4.x model files (and 3.3 files, where bodies
hold their joints); :func:`write_osim` writes an OpenSim 4 file;
:func:`osim_coordinates` is the coordinate table (ranges, defaults, flags) of
a model; :func:`osim_speed_matrix` maps ahbm's generalized velocities to
OpenSim's generalized speeds (they differ only for ball and free joints).
The mapping of OpenSim's elements onto ahbm is described in ``docs/opensim.md``.

Everything of an OpenSim model that is not a body, joint, coordinate,
marker, gravity or coordinate coupler is kept, as JSON-able data, in the
model-file section ``"opensim"`` (``model.section("opensim")``, registered
with :func:`~ahbm.kinematics.model_file.register_model_section` by ``import
ahbm``, which imports this module on first use): the coordinate table, the forces (muscles with
their paths), the wrap objects, the contact geometry and the display
geometry. :func:`write_osim` writes them back.

Security: the XML parser refuses document type declarations and entities
(no external or internal entity is ever expanded), so a hostile file cannot
read local files or blow up memory.
"""

from __future__ import annotations

import json
import math
import os
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

import numpy as np

from ahbm._internal.files import atomic_path
from ahbm._internal.validation import output_path
from ahbm.errors import AhbmWarning, DataError, FileFormatError, ModelError
from ahbm.kinematics.model_file import register_model_section
from ahbm.kinematics.tree import Model
from ahbm.opensim._xml import XmlNode, parse_xml

__all__ = [
    "OsimItem",
    "read_osim",
    "write_osim",
    "osim_coordinates",
    "osim_motion_types",
    "osim_speed_matrix",
    "OSIM_SECTION",
]

#: Key of the model-file section that keeps OpenSim data ahbm does not model.
OSIM_SECTION = "opensim"

_FUNCTION_TYPES = (
    "Constant",
    "LinearFunction",
    "SimmSpline",
    "NaturalCubicSpline",
    "PiecewiseLinearFunction",
    "PolynomialFunction",
    "MultiplierFunction",
)
_JOINT_TYPES = (
    "WeldJoint",
    "PinJoint",
    "SliderJoint",
    "UniversalJoint",
    "BallJoint",
    "GimbalJoint",
    "FreeJoint",
    "PlanarJoint",
    "CustomJoint",
)
_AXIS_NAMES = (
    "rotation1", "rotation2", "rotation3", "translation1", "translation2", "translation3",
)  # fmt: skip
_EX, _EY, _EZ = (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)
_ZERO = {"type": "Constant", "value": 0.0}
#: OpenSim's default coordinate range (OpenSim 4.6), rad or m
_DEFAULT_RANGE = (-10.0, 10.0)
_IDENTITY = {"type": "LinearFunction", "slope": 1.0, "intercept": 0.0}
_EYE3 = np.eye(3)
_EYE_LIST = _EYE3.tolist()

# ----------------------------------------------------------------------------
# XML with line numbers, without DTDs or entities
# ----------------------------------------------------------------------------


_Node = XmlNode


#: the forces of a model's ForceSet: read shallow by ``read_osim(..., forces="summary")``
_FORCE_OBJECTS = frozenset({("ForceSet", "objects")})


#: display geometry and wrap objects: left out by ``read_osim(..., forces="summary")``
_SUMMARY_SKIP = frozenset({"FrameGeometry", "attached_geometry", "VisibleObject", "WrapObjectSet"})


def _parse_xml(data: bytes, source: str, *, shallow=(), skip=()) -> XmlNode:
    """Parse `data` into a tree of nodes (FileFormatError on malformed or refused XML).

    `shallow`, `skip`: see :func:`ahbm.opensim._xml.parse_xml` (``_FORCE_OBJECTS``: forces keep
    only their scalar properties; ``_SUMMARY_SKIP``: no display geometry or wrap objects).
    """
    return parse_xml(
        data,
        source,
        max_depth=128,
        usual="an OpenSim model nests about 12",
        shallow=shallow,
        skip=skip,
    )


# ----------------------------------------------------------------------------
# values
# ----------------------------------------------------------------------------


#: the texts of most numbers of a model file and their values (list(map(float, text.split())))
_COMMON_NUMBERS = {
    text: tuple(map(float, text.split()))
    for text in ("0", "1", "0 0 0", "1 0 0", "0 1 0", "0 0 1", "0 0 0 0 0 0")
}


class _Reader:
    """Reads typed values out of nodes; errors name the file, element and line."""

    def __init__(self, source: str):
        self.source = source

    def error(self, node: _Node, message: str) -> FileFormatError:
        return FileFormatError(f"{self.source}: {node.label()}: {message}")

    def numbers(self, node: _Node, n=None, what="numbers"):
        vals = _COMMON_NUMBERS.get(node.text)
        if vals is not None:  # finite: as below without the conversion and the check
            if n is not None and len(vals) != n:
                raise self.error(node, f"expected {n} {what}, got {len(vals)} ({node.text!r})")
            return list(vals)
        try:
            vals = list(map(float, node.text.split()))
        except ValueError:
            raise self.error(node, f"expected {what}, got {node.text!r}") from None
        if n is not None and len(vals) != n:
            raise self.error(node, f"expected {n} {what}, got {len(vals)} ({node.text!r})")
        if not all(map(math.isfinite, vals)):
            raise self.error(node, f"expected finite {what}, got {node.text!r}")
        return vals

    def child(self, node: _Node, tag: str, *, required=True):
        c = node.find(tag)
        if c is None and required:
            raise self.error(node, f"has no <{tag}> element")
        return c

    def number(self, node: _Node, tag: str, default=None) -> float:
        c = self.child(node, tag, required=default is None)
        if c is None:
            return float(default)
        return self.numbers(c, 1, "a number")[0]

    def vec(self, node: _Node, tag: str, n=3, default=None) -> list:
        c = self.child(node, tag, required=default is None)
        if c is None:
            return list(default)
        return self.numbers(c, n)

    def boolean(self, node: _Node, tag: str, default=False) -> bool:
        c = node.find(tag)
        if c is None or not c.text:
            return default
        t = c.text.strip().lower()
        if t in ("true", "1"):
            return True
        if t in ("false", "0"):
            return False
        raise self.error(c, f"expected true or false, got {c.text!r}")

    def text(self, node: _Node, tag: str, default=None):
        c = node.find(tag)
        return default if c is None else c.text


def _euler_xyz(angles) -> np.ndarray:
    """OpenSim's orientation: body-fixed X-Y-Z angles, ``R = Rx(a) Ry(b) Rz(c)``."""
    a, b, c = (float(v) for v in angles)
    if a == 0.0 and b == 0.0 and c == 0.0:  # most frames of a model
        return np.eye(3)
    ca, sa, cb, sb, cc, sc = np.cos(a), np.sin(a), np.cos(b), np.sin(b), np.cos(c), np.sin(c)
    Rx = np.array([[1, 0, 0], [0, ca, -sa], [0, sa, ca]])
    Ry = np.array([[cb, 0, sb], [0, 1, 0], [-sb, 0, cb]])
    Rz = np.array([[cc, -sc, 0], [sc, cc, 0], [0, 0, 1]])
    return Rx @ Ry @ Rz


def _xyz_angles(R) -> list:
    """Body-fixed X-Y-Z angles of a rotation matrix (inverse of :func:`_euler_xyz`)."""
    R = np.asarray(R, dtype=float)
    b = math.asin(max(-1.0, min(1.0, R[0, 2])))
    if abs(R[0, 2]) < 1.0 - 1e-12:
        a = math.atan2(-R[1, 2], R[2, 2])
        c = math.atan2(-R[0, 1], R[0, 0])
    else:  # gimbal lock: put everything in a
        a = math.atan2(R[2, 1], R[1, 1])
        c = 0.0
    return [a, b, c]


# ----------------------------------------------------------------------------
# OpenSim functions <-> ahbm.kinematics.functions dictionaries
# ----------------------------------------------------------------------------


class _Unsupported(Exception):
    """An element ahbm cannot represent (collected into the one warning)."""


def _function_node(rd: _Reader, node: _Node):
    """The function element inside `node` (4.x: ``<X name="function">``; 3.3: ``<function><X>``)."""
    for c in node.children:
        if c.tag == "function" and c.children:
            return c.children[0]
        if c.name == "function" or c.tag in _FUNCTION_TYPES:
            return c
    return None


def _function_dict(rd: _Reader, node: _Node) -> dict:
    """The ``ahbm.kinematics.functions`` dictionary of an OpenSim function element."""
    t = node.tag
    if t == "Constant":  # OpenSim's defaults: value 0, coefficients 1 0
        return {"type": t, "value": rd.number(node, "value", 0.0)}
    if t == "LinearFunction":
        cn = node.find("coefficients")
        c = [1.0, 0.0] if cn is None else rd.numbers(cn, 2, "coefficients (slope intercept)")
        return {"type": t, "slope": c[0], "intercept": c[1]}
    if t in ("SimmSpline", "NaturalCubicSpline", "PiecewiseLinearFunction"):
        x = rd.numbers(rd.child(node, "x"))
        y = rd.numbers(rd.child(node, "y"))
        if len(x) != len(y):
            raise rd.error(node, f"<x> has {len(x)} values but <y> has {len(y)}")
        return {"type": t, "x": x, "y": y}
    if t == "PolynomialFunction":
        return {"type": t, "coefficients": rd.numbers(rd.child(node, "coefficients"))}
    if t == "MultiplierFunction":
        inner = _function_node(rd, node)
        if inner is None:
            raise rd.error(node, "has no function to multiply")
        return {
            "type": t,
            "function": _function_dict(rd, inner),
            "scale": rd.number(node, "scale", 1.0),
        }
    raise _Unsupported(f"function {node.label()}")


def _function_object(rd: _Reader, node: _Node, d: dict):
    from ahbm.kinematics.functions import function_from_dict

    try:
        return function_from_dict(d)
    except ModelError as err:
        raise rd.error(node, str(err)) from err


def _num(x) -> str:
    return repr(float(x))


def _function_xml(d: dict, name: str | None = "function", indent: str = "") -> str:
    """OpenSim XML of a function dictionary."""
    t = d["type"]
    attr = f" name={quoteattr(name)}" if name else ""
    i2 = indent + "\t"
    if t == "Constant":
        body = f"{i2}<value>{_num(d['value'])}</value>\n"
    elif t == "LinearFunction":
        body = f"{i2}<coefficients>{_num(d['slope'])} {_num(d['intercept'])}</coefficients>\n"
    elif t in ("SimmSpline", "NaturalCubicSpline", "PiecewiseLinearFunction"):
        body = (
            f"{i2}<x>{' '.join(map(_num, d['x']))}</x>\n{i2}<y>{' '.join(map(_num, d['y']))}</y>\n"
        )
    elif t == "PolynomialFunction":
        body = f"{i2}<coefficients>{' '.join(map(_num, d['coefficients']))}</coefficients>\n"
    elif t == "MultiplierFunction":
        body = (
            f"{i2}<function>\n{_function_xml(d['function'], None, i2 + chr(9))}{i2}</function>\n"
            f"{i2}<scale>{_num(d.get('scale', 1.0))}</scale>\n"
        )
    else:
        raise ModelError(f"write_osim: OpenSim has no function of type {t!r}")
    return f"{indent}<{t}{attr}>\n{body}{indent}</{t}>\n"


# ----------------------------------------------------------------------------
# Generic elements kept as JSON (forces, wrap objects, contact geometry, ...)
# ----------------------------------------------------------------------------

_INT_RE = re.compile(r"^[+-]?\d+$")
#: key of a force read with ``read_osim(..., forces="summary")`` (its scalar properties only)
_SUMMARY_KEY = "ahbm_summary"
#: keys ahbm adds to kept elements (not OpenSim properties; not written back)
_ADDED_KEYS = ("kind", "body", _SUMMARY_KEY)


def _leaf_value(text: str):
    """The JSON value of a leaf element's (stripped) text: None, a bool, a number or a list
    of numbers (ints when every digit is a digit, as ``_INT_RE``), else the text."""
    if text == "":
        return None
    if len(text) <= 5:
        low = text.lower()
        if low == "true":
            return True
        if low == "false":
            return False
    vals = []
    append = vals.append
    try:  # str methods rather than the regex per token: 3x faster
        for t in text.split():
            if t.isdecimal() or (t[0] in "+-" and t[1:].isdecimal()):
                append(int(t))  # exact, whatever its size (too many digits: ValueError)
            else:
                v = float(t)
                if v - v != 0.0:  # inf or nan: kept as text
                    return text
                append(v)
    except ValueError:
        return text
    return vals[0] if len(vals) == 1 else vals


def _is_object(node: _Node) -> bool:
    return node.tag[:1].isupper()


def _element_json(node: _Node):
    """A property element: leaf value, list of objects, or a nested dict."""
    children = node.children
    if not children:
        return _leaf_value(node.text)
    if all(c.tag[:1].isupper() for c in children):  # all objects (see _is_object)
        return [_object_json(c) for c in children]
    return _object_json(node, with_type=False)


def _object_json(node: _Node, with_type=True) -> dict:
    d = {"type": node.tag} if with_type else {}
    name = node.attrib.get("name")
    if name is not None:
        d["name"] = name
    for c in node.children:
        if c.tag[:1].isupper() and (c.children or not c.text):  # an object (see _is_object)
            value = _object_json(c)
        elif not c.children:  # a leaf property (as _element_json)
            value = _leaf_value(c.text)
        else:
            value = _element_json(c)
        if c.tag in d:
            prev = d[c.tag]
            d[c.tag] = (prev if isinstance(prev, list) and c.tag[:1].isupper() else [prev]) + [
                value
            ]
        else:
            d[c.tag] = value
    return d


def _leaf_text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return " ".join(_leaf_text(v) for v in value)
    return str(value)


def _json_xml(tag: str, value, indent: str) -> str:
    """XML of a kept element (the inverse of :func:`_object_json`)."""
    if isinstance(value, dict):
        typ = value.get("type", tag)
        name = value.get("name")
        attr = f" name={quoteattr(str(name))}" if name is not None else ""
        inner = "".join(
            _json_xml(k, v, indent + "\t")
            for k, v in value.items()
            if k not in ("type", "name") + _ADDED_KEYS
        )
        return (
            f"{indent}<{typ}{attr}>\n{inner}{indent}</{typ}>\n"
            if inner
            else (f"{indent}<{typ}{attr} />\n")
        )
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        if tag[:1].isupper():  # repeated object elements
            return "".join(_json_xml(tag, v, indent) for v in value)
        inner = "".join(_json_xml(v.get("type", "Object"), v, indent + "\t") for v in value)
        return f"{indent}<{tag}>\n{inner}{indent}</{tag}>\n"
    text = _leaf_text(value)
    if text == "" and not isinstance(value, str):
        return f"{indent}<{tag} />\n"
    return f"{indent}<{tag}>{escape(text)}</{tag}>\n"


#: marks an OsimItem whose top-level body is not cached
_UNKNOWN = object()


@dataclass(frozen=True, repr=False, eq=False)
class OsimItem:
    """One element of an OpenSim model kept as data (model-file section ``"opensim"``).

    Attributes
    ----------
    kind : str
        ``"coordinate"``, ``"force"``, ``"wrap_object"``, ``"contact_geometry"``,
        ``"geometry"`` (display geometry of a body) or ``"joint"`` (the OpenSim
        type of a joint).
    data : dict
        JSON-able content (a copy is returned). OpenSim objects are dicts with
        ``"type"`` (the XML tag), ``"name"`` and one key per property; lists
        of objects are lists of such dicts. Every point with a
        ``"body"`` key has its ``"location"`` (or ``"translation"``) in that
        body's frame (m).

    Examples
    --------
    >>> it = OsimItem.make("wrap_object", {"type": "WrapSphere", "name": "knee",
    ...                                    "body": "femur_r", "translation": [0, -0.4, 0]})
    >>> it.kind, it.name, it.data["body"], it.get("translation")
    ('wrap_object', 'knee', 'femur_r', [0, -0.4, 0])
    """

    kind: str
    #: the JSON text, or (items made by read_osim) a dict this item owns and nothing else
    #: refers to, encoded on first use
    _src: str | dict
    #: the top-level ``"body"`` when it is a str or None (what the section check reads,
    #: without decoding the whole item); ``_UNKNOWN`` otherwise
    _body: object = field(default=_UNKNOWN)

    @classmethod
    def make(cls, kind: str, data: dict) -> OsimItem:
        """An item of `kind` holding a copy of the JSON-able dict `data`."""
        try:
            text = json.dumps(data)
        except (TypeError, ValueError) as err:
            raise ModelError(f"opensim section item {kind!r} must be JSON-able") from err
        return cls(str(kind), text, _known_body(data))

    @classmethod
    def _own(cls, kind: str, data: dict) -> OsimItem:
        """An item that takes `data` over (no copy): for dicts built by the reader from
        XML text (str, finite numbers, bools, None, lists, dicts: JSON-able by
        construction) that no one else keeps."""
        return cls(kind, data, _known_body(data))

    @property
    def _data(self) -> str:
        src = self._src
        if not isinstance(src, str):
            src = json.dumps(src)
            object.__setattr__(self, "_src", src)
        return src

    def _top_body(self):
        """The top-level ``"body"`` of the data (None if absent)."""
        if self._body is not _UNKNOWN:
            return self._body
        d = self.data
        return d.get("body") if isinstance(d, dict) else None

    @property
    def data(self) -> dict:
        """The content (a new copy at each access)."""
        return json.loads(self._data)

    def get(self, key: str, default=None):
        """The value of one top-level property of :attr:`data` (a copy), or `default`.

        Cheaper than ``item.data.get(key)`` for one property of a large item
        (a muscle with its path).
        """
        src = self._src
        if isinstance(src, str):
            d = json.loads(src)
            return d.get(key, default) if isinstance(d, dict) else default
        if key not in src:
            return default
        value = src[key]
        if value is None or isinstance(value, (str, int, float)):  # immutable
            return value
        return json.loads(json.dumps(value))

    @property
    def name(self):
        """The element's ``"name"`` (None if it has none)."""
        return self.get("name")

    def to_dict(self) -> dict:
        """The model-file form ``{"kind": ..., **data}``."""
        return {"kind": self.kind, **self.data}

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self.kind == other.kind and self._data == other._data

    def __hash__(self):
        return hash((self.kind, self._data))

    def __reduce__(self):  # pickle and copy: the JSON text
        if self._body is _UNKNOWN:
            return (self.__class__, (self.kind, self._data))
        return (self.__class__, (self.kind, self._data, self._body))

    def __repr__(self) -> str:
        return f"OsimItem({self.kind!r}, type={self.get('type')!r}, name={self.get('name')!r})"


def _known_body(data):
    """The top-level ``"body"`` of `data` if it is a str or None, else ``_UNKNOWN``."""
    body = data.get("body") if isinstance(data, dict) else _UNKNOWN
    return body if body is None or type(body) is str else _UNKNOWN


_KINDS = ("coordinate", "force", "wrap_object", "contact_geometry", "geometry", "joint")


def _read_section(items, model, source):
    out = []
    for k, d in enumerate(items):
        if not isinstance(d, dict) or d.get("kind") not in _KINDS:
            raise ModelError(
                f"{source}[{k}]: each item must be an object with 'kind' in {list(_KINDS)}"
            )
        data = {key: v for key, v in d.items() if key != "kind"}
        out.append(OsimItem.make(d["kind"], data))
    return _check_section(out, model)


def _write_section(items):
    return [it.to_dict() for it in items]


def _check_section(items, model):
    out = []
    names = set(model.body_names) | {"ground"}
    for it in items:
        if not isinstance(it, OsimItem):
            raise ModelError(
                f"the {OSIM_SECTION!r} section holds OsimItem objects, got {type(it).__name__}"
            )
        body = it._top_body()
        if body is not None and body not in names:
            raise ModelError(
                f"{OSIM_SECTION} item {it!r} is attached to body {body!r}, which the model "
                "does not have"
            )
        out.append(it)
    return out


register_model_section(
    OSIM_SECTION,
    read=_read_section,
    write=_write_section,
    check=_check_section,
    owner="ahbm.opensim.osim",
)


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
    """OpenSim's motion type of a CustomJoint coordinate.

    The first axis (rotation1 ... translation3) that uses the coordinate
    decides: a LinearFunction of slope 1 makes it rotational or translational,
    any other function coupled (what OpenSim 4.6 reports).
    """
    for k, a in enumerate(axes):
        if a["coordinate"] == name:
            f = a["function"]
            if f.get("type") == "LinearFunction" and f.get("slope") == 1.0:
                return "rotational" if k < 3 else "translational"
            return "coupled"
    return "undefined"


# ----------------------------------------------------------------------------
# Reading: the model description
# ----------------------------------------------------------------------------


class _Description:
    """What :func:`read_osim` found, before it becomes a Model."""

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


# ----------------------------------------------------------------------------
# Reading: from the description to a Model
# ----------------------------------------------------------------------------


def _is_zero_constant(fdict) -> bool:
    from ahbm.kinematics.functions import function_from_dict

    if fdict.get("type") == "Constant" and isinstance(fdict.get("value"), float):
        return fdict["value"] == 0.0  # (what the Constant object would say, without it)
    f = function_from_dict(fdict)
    return bool(f.is_constant and float(f(0.0)) == 0.0)


def _is_identity(fdict) -> bool:
    return (
        fdict.get("type") == "LinearFunction"
        and fdict.get("slope") == 1.0
        and fdict.get("intercept") == 0.0
    )


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
        a muscle model; needs ``muscles=False``, and :func:`write_osim`
        refuses such a model (its forces would be incomplete). "summary" also
        leaves out the display geometry (``attached_geometry``,
        ``FrameGeometry``, 3.x ``VisibleObject``) and the wrap objects (no
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
    parent frame instead of the angle rates: :func:`osim_speed_matrix`
    converts.

    **Coordinates**: ``model.coordinate_names`` are OpenSim's names, in the
    order of OpenSim's ``Q`` and ``U`` (Simbody's: the joints level by level
    from the ground, file order within a level; a CustomJoint's coordinates
    in the order of its transform axes), not the CoordinateSet order. A
    locked coordinate is removed and its joint fixed at the default value
    (a note in the warning). A clamped coordinate's range is the joint's
    ``limits`` (``{name: [lower, upper]}``, used as bounds by
    :func:`ahbm.kinematics.ik.fit_markers`, as OpenSim's IK does). The full
    table (name, joint, motion type, range, default value and speed,
    clamped, locked, prescribed) is :func:`osim_coordinates`.

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


# ----------------------------------------------------------------------------
# Coordinate table and OpenSim's generalized speeds
# ----------------------------------------------------------------------------

_TABLE_COLUMNS = (
    "joint", "motion_type", "range_min", "range_max", "default_value", "default_speed_value",
    "clamped", "locked", "prescribed",
)  # fmt: skip


def _joint_motions(joint) -> list:
    """Motion type of each coordinate of an ahbm joint, as OpenSim would call it."""
    t = joint.type
    n = len(joint.coordinates)
    if t in ("revolute", "universal", "euler"):
        return ["rotational"] * n
    if t == "prismatic":
        return ["translational"]
    if t == "free_euler":
        return ["translational"] * 3 + ["rotational"] * 3
    if t == "planar":
        return ["translational", "translational", "rotational"]
    if t == "spherical":
        return ["quaternion"] * 4
    if t == "free":
        return ["translational"] * 3 + ["quaternion"] * 4
    if t == "custom":
        axes = [_transform_item(a) for a in joint.transform]
        return [_custom_motion(axes, c) for c in joint.coordinates]
    return []


def _transform_item(a) -> dict:
    """A custom-joint transform entry as a plain dict (function as its dict)."""
    if not isinstance(a, dict):
        a = {"axis": a.axis, "coordinate": a.coordinate, "function": a.function}
    f = a["function"]
    return {
        "axis": np.asarray(a["axis"], dtype=float).tolist(),
        "coordinate": a.get("coordinate"),
        "function": f if isinstance(f, dict) else f.to_dict(),
    }


def _coordinate_rows(model: Model) -> list[dict]:
    from ahbm.kinematics.marker_model import joint_bounds

    kept = {}
    for it in model.section(OSIM_SECTION):
        if it.kind == "coordinate":
            data = it.data  # (a copy each time it is read: once)
            kept[data["name"]] = data
    lower, upper = joint_bounds(model)
    rows = []
    for i, body in enumerate(model.bodies):
        j = body.joint
        k0 = model.q_index[i]
        for k, (c, mt) in enumerate(zip(j.coordinates, _joint_motions(j), strict=False)):
            info = kept.get(c)
            lo, hi = float(lower[k0 + k]), float(upper[k0 + k])
            if info is not None and info.get("joint") == j.name:
                row = dict(info)
                row["clamped"] = bool(np.isfinite(lo) or np.isfinite(hi))
                if row["clamped"]:
                    row["range"] = [lo, hi]
                row["motion_type"] = info.get("motion_type", mt)
            else:
                clamped = bool(np.isfinite(lo) or np.isfinite(hi))
                rng = [lo, hi] if clamped else list(_DEFAULT_RANGE)
                row = {"name": c, "joint": j.name, "motion_type": mt, "range": rng,
                       "default_value": 0.0, "default_speed_value": 0.0, "clamped": clamped,
                       "locked": False, "prescribed": False}  # fmt: skip
            rows.append(row)
    in_model = set(model.coordinate_names)
    for name, info in kept.items():
        if name not in in_model:  # locked, or coupled to a locked coordinate
            rows.append(dict(info))
    return rows


def osim_motion_types(model: Model) -> dict:
    """``{coordinate name: motion type}`` of :func:`osim_coordinates`, without the table.

    The same values as the table's ``motion_type`` column (for the
    coordinates of the model and those :func:`read_osim` removed), read
    straight from the ``"opensim"`` section and the joints: no ranges or
    defaults are collected, which the ID and IK tools do not need.

    Examples
    --------
    >>> from ahbm.kinematics.tree import Model
    >>> m = Model(); _ = m.add_body("a", "ground", {"type": "prismatic", "axis": [1, 0, 0]})
    >>> osim_motion_types(m)
    {'a': 'translational'}
    """
    if not isinstance(model, Model):
        raise ModelError(f"osim_motion_types expects a Model, got {type(model).__name__}")
    kept = {}
    for it in model.section(OSIM_SECTION):
        if it.kind == "coordinate":
            kept[it.get("name")] = it
    out = {}
    for body in model.bodies:
        j = body.joint
        motions = None
        for k, c in enumerate(j.coordinates):
            it = kept.get(c)
            mt = None
            if it is not None and it.get("joint") == j.name:
                mt = it.get("motion_type")
            if mt is None:
                if motions is None:
                    motions = _joint_motions(j)
                mt = motions[k] if k < len(motions) else None
            out[c] = mt
    for name, it in kept.items():
        if name not in out:  # locked, or coupled to a locked coordinate
            out[name] = it.get("motion_type")
    return out


def osim_coordinates(model: Model, *, records: bool = False):
    """The coordinate table of a model, as OpenSim describes coordinates.

    Parameters
    ----------
    model : Model
        A model from :func:`read_osim` (its ``"opensim"`` section holds the
        table) or any ahbm model (the table is derived from its joints).
    records : bool
        Return the rows as a list of dicts ``{"name": ..., column: value}``
        (plain Python values, the same as the DataFrame's) instead of a
        DataFrame (default False): no pandas object is built.

    Returns
    -------
    pandas.DataFrame or list of dict
        One row per coordinate, indexed by name, in ``q`` order, then the
        coordinates that :func:`read_osim` removed (locked ones, and those a
        coupler ties to a locked one). Columns:
        ``joint``; ``motion_type`` (``"rotational"``, ``"translational"``,
        ``"coupled"``, or ``"quaternion"`` for ahbm's quaternion
        components); ``range_min``, ``range_max`` (rad or m);
        ``default_value``; ``default_speed_value``; ``clamped`` (the range
        bounds the coordinate: the joint's ``limits``); ``locked``;
        ``prescribed``.

    Examples
    --------
    >>> from ahbm.kinematics.tree import Model
    >>> m = Model(); _ = m.add_body("a", "ground", {"type": "revolute", "axis": [0, 0, 1],
    ...                                             "limits": [-1.0, 2.0]}, mass=1.0)
    >>> t = osim_coordinates(m)
    >>> row = t.loc["a"]
    >>> row.motion_type, float(row.range_min), float(row.range_max), bool(row.clamped)
    ('rotational', -1.0, 2.0, True)
    >>> osim_coordinates(m, records=True)[0]["motion_type"]
    'rotational'
    """
    if not isinstance(model, Model):
        raise ModelError(f"osim_coordinates expects a Model, got {type(model).__name__}")
    rows = _coordinate_rows(model)
    data = {
        "joint": [r["joint"] for r in rows],
        "motion_type": [r["motion_type"] for r in rows],
        "range_min": [float(r["range"][0]) for r in rows],
        "range_max": [float(r["range"][1]) for r in rows],
        "default_value": [float(r["default_value"]) for r in rows],
        "default_speed_value": [float(r.get("default_speed_value", 0.0)) for r in rows],
        "clamped": [bool(r["clamped"]) for r in rows],
        "locked": [bool(r["locked"]) for r in rows],
        "prescribed": [bool(r.get("prescribed", False)) for r in rows],
    }
    if records:
        return [
            {"name": r["name"], **{c: v[k] for c, v in data.items()}} for k, r in enumerate(rows)
        ]
    import pandas as pd

    return pd.DataFrame(data, index=pd.Index([r["name"] for r in rows], name="name"))


def _angular_speed_joints(model: Model) -> list[tuple[int, int]]:
    """(v index, body) of the rotations whose OpenSim speed is the angular velocity."""
    types = {
        it.data["name"]: it.data["type"] for it in model.section(OSIM_SECTION) if it.kind == "joint"
    }
    rotations: dict[str, list] = {}
    for it in model.section(OSIM_SECTION):
        if it.kind == "coordinate":
            rotations.setdefault(it.data["joint"], []).append(it.data["name"])
    out = []
    for i, body in enumerate(model.bodies):
        t = types.get(body.joint.name)
        # the three rotations of the ball or free joint, none of them locked
        if t not in ("BallJoint", "FreeJoint") or len(body.joint.coordinates) < 3:
            continue
        if list(body.joint.coordinates[:3]) != rotations.get(body.joint.name, [])[:3]:
            continue
        out.append((int(model.v_index[i]), int(model.q_index[i])))
    return out


def osim_speed_matrix(model: Model, q):
    """Matrix ``T(q)`` with OpenSim's generalized speeds ``u = T(q) @ qd``.

    OpenSim's speeds are the time derivatives of its coordinates for every
    joint except ``BallJoint`` and ``FreeJoint``, whose three rotational
    speeds are the angular velocity of the child in the parent offset frame
    (Simbody's ball and free mobilizers with Euler angles); ahbm's ``euler``
    and ``custom`` joints that :func:`read_osim` makes for them use the angle
    rates. ``T`` is the identity elsewhere.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)

    Returns
    -------
    ndarray, shape (..., nv, nv)

    Notes
    -----
    For body-fixed X-Y-Z angles ``(a, b, c)``:
    ``ω_F = [[1, 0, sin b], [0, cos a, −sin a cos b], [0, sin a, cos a cos b]] (ȧ, ḃ, ċ)``.
    Other quantities follow from the power ``τᵀ qd = τ_osimᵀ u``:
    ``M = Tᵀ M_osim T``, ``τ = Tᵀ τ_osim``, ``u̇ = T q̈ + Ṫ qd``.

    Examples
    --------
    >>> from ahbm.kinematics.tree import Model
    >>> m = Model(); _ = m.add_body("a", "ground", "fixed")
    >>> osim_speed_matrix(m, []).shape
    (0, 0)
    """
    from ahbm._internal.validation import as_float_array, check_model

    check_model(model)
    q = as_float_array(q, "q")
    if q.shape[-1:] != (model.nq,):
        raise DataError(f"Expected `q` to have shape (..., {model.nq}), got {q.shape}")
    return _speed_matrix(model, q)


def _speed_matrix(model: Model, q: np.ndarray) -> np.ndarray:
    """:func:`osim_speed_matrix` without checks (works on complex `q` for complex steps)."""
    batch = q.shape[:-1]
    T = np.zeros((*batch, model.nv, model.nv), dtype=q.dtype)
    T[..., np.arange(model.nv), np.arange(model.nv)] = 1.0
    for v0, q0 in _angular_speed_joints(model):
        a, b = q[..., q0], q[..., q0 + 1]
        blk = T[..., v0 : v0 + 3, v0 : v0 + 3]
        blk[..., 0, 2] = np.sin(b)
        blk[..., 1, 1] = np.cos(a)
        blk[..., 1, 2] = -np.sin(a) * np.cos(b)
        blk[..., 2, 1] = np.sin(a)
        blk[..., 2, 2] = np.cos(a) * np.cos(b)
    return T


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


def _body_path(name: str) -> str:
    return "/ground" if name == "ground" else f"/bodyset/{name}"


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
    :func:`osim_coordinates`; locked coordinates that :func:`read_osim` fixed
    stay fixed (their joint keeps the fixed value). The ``"opensim"``
    section (forces, wrap objects, contact and display geometry) is written
    back.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from ahbm.kinematics.tree import Model
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
