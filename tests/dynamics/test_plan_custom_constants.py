"""The node plan of custom joints with constant axes and welded bodies, against the references."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from ahbm._engine import node_plan as _node_plan
from ahbm.dynamics import crba, reference, rnea
from ahbm.kinematics import Model
from ahbm.kinematics.configuration import random_q


@pytest.mark.parametrize("angle", [0.0, 0.7, -2.9, 1e-9])
def test_axis_rotation_equals_rotvec(angle):
    a = np.array([0.36, -0.48, 0.8])  # unit
    R = _node_plan._axis_rotation(a, angle)
    np.testing.assert_allclose(R, Rotation.from_rotvec(angle * a).as_matrix(), atol=1e-15)
    np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-15)


def _axis(a, coordinate, function):
    return {"axis": a, "coordinate": coordinate, "function": function}


def _model():
    one = {"type": "LinearFunction", "slope": 1.0, "intercept": 0.0}
    zero = {"type": "Constant", "value": 0.0}
    spline = {"type": "SimmSpline", "x": [-2.0, 0.0, 0.5, 2.2], "y": [0.01, 0.0, 0.02, 0.05]}
    m = Model("constants", gravity=(0.0, -9.81, 0.0))
    m.add_body("stand", "ground", "fixed", position=[0.0, 0.1, 0.0], mass=3.0)
    m.add_body(
        "base", "ground",
        {"type": "custom", "coordinates": ["rz", "tx"], "transform": [
            _axis([0, 0, 1], "rz", one),
            _axis([0.6, 0.8, 0], None, {"type": "Constant", "value": 0.4}),
            _axis([0, 1, 0], None, zero),
            _axis([1, 0, 0], "tx", one),
            _axis([0, 1, 0], None, {"type": "Constant", "value": 0.9}),
            _axis([0, 0, 1], None, zero)]},
        mass=5.0, com=[0.01, 0.1, -0.02],
        inertia=[[0.05, 0.002, -0.001], [0.002, 0.03, 0.0015], [-0.001, 0.0015, 0.04]],
    )  # fmt: skip
    m.add_body(
        "arm", "base",
        {"type": "custom", "coordinates": ["flex"], "transform": [
            _axis([0, 0, 1], "flex", one),
            # constant functions that are not Constant: a flat line without a coordinate
            _axis([1, 0, 0], None, {"type": "LinearFunction", "slope": 0.0, "intercept": -0.3}),
            _axis([0, 1, 0], None, zero),
            _axis([0.6, -0.8, 0], None, {"type": "Constant", "value": 0.3}),
            _axis([0, 1, 0], "flex", spline),
            _axis([0, 0, 1], None, {"type": "LinearFunction", "slope": 0.0, "intercept": 0.05})]},
        position=[0.05, -0.3, 0.1], rotation=Rotation.from_rotvec([0.2, -0.1, 0.3]).as_matrix(),
        child_position=[0.0, 0.25, 0.01], mass=2.0, com=[0.0, -0.15, 0.0],
        inertia=np.diag([0.02, 0.004, 0.021]),
    )  # fmt: skip
    # two bodies welded to the arm's last node: their inertias add up there
    m.add_body("tip", "arm", "fixed", position=[0.0, -0.4, 0.0], mass=0.7, com=[0.02, 0, 0.01],
               inertia=np.diag([0.001, 0.002, 0.0025]))  # fmt: skip
    m.add_body("cap", "tip", "fixed", position=[0.1, 0.0, 0.05],
               rotation=Rotation.from_rotvec([0.0, 0.5, 0.0]).as_matrix(), mass=0.4,
               com=[0.0, 0.03, 0.0], inertia=np.diag([0.003, 0.001, 0.002]))  # fmt: skip
    return m


def test_custom_constant_axes_and_welded_bodies_equal_reference():
    m = _model()
    p = _node_plan.plan(m)
    assert p.custom is not None
    # the welded bodies share the arm's node; the stand has none (welded to the ground)
    assert p.body_node[m.body_index("tip")] == p.body_node[m.body_index("arm")] >= 0
    assert p.body_node[m.body_index("stand")] == -1
    np.testing.assert_allclose(p.I6[:, 3:, 3:].trace(axis1=1, axis2=2).sum(), 3 * 8.1)
    rng = np.random.default_rng(11)
    n = 5
    q = random_q(m, rng=rng, size=n)
    qd, qdd = rng.normal(size=(n, m.nv)), rng.normal(size=(n, m.nv))
    f = rng.normal(size=(n, m.n_bodies, 6))
    for ff in (None, f):
        tau = rnea(m, q, qd, qdd, f_ext=ff)
        ref = np.array(
            [
                reference.rnea(m, q[k], qd[k], qdd[k], **({} if ff is None else {"f_ext": ff[k]}))
                for k in range(n)
            ]
        )
        np.testing.assert_allclose(tau, ref, atol=1e-10 * max(1.0, np.abs(ref).max()))
    ref = np.array([reference.crba(m, q[k]) for k in range(n)])
    np.testing.assert_allclose(crba(m, q), ref, atol=1e-11)
