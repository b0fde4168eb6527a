"""The import order of DESIGN.md: a module imports only from the layers above it.

errors → kinematics.rotations → kinematics.tree, _engine, kinematics.* → dynamics →
bsp, analysis → io → graphics → models → batch, cli (imports inside functions
count too).
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "ahbm"
BASE = ("errors", "_validation", "_files", "_deprecation", "types")
RANK = {
    "kinematics.rotations": 1,
    "kinematics": 2,
    "_engine": 2,
    "dynamics": 3,
    "bsp": 4,
    "analysis": 4,
    "io": 5,
    "graphics": 6,
    "models": 7,
    "batch": 8,
    "cli": 8,
    "demo": 8,
    "testing": None,
}


def _layer(module: str):
    parts = module.split(".")[1:]
    if not parts:
        return None
    if parts[0] in BASE:
        return 0
    if parts[:2] == ["kinematics", "rotations"]:
        return RANK["kinematics.rotations"]
    return RANK.get(parts[0])


def _modules():
    for f in sorted(PACKAGE.rglob("*.py")):
        rel = f.relative_to(PACKAGE.parent).with_suffix("")
        name = ".".join(rel.parts).removesuffix(".__init__")
        if _layer(name) is not None:  # the package root and ahbm.testing may import anything
            yield f, name


@pytest.mark.parametrize("path,name", list(_modules()), ids=lambda x: str(x)[-40:])
def test_imports_follow_the_layers(path, name):
    me = _layer(name)
    bad = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ahbm."):
            other = _layer(node.module)
            if other is not None and other > me:
                bad.append(f"line {node.lineno}: imports {node.module}")
    assert not bad, f"{name} imports from a lower layer: {bad}"


def test_checker_sees_a_violation(tmp_path):
    src = "def f():\n    from ahbm.models import human15\n"
    tree = ast.parse(src)
    found = [
        n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and _layer(n.module) == 7
    ]
    assert found == ["ahbm.models"] and _layer("ahbm.dynamics.forces") < 7
