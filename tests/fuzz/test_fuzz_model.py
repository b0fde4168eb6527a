"""Fuzz test of ``ahbm.load_model`` on damaged JSON model files (see ``fuzz_harness``).

The bases are the model files of real models (``human15``, the head-neck
model with markers, and a model with every joint type, limits, geometry and a
constraint). Each case applies 1-3 mutations:

* structural, on the parsed JSON: a value anywhere replaced by another type
  or an extreme (None, booleans, lists as names, ``{}``, ``Infinity``, NaN,
  1e308, 10**400, negative masses, empty strings, "ground"), keys deleted,
  renamed or added, bodies duplicated, reordered or made their own parent,
  inertias made asymmetric, indefinite or violating the triangle inequality,
  rotations that are not orthonormal, markers given as a list, values nested
  10,000 deep;
* textual, on the file: bytes that are not UTF-8, a byte order mark, numbers
  of 5,000 digits, bit flips, truncations and splices.

Every case is read by ``load_model(path)`` in a memory-limited child; it
passes when the model loads or an AhbmError names the file.

``model_cases(n, seed)`` is shared with ``benchmarks/fuzz_readers.py``.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
from fuzz_harness import Case, campaign, mutate

#: The read cap in the child (a model file counts 16 bytes per byte of JSON against it), the
#: memory the child may add on top of its imports, and what one case may add to its peak.
READ_CAP = 64 * 2**20
MEMORY_LIMIT = 768 * 2**20
ENV = {"AHBM_MAX_READ_BYTES": str(READ_CAP)}
_DEEP = "__DEEP_NESTING__"


def base_models() -> list[dict]:
    """Model-file dictionaries of real models (importing ahbm registers the sections)."""
    from ahbm.dynamics import PointConstraint
    from ahbm.kinematics import Model
    from ahbm.models import human15
    from ahbm.models.head_neck import head_neck_model

    m = Model("every_joint", gravity=(0.0, -9.81, 0.0))
    inertia = np.array([[0.1, 0.01, 0.0], [0.01, 0.2, 0.0], [0.0, 0.0, 0.25]])
    R = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    joints = [
        {"type": "free"}, {"type": "revolute", "axis": [0, 0, 1], "limits": [-1.0, 2.0]},
        {"type": "prismatic", "axis": [1, 0, 0]}, {"type": "universal", "sequence": "XY"},
        {"type": "euler", "sequence": "ZXY", "coordinates": ["a", "b", "c"]},
        {"type": "spherical"}, {"type": "free_euler", "sequence": "XYZ"}, {"type": "planar"},
        {"type": "fixed", "name": "weld"},
    ]  # fmt: skip
    parent = "ground"
    for k, joint in enumerate(joints):
        name = f"b{k}"
        m.add_body(
            name, parent, joint, position=[0.0, 0.1 * k, 0.0], rotation=R if k % 2 else None,
            mass=1.0 + k, com=[0.0, 0.05, 0.0], inertia=inertia,
            markers={f"{name}_m": [0.01, 0.02, 0.03]},
            geometry={"shape": "box", "size": [0.1, 0.2, 0.3]} if k == 3 else None,
        )  # fmt: skip
        parent = name
    custom = {"type": "custom", "transform": [
        {"axis": [0, 0, 1], "coordinate": "knee", "function": {
            "type": "LinearFunction", "slope": 1.0, "intercept": 0.0}},
        {"axis": [1, 0, 0], "coordinate": None},
        {"axis": [0, 1, 0], "coordinate": None},
        {"axis": [1, 0, 0], "coordinate": "knee", "function": {
            "type": "SimmSpline", "x": [0.0, 1.0, 2.0], "y": [0.0, 0.01, 0.0]}},
        {"axis": [0, 1, 0], "coordinate": "knee", "function": {"type": "Constant", "value": 0.1}},
        {"axis": [0, 0, 1], "coordinate": None}]}  # fmt: skip
    m.add_body(
        "custom", "b8", custom, child_position=[0.0, 0.4, 0.0], child_rotation=R, mass=2.0,
        com=[0.0, 0.1, 0.0], inertia=inertia,
    )  # fmt: skip
    m.constraints = [PointConstraint("custom", [0.0, 0.0, 0.0], name="tip")]
    return [m.to_dict(), human15(height=1.8, mass=75.0).to_dict(), head_neck_model().to_dict()]


_VALUES = [
    None, True, False, 0, -1, 1, 2**63, 10**400, 1e308, -1e308, float("inf"), float("-inf"),
    float("nan"), 1e-320, "", "x", "ground", "revolute", [], {}, ["m"], [None], [[1, 2]],
    [1, 2, 3], [[1, 0, 0], [0, 1, 0], [0, 0, 1]], {"a": 1}, [float("nan")] * 3,
    [1e308, 1e308, 1e308], [[1e308] * 3] * 3, _DEEP, "\ud800", "a" * 10_000,
]  # fmt: skip


def _paths(obj, prefix=()):
    """Every (container path, key) in a JSON tree."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield prefix, k
            yield from _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield prefix, i
            yield from _paths(v, (*prefix, i))


def _get(obj, path):
    for k in path:
        obj = obj[k]
    return obj


def _bad_matrix(rng):
    kind = int(rng.integers(0, 6))
    if kind == 0:  # asymmetric
        return [[1.0, 0.5, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    if kind == 1:  # negative principal moment
        return [[-1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    if kind == 2:  # triangle inequality
        return [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 5.0]]
    if kind == 3:  # a reflection
        return [[-1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    if kind == 4:
        return [[1e308, 0.0, 0.0], [0.0, 1e308, 0.0], [0.0, 0.0, 1e308]]
    return [[1.0, 2.0], [3.0, 4.0]]


def mutate_structure(data: dict, rng) -> tuple[dict, str]:
    """One structural mutation of a model-file dictionary (a deep copy)."""
    data = copy.deepcopy(data)
    bodies = data.get("bodies") if isinstance(data, dict) else None
    k = int(rng.integers(0, 14))
    if k >= 12 and isinstance(bodies, list) and bodies and isinstance(bodies[0], dict):
        # a change that keeps the file valid: new numbers for a body's mass and centre of mass
        b = bodies[int(rng.integers(0, len(bodies)))]
        if isinstance(b, dict):
            b["mass"] = float(rng.uniform(0.0, 100.0))
            b["com"] = rng.uniform(-1.0, 1.0, 3).tolist()
        return data, "new mass and com"
    if k <= 4 or not isinstance(bodies, list) or not bodies:
        paths = list(_paths(data))
        if not paths:
            return data, "nothing to mutate"
        # favour body fields: most of the paths are inside "bodies"
        container, key = paths[int(rng.integers(0, len(paths)))]
        parent = _get(data, container)
        if rng.random() < 0.15 and isinstance(parent, dict):
            del parent[key]
            return data, f"delete {[*container, key]}"
        if rng.random() < 0.1 and isinstance(parent, dict):
            parent[str(rng.choice(["extra", "Name", "mass ", "parent"]))] = parent.pop(key)
            return data, f"rename {[*container, key]}"
        value = _VALUES[int(rng.integers(0, len(_VALUES)))]
        parent[key] = copy.deepcopy(value)
        return data, f"{[*container, key]} = {str(value)[:30]!r}"
    i = int(rng.integers(0, len(bodies)))
    b = bodies[i]
    if not isinstance(b, dict):
        return data, "body is not a dict"
    name = b.get("name")
    if k == 5:
        field = str(rng.choice(["inertia", "mass", "com"]))
        b[field] = _bad_matrix(rng) if field == "inertia" else float(rng.choice([-1.0, 1e308]))
        return data, f"body {i} {field} = {str(b[field])[:40]}"
    if k == 6:
        b.setdefault("origin", {})
        if isinstance(b["origin"], dict):
            b["origin"]["rotation"] = _bad_matrix(rng)
        return data, f"body {i} origin rotation bad"
    if k == 7:
        how = int(rng.integers(0, 4))
        if how == 0:
            b["parent"] = name
            return data, f"body {i} is its own parent"
        if how == 1:
            b["parent"] = bodies[-1].get("name") if isinstance(bodies[-1], dict) else "zz"
            return data, f"body {i} parent is the last body"
        if how == 2:
            bodies.insert(i, copy.deepcopy(b))
            return data, f"duplicate body {i}"
        bodies.reverse()
        return data, "reverse body order"
    if k == 8:
        b["markers"] = str(rng.choice(["list", "nested", "string"]))
        b["markers"] = {"list": ["m"], "nested": {"m": {"x": 1}}, "string": "m"}[b["markers"]]
        return data, f"body {i} markers = {b['markers']}"
    if k == 9:
        joint = b.get("joint")
        if isinstance(joint, dict):
            field = str(rng.choice(["type", "axis", "sequence", "coordinates", "name", "limits"]))
            joint[field] = copy.deepcopy(_VALUES[int(rng.integers(0, len(_VALUES)))])
            return data, f"body {i} joint {field} = {str(joint[field])[:30]!r}"
        return data, "joint is not a dict"
    if k == 10:
        b["name"] = copy.deepcopy(_VALUES[int(rng.integers(0, len(_VALUES)))])
        return data, f"body {i} name = {str(b['name'])[:30]!r}"
    data[str(rng.choice(["constraints", "muscles", "gravity", "name"]))] = copy.deepcopy(
        _VALUES[int(rng.integers(0, len(_VALUES)))]
    )
    return data, "top-level entry replaced"


def _dumps(data, rng) -> bytes:
    depth = int(rng.choice([50, 1000, 10_000, 100_000]))
    try:
        text = json.dumps(data)  # Infinity and NaN as JavaScript literals, as Python reads them
    except (ValueError, RecursionError):
        text = "{}"
    text = text.replace(json.dumps(_DEEP), "[" * depth + "]" * depth)
    return text.encode("utf-8", errors="surrogatepass")


def mutate_text(raw: bytes, rng) -> tuple[bytes, str]:
    """One textual mutation of a JSON file."""
    k = int(rng.integers(0, 5))
    p = int(rng.integers(0, max(len(raw), 1)))
    if k == 0:
        junk = [b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\x80", b"\x00"][int(rng.integers(0, 5))]
        return raw[:p] + junk + raw[p:], f"insert {junk!r} at {p}"
    if k == 1:
        return b"\xef\xbb\xbf" + raw, "byte order mark"
    if k == 2:
        digits = b"9" * int(rng.choice([400, 5000]))
        at = raw.find(b'"mass": ')
        if at < 0:
            return raw, "no mass"
        at += len(b'"mass": ')
        end = at
        while end < len(raw) and raw[end : end + 1] not in (b",", b"}"):
            end += 1
        return raw[:at] + digits + raw[end:], f"mass with {len(digits)} digits"
    return mutate(raw, rng)


def model_cases(n: int, seed: int = 0):
    """`n` damaged JSON model files (Case objects; the seed of case i is i)."""
    bases = base_models()
    for i in range(n):
        rng = np.random.default_rng([seed, i])
        data = bases[i % len(bases)]
        notes = []
        for _ in range(int(rng.choice([1, 1, 1, 2, 3]))):
            data, note = mutate_structure(data, rng)
            notes.append(note)
        raw = _dumps(data, rng)
        if rng.random() < 0.25:
            raw, note = mutate_text(raw, rng)
            notes.append(note)
        yield Case(i, raw, ".json", f"base {i % len(bases)}: " + "; ".join(notes))


def check_model(model):
    """A loaded model has consistent derived arrays."""
    n = model.n_bodies
    assert model.parent.shape == (n,) and (model.parent < np.arange(n)).all()
    assert np.isfinite(model.spatial_inertias).all() and np.isfinite(model.rotations).all()
    assert (model.masses >= 0).all()


def warm_model():
    """Load the model-file reader and its sections' owners in a fuzz worker (not a case)."""
    import tempfile

    from ahbm import load_model

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "warm.json"
        path.write_text(json.dumps(base_models()[0]))
        load_model(path)


def warm_dict():
    """Build a model from a dictionary once in a fuzz worker (not a case)."""
    from ahbm.kinematics import Model

    Model.from_dict(base_models()[0])


def test_fuzz_model_files():
    campaign(
        "ahbm:load_model", model_cases(400, seed=19), what="load_model", check=check_model,
        env=ENV, timeout=20.0, memory_limit=MEMORY_LIMIT, max_peak=READ_CAP, min_ahbm=100,
        warmup=warm_model,
    )  # fmt: skip


def dict_cases(n: int, seed: int = 0):
    """The damaged model files that are still JSON, as dictionaries (for Model.from_dict)."""
    for case in model_cases(n, seed):
        try:
            data = json.loads(case.data)
        except (ValueError, RecursionError):
            continue
        yield Case(case.seed, data, "", case.note)


def test_fuzz_model_dictionaries():
    campaign(
        "ahbm.kinematics:Model.from_dict", dict_cases(300, seed=23), what="Model.from_dict",
        check=check_model, as_path=False, timeout=20.0, memory_limit=MEMORY_LIMIT,
        max_peak=READ_CAP, min_ok=10, min_ahbm=100, warmup=warm_dict,
    )  # fmt: skip
