"""The collision-free reaching example runs in quick mode and keeps the arm off the body."""

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("casadi")

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _load(name):
    spec = importlib.util.spec_from_file_location(f"ahbm_example_{name}", EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_collision_free_reach_example(tmp_path):
    numbers = _load("collision_free_reach").run(tmp_path, quick=True)
    assert numbers["success"]
    margin = numbers["margin"]
    assert numbers["min_distance_nodes"] >= margin - 1e-6
    assert numbers["min_distance_dense"] >= margin - 1e-6  # 10x denser than the nodes
    # the straight path and the unconstrained minimum-jerk motion go through the trunk
    assert numbers["min_distance_straight_path"] < -0.05
    assert numbers["min_distance_without_constraint"] < -0.05
    assert numbers["pairs"] >= 5
    assert (tmp_path / "collision_free_reach.png").stat().st_size > 1000
