"""The validation of the fields of joints and bodies, from a model file or from code.

A :class:`~ahbm.kinematics.tree.Model` makes its
:class:`~ahbm.kinematics.joints.Joint` and :class:`~ahbm.kinematics.joints.Body`
objects here (``_make_joint``, ``_make_body``): every field is checked before
it is used (types, finite values below 1e12 in SI units, unit axes, proper
orthonormal rotations, symmetric positive semi-definite inertias obeying the
triangle inequality), and a wrong one is a :class:`~ahbm.errors.ModelError`
that names the body and the field. The joint types and their fields are
described in :mod:`ahbm.kinematics.joints`.
"""

from __future__ import annotations

import copy
import json
import math
import types

import numpy as np

from ahbm.errors import ModelError
from ahbm.kinematics.joints import (
    _EYE3,
    _NQ,
    CUSTOM,
    EULER,
    FIXED,
    FREE,
    FREE_EULER,
    JOINT_TYPES,
    PLANAR,
    PRISMATIC,
    REVOLUTE,
    SPHERICAL,
    UNIVERSAL,
    Body,
    Joint,
    TransformAxis,
    _frozen,
)

__all__: list[str] = []


_MAX_MAGNITUDE = 1e12


def _brief(value) -> str:
    """`value` for a message, cut to 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _check_range(arr, what):
    if arr.size and np.abs(arr).max() > _MAX_MAGNITUDE:
        raise ModelError(
            f"{what} has a value of magnitude {np.abs(arr).max():.3g}, beyond the "
            f"{_MAX_MAGNITUDE:g} that a model accepts (SI units: m, kg, kg m^2)"
        )
    return arr


def _in_range(arr) -> bool:
    """True if every value is finite with magnitude <= _MAX_MAGNITUDE (a few values: in
    Python, ~4x faster than numpy's reductions; NaN fails the comparison)."""
    for v in arr.ravel().tolist():
        if not -_MAX_MAGNITUDE <= v <= _MAX_MAGNITUDE:
            return False
    return True


def _check_vec3(value, what):
    """`value` as a new float64 array of 3 finite numbers within the model range."""
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError, OverflowError) as err:
        raise ModelError(f"{what} must be 3 numbers, got {_brief(value)}") from err
    if arr.shape != (3,):
        raise ModelError(f"{what} must be 3 finite numbers, got {_brief(value)}")
    if _in_range(arr):
        return arr
    if not np.isfinite(arr).all():
        raise ModelError(f"{what} must be 3 finite numbers, got {_brief(value)}")
    return _check_range(arr, what)


def _check_mat3(value, what):
    """`value` as a new float64 3x3 array of finite numbers within the model range."""
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError, OverflowError) as err:
        raise ModelError(f"{what} must be a 3x3 matrix, got {_brief(value)}") from err
    if arr.shape != (3, 3):
        raise ModelError(f"{what} must be a finite 3x3 matrix, got shape {arr.shape}")
    if _in_range(arr):
        return arr
    if not np.isfinite(arr).all():
        raise ModelError(f"{what} must be a finite 3x3 matrix, got shape {arr.shape}")
    return _check_range(arr, what)


def _norm3(arr) -> float:
    """``np.linalg.norm`` of a 3-vector; 1.0 without numpy's call for a coordinate axis
    (one entry +-1, the others +-0: the norm is exactly 1 in any order of summation)."""
    a, b, c = sorted(map(abs, arr.tolist()))
    if a == 0.0 and b == 0.0 and c == 1.0:
        return 1.0
    return float(np.linalg.norm(arr))


_JOINT_FIELDS = ("type", "axis", "sequence", "name", "coordinates", "limits", "transform")
_JOINT_FIELD_SET = frozenset(_JOINT_FIELDS)


def _make_joint(joint, body_name) -> Joint:
    """Validate a joint given as Joint, dict or type string."""
    if isinstance(joint, str):
        joint = {"type": joint}
    elif isinstance(joint, Joint):
        joint = {key: getattr(joint, key) for key in _JOINT_FIELDS}
    if not isinstance(joint, dict):
        raise ModelError(
            f"body '{body_name}': joint must be a dict like {{'type': 'revolute', "
            f"'axis': [0, 0, 1]}}, got {type(joint).__name__}"
        )
    unknown = (
        []
        if joint.keys() <= _JOINT_FIELD_SET
        else sorted(str(k) for k in set(joint) - _JOINT_FIELD_SET)
    )
    if unknown:
        raise ModelError(
            f"body '{body_name}': joint has unknown fields {unknown}; a joint has the fields "
            f"{list(_JOINT_FIELDS)}"
        )
    jtype = joint.get("type")
    if not isinstance(jtype, str) or jtype not in JOINT_TYPES:
        raise ModelError(
            f"body '{body_name}': unknown joint type {_brief(jtype)}; use one of "
            f"{sorted(JOINT_TYPES)}"
        )
    axis = None
    sequence = None
    if jtype in ("revolute", "prismatic"):
        if joint.get("axis") is None:
            raise ModelError(f"body '{body_name}': {jtype} joint needs an 'axis' (3 numbers)")
        axis = _check_vec3(joint["axis"], f"body '{body_name}': joint axis")
        norm = _norm3(axis)
        if abs(norm - 1.0) > 1e-6:
            raise ModelError(
                f"body '{body_name}': joint axis {axis.tolist()} must have unit length "
                f"(norm is {norm:.6g}); normalize it"
            )
        if norm != 1.0:  # (x / 1.0 is x)
            axis = axis / norm
    if jtype in ("universal", "euler", "free_euler"):
        n = 2 if jtype == "universal" else 3
        seq = joint.get("sequence")
        if (
            not isinstance(seq, str)
            or len(seq) != n
            or any(ch not in "XYZ" for ch in seq.upper())
            or any(seq.upper()[k] == seq.upper()[k + 1] for k in range(n - 1))
        ):
            raise ModelError(
                f"body '{body_name}': {jtype} joint needs a 'sequence' of {n} axis letters "
                f"from XYZ with no two consecutive equal (e.g. {'ZX' if n == 2 else 'ZXY'}), "
                f"got {seq!r}"
            )
        if seq != seq.upper():
            raise ModelError(
                f"body '{body_name}': {jtype} joint sequence {seq!r} is not uppercase; joint "
                f"sequences are intrinsic and written in uppercase ({seq.upper()!r}), while "
                "lowercase means extrinsic (scipy, ahbm.kinematics.rotations)"
            )
        sequence = seq
    name = joint.get("name") or body_name
    if not isinstance(name, str):
        raise ModelError(f"body '{body_name}': joint name must be a string, got {name!r}")
    code = JOINT_TYPES[jtype]
    coords = joint.get("coordinates")
    transform = None
    if jtype == "custom":
        transform, coords = _check_transform(joint.get("transform"), coords, body_name)
    elif joint.get("transform") is not None:
        raise ModelError(
            f"body '{body_name}': only a 'custom' joint has a 'transform'; this joint is "
            f"{jtype!r} (use type 'custom' or remove the transform)"
        )
    if code != CUSTOM and coords is None:
        coords = _default_coordinate_names(name, code, sequence)
    elif code != CUSTOM:
        if not isinstance(coords, (list, tuple)) or len(coords) != _NQ[code]:
            raise ModelError(
                f"body '{body_name}': joint 'coordinates' must list {_NQ[code]} names for a "
                f"{jtype} joint, got {coords!r}"
            )
        bad = [c for c in coords if not isinstance(c, str) or not c]
        if bad:
            raise ModelError(
                f"body '{body_name}': joint 'coordinates' must be non-empty strings, got "
                f"{_brief(bad[0])}"
            )
        coords = list(coords)
    limits = joint.get("limits")
    if limits is not None:
        try:
            json.dumps(limits)
        except (TypeError, ValueError, RecursionError) as err:
            raise ModelError(
                f"body '{body_name}': joint 'limits' must be JSON-serializable"
            ) from err
    # what Joint.__init__ makes of these, without its copies of the arrays made above
    return Joint._made(
        type=jtype,
        axis=None if axis is None else _frozen(axis),
        sequence=sequence,
        name=name,
        coordinates=None if coords is None else tuple(coords),
        _limits=None if limits is None else copy.deepcopy(limits),
        transform=transform,
    )


_AXIS_NAMES = (
    "rotation1", "rotation2", "rotation3", "translation1", "translation2", "translation3",
)  # fmt: skip
_AXIS_FIELDS = frozenset({"axis", "coordinate", "function"})


def _check_transform(items, coords, body_name):
    """Validate a custom joint's 6 transform axes; return (axes, coordinate names)."""
    from ahbm.kinematics.functions import Constant, Function, LinearFunction, as_function

    where = f"body '{body_name}': custom joint"
    if not isinstance(items, (list, tuple)) or len(items) != 6:
        raise ModelError(
            f"{where} needs a 'transform' of 6 items (rotation1-3, translation1-3), each "
            f"{{'axis': [x, y, z], 'coordinate': name or None, 'function': {{...}}}}; got "
            f"{items!r}"
        )
    axes = []
    for k, item in enumerate(items):
        what = f"{where} transform[{k}] ({_AXIS_NAMES[k]})"
        if isinstance(item, TransformAxis):
            item = {"axis": item.axis, "coordinate": item.coordinate, "function": item.function}
        if not isinstance(item, dict):
            raise ModelError(f"{what} must be a dict with 'axis', 'coordinate', 'function'")
        unknown = [] if item.keys() <= _AXIS_FIELDS else sorted(set(item) - _AXIS_FIELDS)
        if unknown:
            raise ModelError(
                f"{what} has unknown fields {unknown}; an axis has 'axis', 'coordinate', 'function'"
            )
        if item.get("axis") is None:
            raise ModelError(f"{what} needs an 'axis' (3 numbers)")
        axis = _check_vec3(item["axis"], f"{what} axis")
        norm = _norm3(axis)
        if norm < 1e-12:
            raise ModelError(f"{what} axis is zero; give a direction")
        coord = item.get("coordinate")
        if coord is not None and not isinstance(coord, str):
            raise ModelError(f"{what} coordinate must be a name or None, got {coord!r}")
        fn = item.get("function")
        if fn is None:
            fn = LinearFunction(1.0, 0.0) if coord is not None else Constant(0.0)
        elif not isinstance(fn, Function):
            fn = as_function(fn, f"{what} function")
        # TransformAxis(axis / norm, coord, fn) without its copy of the new array (x / 1.0 is x)
        unit = axis if norm == 1.0 else axis / norm
        axes.append(TransformAxis._made(axis=_frozen(unit), coordinate=coord, function=fn))
    used = []
    for ax in axes:
        if ax.coordinate is not None and ax.coordinate not in used:
            used.append(ax.coordinate)
    if coords is None:
        coords = used
    if not isinstance(coords, (list, tuple)) or not all(isinstance(c, str) for c in coords):
        raise ModelError(f"{where} 'coordinates' must be a list of names, got {coords!r}")
    coords = list(coords)
    if len(set(coords)) != len(coords):
        raise ModelError(f"{where} lists a coordinate twice in 'coordinates': {coords}")
    unknown = [c for c in used if c not in coords]
    if unknown:
        raise ModelError(
            f"{where}: the transform uses the coordinates {unknown}, which are not in the "
            f"joint's 'coordinates' {coords}; add them"
        )
    idle = [c for c in coords if c not in used]
    if idle:
        raise ModelError(
            f"{where}: the coordinates {idle} drive no transform axis; remove them or give "
            "an axis that uses them"
        )
    return tuple(axes), coords


def _default_coordinate_names(name, code, sequence):
    if code == FIXED:
        return []
    if code in (REVOLUTE, PRISMATIC):
        return [name]
    if code in (UNIVERSAL, EULER, FREE_EULER):
        letters = sequence.lower()
        if len(set(letters)) == len(letters):
            rot = [f"{name}_r{ch}" for ch in letters]
        else:
            rot = [f"{name}_r{k}{ch}" for k, ch in enumerate(letters)]
        if code == FREE_EULER:
            return [f"{name}_tx", f"{name}_ty", f"{name}_tz"] + rot
        return rot
    if code == SPHERICAL:
        return [f"{name}_qx", f"{name}_qy", f"{name}_qz", f"{name}_qw"]
    if code == FREE:
        return [f"{name}_{s}" for s in ("tx", "ty", "tz", "qx", "qy", "qz", "qw")]
    if code == PLANAR:
        return [f"{name}_tx", f"{name}_ty", f"{name}_rz"]
    raise AssertionError(code)  # pragma: no cover


def _velocity_names(joint: Joint):
    if joint.code == SPHERICAL:
        return [f"{joint.name}_wx", f"{joint.name}_wy", f"{joint.name}_wz"]
    if joint.code == FREE:
        return [*joint.coordinates[:3]] + [f"{joint.name}_{s}" for s in ("wx", "wy", "wz")]
    return list(joint.coordinates)


def _check_inertia(inertia, body_name):
    I = _check_mat3(inertia, f"body '{body_name}': inertia")
    (a, b, c), (d, e, f), (g, h, i) = I.tolist()  # 3x3 in Python: numpy's calls cost more
    scale = max(1.0, abs(a), abs(b), abs(c), abs(d), abs(e), abs(f), abs(g), abs(h), abs(i))
    # np.allclose(I, I.T, atol, rtol=0)
    if max(abs(b - d), abs(c - g), abs(f - h)) > 1e-9 * scale:
        raise ModelError(
            f"body '{body_name}': inertia must be symmetric (kg m^2 about the COM), "
            f"got {I.tolist()}"
        )
    # I = 0.5 * (I + I.T) on Python floats: numpy's IEEE operations element by element
    # (x + y is y + x exactly), without its calls
    xx, yy, zz = 0.5 * (a + a), 0.5 * (e + e), 0.5 * (i + i)
    xy, xz, yz = 0.5 * (b + d), 0.5 * (c + g), 0.5 * (f + h)
    I = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    tol = 1e-10 * scale
    # Gershgorin discs: every eigenvalue is >= min_i (I_ii - r_i) and <= max_i (I_ii + r_i)
    # (r_i the off-diagonal row sums); when these bounds already pass both checks, the
    # eigenvalues would too (the common case; no decomposition needed)
    ab, ac, bc = abs(xy), abs(xz), abs(yz)
    low = min(xx - ab - ac, yy - ab - bc, zz - ac - bc)
    high = max(xx + ab + ac, yy + ab + bc, zz + ac + bc)
    if low >= -tol and xx + yy + zz - 2.0 * high >= -tol:
        return I
    eig = np.linalg.eigvalsh(I)
    if eig[0] < -tol:
        raise ModelError(
            f"body '{body_name}': inertia is not positive definite (principal moments "
            f"{eig.tolist()}); check signs of the products of inertia"
        )
    if eig[0] + eig[1] < eig[2] - tol:
        raise ModelError(
            f"body '{body_name}': inertia violates the triangle inequality "
            f"(principal moments {eig.tolist()}: I1 + I2 must be >= I3)"
        )
    return I


#: tolerances of R.T @ R = I: np.allclose's atol 1e-6, and rtol 1e-5 on the diagonal
_ORTHO_DIAG, _ORTHO_OFF = 1e-6 + 1e-5, 1e-6


def _check_rotation(rotation, body_name, what="origin rotation"):
    R = _check_mat3(rotation, f"body '{body_name}': {what}")
    # np.allclose(R.T @ R, I, atol=1e-6) (rtol 1e-5 on the diagonal) and det R >= 0, written
    # out for 3x3 (numpy's calls cost ~10 us per body)
    (a, b, c), (d, e, f), (g, h, i) = R.tolist()
    diag_tol, off_tol = _ORTHO_DIAG, _ORTHO_OFF
    if (
        abs(a * a + d * d + g * g - 1.0) > diag_tol
        or abs(b * b + e * e + h * h - 1.0) > diag_tol
        or abs(c * c + f * f + i * i - 1.0) > diag_tol
        or abs(a * b + d * e + g * h) > off_tol
        or abs(a * c + d * f + g * i) > off_tol
        or abs(b * c + e * f + h * i) > off_tol
        or a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g) < 0
    ):
        raise ModelError(
            f"body '{body_name}': {what} is not a proper orthonormal matrix "
            f"(R.T @ R = I, det R = +1); got {R.tolist()}"
        )
    return R


def _make_body(
    name, pidx, joint, position, rotation, mass, com, inertia, markers, geometry,
    child_position=None, child_rotation=None,
):  # fmt: skip
    """Validate the fields of one body (its name and parent are already checked)."""
    jnt = _make_joint(joint, name)
    cpos = (
        np.zeros(3)
        if child_position is None
        else _check_vec3(child_position, f"body '{name}': child_position")
    )
    crot = (
        _EYE3.copy()
        if child_rotation is None
        else _check_rotation(child_rotation, name, "child_rotation")
    )
    pos = _check_vec3(position, f"body '{name}': origin position")
    rot = _EYE3.copy() if rotation is None else _check_rotation(rotation, name)
    if isinstance(mass, (str, bytes, bool)):
        raise ModelError(f"body '{name}': mass must be a number (kg), got {_brief(mass)}")
    try:
        m = float(mass)
    except (TypeError, ValueError, OverflowError) as err:
        raise ModelError(f"body '{name}': mass must be a number, got {_brief(mass)}") from err
    if not math.isfinite(m) or m < 0 or m > _MAX_MAGNITUDE:
        raise ModelError(
            f"body '{name}': mass must be finite, >= 0 and <= {_MAX_MAGNITUDE:g} kg, got "
            f"{_brief(mass)}"
        )
    c = _check_vec3(com, f"body '{name}': com")
    I = np.zeros((3, 3)) if inertia is None else _check_inertia(inertia, name)
    if markers is not None and not hasattr(markers, "items"):
        raise ModelError(
            f"body '{name}': markers must be a mapping of name -> [x, y, z], got "
            f"{type(markers).__name__}"
        )
    mk = {}
    for mname, mpos in (markers or {}).items():
        if not isinstance(mname, str) or not mname:
            raise ModelError(
                f"body '{name}': marker names must be non-empty strings, got {_brief(mname)}"
            )
        mk[mname] = _check_vec3(mpos, f"body '{name}': marker '{mname}'")
    if geometry is not None:
        try:
            json.dumps(geometry)
        except (TypeError, ValueError, RecursionError) as err:
            raise ModelError(f"body '{name}': geometry must be JSON-serializable") from err
    # Body(name, pidx, jnt, pos, rot, m, c, I, mk, geometry, cpos, crot) without its copies:
    # every array here is a new float64 array made by the checks above
    return Body._made(
        child_position=_frozen(cpos),
        child_rotation=_frozen(crot),
        name=name,
        parent=int(pidx),
        joint=jnt,
        position=_frozen(pos),
        rotation=_frozen(rot),
        mass=m,
        com=_frozen(c),
        inertia=_frozen(I),
        markers=types.MappingProxyType({str(k): _frozen(v) for k, v in mk.items()}),
        _geometry=None if geometry is None else copy.deepcopy(geometry),
    )
