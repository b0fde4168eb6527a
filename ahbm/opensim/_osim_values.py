"""Values of ``.osim`` files: the XML tree, numbers, rotations and functions (internal).

The XML parser of :mod:`ahbm.opensim._xml` (no document type declarations,
no entities), the reader of numbers and vectors with the element named in
every error (:class:`_Reader`), OpenSim's body-fixed XYZ angles, and OpenSim
functions as :mod:`ahbm.kinematics.functions` dictionaries and back.
"""

from __future__ import annotations

import math

import numpy as np

from ahbm.errors import FileFormatError, ModelError
from ahbm.opensim._xml import XmlNode, parse_xml
from ahbm.opensim._xml import xml_quoteattr as quoteattr

__all__ = []


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
