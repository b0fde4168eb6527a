"""Bad-argument campaign over the public API of ahbm.

Every public callable of ``ahbm.kinematics``, ``ahbm.dynamics``, ``ahbm.bsp``,
``ahbm.analysis``, ``ahbm.io``, ``ahbm.graphics`` (Agg backend) and
``ahbm.models`` (from each package's ``__all__``; result containers excluded)
is called first with valid arguments, then once per generated bad argument:
one argument at a time is replaced by None, text, a dict, NaN, inf, a negative
or zero number, a complex value, an empty array, an array of the wrong shape,
an array holding NaN, and (for two or more positional arguments) the first two
are swapped. Paths are replaced by None, a folder, a missing file, a file of
another format; trials by inconsistent trials; callbacks by callables that
return text.

Each case runs in a forked worker (after the valid calls warmed the compiled
kernels in the parent) with a per-call timeout and a memory limit, and is
classified as:

- ``ok``: returned (a documented result for that input, e.g. NaN propagated
  where the function documents it, an empty result for an empty signal);
- ``ahbm``: raised an ``AhbmError`` subclass (``named`` when the message
  names the argument that was changed);
- ``raw``: raised any other exception (a bug: the contract is AhbmError);
- ``hang``: did not finish within the timeout;
- ``crash``: the worker died.

Python's own call errors (a wrong number of positional arguments, an unknown
keyword) cannot happen: the case is bound against the signature first and
cases that do not bind are not generated.

Run: ``python benchmarks/bad_argument_campaign.py [--timeout 20] [--json out.json]
[--only NAME ...] [--verbose]``. Prints the counts and every raw exception
and hang with its case, and exits 1 if there is any.
"""

from __future__ import annotations

import argparse
import copy
import importlib
import inspect
import json
import os
import signal
import sys
import tempfile
import time
import traceback
import warnings
from collections import Counter
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")

import numpy as np  # noqa: E402

PACKAGES = [
    "kinematics",
    "dynamics",
    "bsp",
    "analysis",
    "io",
    "opensim",
    "graphics",
    "models",
    "gait",
]

# Callables that are not run: what they do with any argument is not an
# argument check (a process-wide registry, a demo writing dozens of files).
SKIP = {
    "register_model_section": "changes the process-wide model-file registry",
    "run_gait_demo": "runs the whole demo (tested in tests/test_demo.py)",
    "is_interactive_backend": "takes no argument",
}

# Classes that users construct with their own data; the other public classes
# are result containers (returned by ahbm, not built from user input).
# (Body is left out: bodies are made and checked by Model.add_body, not built by users.)
CONSTRUCTORS = {
    "Joint",
    "Model",
    "CoordinateCoupling",
    "OrientationConstraint",
    "PlaneConstraint",
    "PointConstraint",
    "PrescribedCoordinate",
    "UserConstraint",
    "ConstraintSet",
    "BodyForce",
    "BodyTorque",
    "Bushing",
    "GravityOverride",
    "JointStop",
    "PenaltyGroundContact",
    "PointSpringDamper",
    "RotationalSpringDamper",
    "SimulationEvent",
    "BaseAcceleration",
    "GaitSettings",
}


# ----------------------------------------------------------------------------- fixtures


class Fixtures:
    """Valid arguments, built once in the parent process."""

    def __init__(self, folder: Path):
        import pandas as pd

        import ahbm.gait as gait
        import ahbm.models as mdl
        from ahbm.dynamics import CoordinateCoupling
        from ahbm.io import OpenSimTable, write_c3d, write_csv, write_mat, write_trc
        from ahbm.io.hdf5 import save_trial
        from ahbm.kinematics import Model, save_model
        from ahbm.kinematics.rotations import euler_to_matrix
        from ahbm.opensim import write_mot

        rng = np.random.default_rng(0)
        self.folder = folder
        self.model = mdl.double_pendulum_3d()
        self.nq, self.nv = self.model.nq, self.model.nv
        trial, _ = gait.synthetic_walking_trial(duration=2.0, rng=np.random.default_rng(1))
        self.trial = trial
        n = 60
        t = np.arange(n) / 100.0
        self.signal = np.column_stack([np.sin(2 * np.pi * t), np.cos(3 * t), t**2])
        ang = np.column_stack([0.3 * np.sin(2 * t), 0.2 * np.cos(3 * t), 0.1 * t])
        self.R_series = euler_to_matrix(ang, "ZXY")
        self.R_series2 = euler_to_matrix(ang[::-1] * 1.5 + 0.2, "ZXY")
        self.points = trial.points[:20, :4, :].copy()
        self.fz = np.concatenate(
            [np.zeros(100), 700 * np.sin(np.linspace(0, np.pi, 600)), np.zeros(300)]
        )
        self.plate = trial.force_plates[0]
        self.sphere = rng.normal(size=(30, 3))
        self.sphere /= np.linalg.norm(self.sphere, axis=1, keepdims=True)
        self.sphere = 0.4 * self.sphere + [0.1, 0.2, 0.3]
        self.constraints = [CoordinateCoupling(1, 0, ratio=1.0)]
        self.marker_model = Model(name="markers")
        joint = {"type": "revolute", "axis": [0, 1, 0]}
        inertia = np.diag([0.1, 0.1, 0.02])
        self.marker_model.add_body(
            "thigh", "ground", joint, mass=8.0, com=[0, 0, -0.2], inertia=inertia,
            markers={"A": [0.05, 0, -0.1], "B": [0, 0.05, -0.3], "C": [0, 0, -0.4]},
        )  # fmt: skip
        self.marker_model.add_body(
            "shank", "thigh", joint, position=[0, 0, -0.4], mass=3.0, com=[0, 0, -0.2],
            inertia=inertia, markers={"D": [0.05, 0, -0.1], "E": [0, 0.05, -0.3]},
        )  # fmt: skip
        local = np.array(
            [[0.05, 0, -0.1], [0, 0.05, -0.3], [0, 0, -0.4], [0.05, 0, -0.5], [0, 0.05, -0.7]]
        )
        self.marker_positions = np.repeat(local[None], 3, axis=0)
        self.grf_table = OpenSimTable(
            data=pd.DataFrame(
                np.tile([0.0, 700.0, 0.0, 0.3, 0.0, 0.1], (5, 1)),
                columns=[f"ground_force_{q}{a}" for q in "vp" for a in "xyz"],
                index=pd.Index(np.linspace(0, 0.04, 5), name="time"),
            ),
            name="grf",
        )
        self.table = OpenSimTable(
            data=pd.DataFrame(
                {"knee_angle_r": np.linspace(0, 1, 5), "hip_flexion_r": np.linspace(0, 0.5, 5)},
                index=pd.Index(np.linspace(0, 0.04, 5), name="time"),
            ),
            name="test",
        )
        self.files = {}
        for suffix, write in [
            (".c3d", lambda p: write_c3d(trial, p)),
            (".trc", lambda p: write_trc(trial, p)),
            (".csv", lambda p: write_csv(trial, p)),
            (".mat", lambda p: write_mat(trial, p)),
            (".mot", lambda p: write_mot(self.table, p)),
            (".h5", lambda p: save_trial(trial, p, name="walk")),
        ]:
            path = folder / f"good{suffix}"
            write(path)
            self.files[suffix] = path
        self.files[".json"] = save_model(self.model, folder / "model.json")
        (folder / "scratch").mkdir()
        self.garbage = folder / "garbage.bin"
        self.garbage.write_bytes(b"\x00\xffnot a file of any format\n" * 10)
        self.gait_result = None
        self.human = mdl.human15(height=1.8, mass=75.0)
        self.collision_model = mdl.double_pendulum_3d()
        try:  # (collision shapes are newer than ahbm 0.2's first commits; the
            # campaign also runs on older trees to measure a baseline)
            from ahbm.kinematics import CollisionShape
        except ImportError:
            return
        b0, b1 = self.collision_model.body_names
        self.collision_model.collision = [
            CollisionShape.sphere("ball", b1, [0, 0, -1], 0.1),
            CollisionShape.capsule("pole", b0, [0, 0, 0], [0, 0, -1], 0.05),
        ]

    def gait(self):
        if self.gait_result is None:
            import ahbm.gait as gait

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self.gait_result = gait.analyze_gait(self.trial, mass=70.0, height=1.75)
        return self.gait_result


def _quat():
    return np.array([0.1, 0.2, 0.3, 0.927361849549570])


def good_value(fx: Fixtures, func: str, module: str, param: str):
    """The valid value of `param` for `func` (KeyError if unknown)."""
    over = OVERRIDES.get(func, {})
    if param in over:
        return over[param](fx)
    if "rotations" in module and param in ROTATION_VALUES:
        return ROTATION_VALUES[param](fx)
    return GENERIC[param](fx)


ROTATION_VALUES = {
    "q": lambda fx: _quat(),
    "p": lambda fx: _quat()[[1, 0, 3, 2]] * [1, 1, -1, 1],
    "qd": lambda fx: np.array([0.01, -0.02, 0.03, 0.0]),
    "R": lambda fx: fx.R_series[5],
    "v": lambda fx: np.array([0.1, 0.2, 0.3]),
}

GENERIC = {
    "angle": lambda fx: 0.3,
    "v": lambda fx: np.zeros(fx.nv),
    "S": lambda fx: np.array([[0, -3.0, 2], [3, 0, -1], [-2, 1, 0]]),
    "angles": lambda fx: np.array([0.1, 0.2, 0.3]),
    "seq": lambda fx: "ZXY",
    "R": lambda fx: fx.R_series,
    "axis": lambda fx: np.array([0.0, 0.0, 1.0]),
    "rotvec": lambda fx: np.array([0.1, 0.2, 0.3]),
    "q0": lambda fx: _quat(),
    "q1": lambda fx: np.array([0.0, 0.0, 0.0, 1.0]),
    "t": lambda fx: 0.5,
    "rates": lambda fx: np.array([0.1, 0.2, 0.3]),
    "omega": lambda fx: np.array([0.1, 0.2, 0.3]),
    "model": lambda fx: fx.model,
    "q": lambda fx: np.array([0.1, 0.2, -0.3, 0.4]),
    "qd": lambda fx: np.array([0.5, -0.1, 0.2, 0.3]),
    "qdd": lambda fx: np.array([0.1, 0.0, -0.2, 0.3]),
    "tau": lambda fx: np.array([0.2, -0.1, 0.0, 0.1]),
    "body": lambda fx: "pendulum2",
    "point": lambda fx: np.array([0.0, 0.0, -0.3]),
    "path_or_dict": lambda fx: fx.files[".json"],
    "n_bodies": lambda fx: 3,
    "rng": lambda fx: np.random.default_rng(0),
    "path": lambda fx: fx.folder / "scratch" / "out.bin",
    "folder": lambda fx: fx.folder / "scratch",
    "T": lambda fx: np.eye(4),
    "points": lambda fx: fx.points,
    "markers": lambda fx: fx.points,
    "local": lambda fx: fx.points[0] - fx.points[0].mean(axis=0),
    "origin": lambda fx: np.zeros(3),
    "primary": lambda fx: np.array([0.0, 0.0, 1.0]),
    "plane_point": lambda fx: np.array([1.0, 0.0, 0.0]),
    "static_markers": lambda fx: fx.points[:5],
    "R_proximal": lambda fx: fx.R_series,
    "R_distal": lambda fx: fx.R_series2,
    "proximal_centre": lambda fx: np.array([0.0, 0.0, 0.9]),
    "joint_marker": lambda fx: np.array([0.05, 0.0, 0.5]),
    "plane_marker": lambda fx: np.array([0.0, 0.1, 0.6]),
    "width": lambda fx: 0.1,
    "leg_length": lambda fx: 0.9,
    "inter_asis_distance": lambda fx: 0.25,
    "pelvic_width": lambda fx: 0.25,
    "pelvic_depth": lambda fx: 0.15,
    "R_foot": lambda fx: fx.R_series,
    "R_pelvis": lambda fx: fx.R_series,
    "origin_proximal": lambda fx: np.zeros((60, 3)),
    "origin_distal": lambda fx: np.einsum("nij,j->ni", fx.R_series, [0.0, 0.0, -0.4]),
    "qd_minus": lambda fx: np.array([0.5, -0.1, 0.2, 0.3]),
    "constraints": lambda fx: fx.constraints,
    "data": lambda fx: {"type": "plane", "body": "pendulum2", "point": [0, 0, 0]},
    "coordinate": lambda fx: 0,
    "driver": lambda fx: 1,
    "trajectory": lambda fx: lambda t: (0.1 * t, 0.1, 0.0),
    "function": lambda fx: lambda t, q, qd: q[:1],
    "size": lambda fx: 1,
    "force": lambda fx: np.array([0.0, 0.0, 1.0]),
    "torque": lambda fx: np.array([0.0, 0.0, 1.0]),
    "body_a": lambda fx: "pendulum1",
    "body_b": lambda fx: "pendulum2",
    "point_a": lambda fx: np.zeros(3),
    "point_b": lambda fx: np.zeros(3),
    "stiffness": lambda fx: 100.0,
    "gravity": lambda fx: np.array([0.0, 0.0, -9.81]),
    "lower": lambda fx: -1.0,
    "upper": lambda fx: 1.0,
    "forces": lambda fx: [],
    "t_span": lambda fx: (0.0, 0.05),
    "qd0": lambda fx: np.zeros(4),
    "row": lambda fx: 0,
    "value": lambda fx: 0.5,
    "mass": lambda fx: 1.0,
    "com": lambda fx: np.array([0.0, 0.0, -0.1]),
    "inertia": lambda fx: np.diag([0.1, 0.1, 0.05]),
    "f": lambda fx: np.array([1.0, 2, 3, 4, 5, 6]),
    "m": lambda fx: np.array([1.0, 2, 3, 4, 5, 6]),
    "rotation": lambda fx: np.eye(3),
    "position": lambda fx: np.array([0.1, 0.2, 0.3]),
    "plates": lambda fx: fx.trial.force_plates,
    "feet": lambda fx: np.zeros((200, 2, 3)),
    "moment": lambda fx: np.ones((60, 3)),
    "r_proximal": lambda fx: fx.R_series,
    "r_distal": lambda fx: fx.R_series2,
    "joint": lambda fx: "knee",
    "side": lambda fx: "right",
    "omega_distal": lambda fx: np.ones((60, 3)),
    "omega_proximal": lambda fx: np.zeros((60, 3)),
    "vectors": lambda fx: np.ones((60, 3)),
    "height": lambda fx: 1.75,
    "table": lambda fx: "de_leva",
    "semi_axes": lambda fx: np.array([0.1, 0.1, 0.2]),
    "length": lambda fx: 0.4,
    "semi_axis_x": lambda fx: 0.05,
    "semi_axis_y": lambda fx: 0.06,
    "proximal_axes": lambda fx: (0.06, 0.05),
    "distal_axes": lambda fx: (0.04, 0.03),
    "proximal_radius": lambda fx: 0.06,
    "distal_radius": lambda fx: 0.04,
    "trial": lambda fx: copy.deepcopy(fx.trial),
    "cycles": lambda fx: [np.linspace(0, 1, 101), np.linspace(0, 1.1, 101)],
    "fz": lambda fx: fx.fz,
    "events": lambda fx: [10, 50],
    "x": lambda fx: fx.signal,
    "heel": lambda fx: fx.trial.marker("RHEE"),
    "toe": lambda fx: fx.trial.marker("RTOE"),
    "sacrum": lambda fx: fx.trial.marker("SACR"),
    "target": lambda fx: 0,
    "donors": lambda fx: [1, 2, 3],
    "window": lambda fx: 5,
    "max_gap": lambda fx: 10,
    "cutoff": lambda fx: 6.0,
    "df": lambda fx: __import__("ahbm.io", fromlist=["x"]).results_to_dataframe(
        {"a": np.ones((5, 3))}
    ),
    "results": lambda fx: {"a": np.ones((5, 3))},
    "corners": lambda fx: fx.plate.corners,
    "channels": lambda fx: np.ones((10, 6)),
    "plate_type": lambda fx: 2,
    "normal": lambda fx: np.array([0.0, 0.0, 1.0]),
    "analogs": lambda fx: np.ones((100, 4)),
    "interval": lambda fx: (0, 10),
    "plate": lambda fx: fx.plate,
    "rate": lambda fx: 100.0,
    "transforms": lambda fx: np.tile(np.eye(4), (2, 1, 1)),
    "entry": lambda fx: {"shape": "box", "size": [0.1, 0.2, 0.3]},
    "labels": lambda fx: ["RASI", "LASI", "RTHI"],
    "fig": lambda fx: __import__("matplotlib.pyplot", fromlist=["x"]).figure(),
    "result": lambda fx: fx.gait(),
    "trial_or_path": lambda fx: copy.deepcopy(fx.trial),
    "markers_2d": lambda fx: _sagittal(fx)[0],
    "grf_2d": lambda fx: _sagittal(fx)[1],
    "acceleration": lambda fx: lambda t: 9.81 * np.sin(t),
    "A": lambda fx: 1.0,
    "B": lambda fx: 10.0,
    "key": lambda fx: "gait_cycles",
    "params": lambda fx: __import__("ahbm.bsp", fromlist=["x"]).segment_parameters(
        "de_leva", mass=70.0, height=1.75, sex="male"
    ),
}


def _human_q(fx):
    from ahbm.kinematics import neutral_q

    q = neutral_q(fx.human)
    q[2] = 1.0
    return q


def _square():
    return np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0.0]])


def _sagittal(fx):
    n = 50
    t = np.arange(n) / 100.0
    # shoulder, hip, knee, ankle, heel, toe
    seg = np.array([[0.0, 1.4], [0.0, 1.0], [0.02, 0.55], [0.05, 0.1], [0.0, 0.05], [0.2, 0.05]])
    markers = seg[None] + np.stack([0.5 * t, 0.0 * t], axis=1)[:, None, :]
    grf = np.zeros((n, 3))
    grf[:, 1] = 686.0
    grf[:, 2] = 0.05
    return markers, grf


def _tile_rot(fx):
    return fx.R_series


OVERRIDES = {
    "slerp": {"q0": lambda fx: _quat(), "q1": lambda fx: np.array([0, 0, 0, 1.0])},
    "angular_velocity": {"R": lambda fx: fx.R_series, "rate": lambda fx: 100.0},
    "angular_acceleration": {"R": lambda fx: fx.R_series, "rate": lambda fx: 100.0},
    "unwrap_euler": {"angles": lambda fx: np.tile([0.1, 0.2, 0.3], (10, 1))},
    "difference_q": {"q0": lambda fx: np.zeros(4), "q1": lambda fx: np.full(4, 0.1)},
    "integrate_q": {"v": lambda fx: np.full(4, 0.1)},
    "static_local_markers": {"R": lambda fx: np.eye(3), "origin": lambda fx: np.zeros(3)},
    "local_coordinates": {"R": lambda fx: np.eye(3), "markers": lambda fx: fx.points[0]},
    "make_transform": {"R": lambda fx: np.eye(3)},
    "apply_transform": {"points": lambda fx: fx.points[0]},
    "fit_segment_pose": {"local": lambda fx: fx.points[0] - fx.points[0].mean(axis=0)},
    "fit_markers": {"model": lambda fx: fx.marker_model, "markers": lambda fx: fx.marker_positions},
    "marker_jacobians": {"model": lambda fx: fx.marker_model, "q": lambda fx: np.zeros(2)},
    "model_markers": {"model": lambda fx: fx.marker_model},
    "Bushing": {"stiffness": lambda fx: np.full(6, 100.0)},
    "table_to_grf": {"table": lambda fx: fx.grf_table},
    "geometry_mesh": {"entry": lambda fx: {"type": "box", "size": [0.1, 0.2, 0.3]}},
    "extrapolated_com": {
        "com": lambda fx: np.array([0.1, 0.0, 0.9]),
        "com_velocity": lambda fx: np.array([0.6, 0.0, 0.0]),
        "omega0": lambda fx: 3.0,
    },
    "inside_polygon": {
        "point": lambda fx: np.array([[0.5, 0.5, 0.0]]),
        "polygon": lambda fx: _square(),
    },
    "stability_margin": {
        "point": lambda fx: np.array([[0.5, 0.5, 0.0]]),
        "polygon": lambda fx: _square(),
    },
    "function_from_dict": {"d": lambda fx: {"type": "Constant", "value": 0.1}},
    "scale_inertia": {
        "mass": lambda fx: 2.0,
        "inertia": lambda fx: np.diag([1.0, 2.0, 3.0]),
        "factors": lambda fx: np.array([2.0, 2.0, 2.0]),
    },
    "scale_segments": {"model": lambda fx: fx.marker_model, "factors": lambda fx: {"thigh": 1.1}},
    "measurement_scale_factors": {
        "model": lambda fx: fx.marker_model,
        "markers": lambda fx: {n: fx.marker_positions[:, i] for i, n in enumerate("ABCDE")},
        "measurements": lambda fx: [
            __import__("ahbm.bsp", fromlist=["x"]).Measurement(
                "thigh", [("A", "C")], {"thigh": "XYZ"}
            )
        ],
    },
    "set_max_read_bytes": {"nbytes": lambda fx: 2**30},
    "distances": {
        "model": lambda fx: fx.collision_model,
        "q": lambda fx: np.zeros((2, 4)),
        "pairs": lambda fx: [("ball", "pole")],
    },
    "self_collision": {
        "model": lambda fx: fx.collision_model,
        "exclude_adjacent": lambda fx: False,
    },
    "ssv_distance": {
        "points1": lambda fx: np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]),
        "radius1": lambda fx: 0.1,
        "points2": lambda fx: np.array([[0.5, -1.0, 1.0], [0.5, 1.0, 1.0]]),
        "radius2": lambda fx: 0.2,
    },
    "foot_contact_shapes": {
        "body": lambda fx: "foot_r",
        "length": lambda fx: 0.26,
        "height": lambda fx: 0.084,
        "posterior": lambda fx: 0.072,
    },
    "dh_model": {"rows": lambda fx: [(0, 0, 1.0, 0), (0, 0, 0.5, 0)]},
    "dh_transform": {
        "theta": lambda fx: 0.3,
        "d": lambda fx: 0.1,
        "a": lambda fx: 0.3,
        "alpha": lambda fx: 0.2,
    },
    "inverse_dynamics_wls": {
        "model": lambda fx: fx.human,
        "q": lambda fx: _human_q(fx),
        "qd": lambda fx: np.zeros(fx.human.nv),
        "qdd": lambda fx: np.zeros(fx.human.nv),
        "grf": lambda fx: np.zeros((fx.human.n_bodies, 6)),
    },
    "spatial_inertia": {"com": lambda fx: np.array([0.0, 0.0, -0.1])},
    "force_cross": {"v": lambda fx: np.array([1.0, 0, 0, 0, 1, 0])},
    "motion_cross": {"v": lambda fx: np.array([1.0, 0, 0, 0, 1, 0])},
    "newton_euler": {
        "parent": lambda fx: np.array([-1, 0]),
        "mass": lambda fx: np.array([5.0, 3.0]),
        "inertia": lambda fx: np.tile(np.diag([0.1, 0.1, 0.05]), (2, 1, 1)),
        "motion": lambda fx: __import__("ahbm.analysis", fromlist=["x"]).segment_motion(
            np.stack([fx.R_series, fx.R_series2], axis=1),
            np.zeros((60, 2, 3)) + [[0, 0, 1.0], [0, 0, 0.5]],
            rate=100.0,
        ),
        "joint_centres": lambda fx: np.zeros((60, 2, 3)) + [[0, 0, 1.2], [0, 0, 0.8]],
    },
    "segment_motion": {
        "rotation": lambda fx: fx.R_series[:, None],
        "com": lambda fx: np.zeros((60, 1, 3)),
        "rate": lambda fx: 100.0,
    },
    "assign_force_plates": {
        "feet": lambda fx: {
            0: fx.trial.points[:, [7, 8]],
            1: fx.trial.points[:, [13, 14]],
        },
        "rate": lambda fx: 100.0,
    },
    "clinical_moments": {"moment": lambda fx: np.ones((60, 3))},
    "loads_in_frame": {"rotation": lambda fx: fx.R_series},
    "PointSpringDamper": {"stiffness": lambda fx: 10.0},
    "JointStop": {"stiffness": lambda fx: 100.0},
    "PenaltyGroundContact": {
        "points": lambda fx: np.zeros((1, 3)),
        "stiffness": lambda fx: 1e4,
    },
    "UserConstraint": {"function": lambda fx: lambda t, q: q[:1]},
    "simulate": {"q0": lambda fx: np.array([0.1, 0.2, -0.3, 0.4])},
    "coordinate_event": {"value": lambda fx: 0.5},
    "point_height_event": {"point": lambda fx: np.zeros(3)},
    "SimulationEvent": {"function": lambda fx: lambda t, q, qd: q[0]},
    "Body": {
        "name": lambda fx: "b",
        "parent": lambda fx: -1,
        "joint": lambda fx: __import__("ahbm.kinematics", fromlist=["x"]).Joint(
            "revolute", axis=(0, 0, 1)
        ),
        "position": lambda fx: np.zeros(3),
        "rotation": lambda fx: np.eye(3),
        "mass": lambda fx: 1.0,
        "com": lambda fx: np.zeros(3),
        "inertia": lambda fx: np.eye(3) * 0.1,
    },
    "Joint": {"type": lambda fx: "revolute"},
    "time_normalize": {"events": lambda fx: [5, 40]},
    "spatiotemporal_parameters": {
        "events": lambda fx: __import__("ahbm.analysis", fromlist=["x"]).detect_gait_events(
            fx.trial
        )
    },
    "zeni_events": {"rate": lambda fx: 100.0},
    "fill_gaps": {"x": lambda fx: _gappy(fx.signal)},
    "fill_gaps_rigid": {"points": lambda fx: _gappy_points(fx.points)},
    "find_gaps": {"x": lambda fx: _gappy(fx.signal)},
    "segment_parameters": {"mass": lambda fx: 70.0, "sex": lambda fx: "male"},
    "scale_model": {
        "model": lambda fx: __import__("ahbm.models", fromlist=["x"]).human15(),
        "mass": lambda fx: 70.0,
        "sex": lambda fx: "male",
    },
    "compare_tables": {"mass": lambda fx: 70.0, "sex": lambda fx: "male"},
    "get_table": {"table": lambda fx: "de_leva"},
    "write_trc": {"path": lambda fx: fx.folder / "out.trc"},
    "write_c3d": {"path": lambda fx: fx.folder / "out.c3d"},
    "write_csv": {"path": lambda fx: fx.folder / "out.csv", "data": lambda fx: fx.trial},
    "write_mat": {"path": lambda fx: fx.folder / "out.mat"},
    "write_mot": {"path": lambda fx: fx.folder / "out.mot", "table": lambda fx: fx.table},
    "save_trial": {"path": lambda fx: fx.folder / "out.h5", "overwrite": lambda fx: True},
    "save_model": {"path": lambda fx: fx.folder / "out.json"},
    "save_gait_result": {"path": lambda fx: fx.folder / "gait.h5"},
    "save_figure": {"path": lambda fx: fx.folder / "fig.png"},
    "read_trc": {"path": lambda fx: fx.files[".trc"]},
    "read_c3d": {"path": lambda fx: fx.files[".c3d"]},
    "read_mot": {"path": lambda fx: fx.files[".mot"]},
    "read_csv": {"path": lambda fx: fx.files[".csv"]},
    "read_mat": {"path": lambda fx: fx.files[".mat"]},
    "load_trial": {"path": lambda fx: fx.files[".h5"]},
    "load_result_units": {"path": lambda fx: fx.files[".h5"]},
    "list_trials": {"path": lambda fx: fx.files[".h5"]},
    "read_trial": {"path": lambda fx: fx.files[".trc"]},
    "dataframe_to_trial": {"points": lambda fx: fx.trial.to_dataframe()},
    "plate_frame": {"origin": lambda fx: np.array([0.0, 0.0, -0.01])},
    "plate_wrench": {"origin": lambda fx: np.array([0.0, 0.0, -0.01])},
    "wrench_to_cop": {
        "force": lambda fx: np.tile([0.0, 0.0, 700.0], (10, 1)),
        "moment": lambda fx: np.tile([10.0, 5.0, 0.0], (10, 1)),
    },
    "remove_zero_offset": {"analogs": lambda fx: np.ones((100, 4))},
    "resample_force_plate": {"rate": lambda fx: 100.0},
    "force_plates_from_c3d": {
        "trial": lambda fx: __import__("ahbm.io").io.read_c3d(fx.files[".c3d"])
    },
    "model_skeleton": {
        "transforms": lambda fx: (
            __import__("ahbm.kinematics", fromlist=["x"])
            .forward_kinematics(fx.model, np.zeros(4))
            .transforms
            if hasattr(
                __import__("ahbm.kinematics", fromlist=["x"]).forward_kinematics(
                    fx.model, np.zeros(4)
                ),
                "transforms",
            )
            else np.tile(np.eye(4), (2, 1, 1))
        )
    },
    "gait_cycle_summary": {"cycles": lambda fx: np.ones((3, 101))},
    "gait_cycles_from_results": {"results": lambda fx: {"gait_cycles": fx.gait().cycles}},
    "plot_gait_cycles": {"result": lambda fx: fx.gait().cycles},
    "plot_simulation": {
        "result": lambda fx: __import__("ahbm.dynamics", fromlist=["x"]).simulate(
            fx.model, (0.0, 0.02), np.zeros(4), np.zeros(4)
        )
    },
    "plug_in_gait_segments": {"labels": lambda fx: list(fx.trial.point_labels)},
    "stick_view": {"data": lambda fx: fx.points, "rate": lambda fx: 100.0},
    "xy_view": {"data": lambda fx: fx.signal, "rate": lambda fx: 100.0},
    "draw_model": {"q": lambda fx: np.zeros(4)},
    "estimate_head_load": {
        "model": lambda fx: __import__("ahbm.models", fromlist=["x"]).head_neck_model(),
        "q": lambda fx: np.zeros(
            (20, __import__("ahbm.models", fromlist=["x"]).head_neck_model().nq)
        ),
        "rate": lambda fx: 100.0,
    },
    "intervertebral_elements": {
        "model": lambda fx: __import__("ahbm.models", fromlist=["x"]).head_neck_model()
    },
    "joint_elements": {
        "model": lambda fx: __import__("ahbm.models", fromlist=["x"]).whole_body_model()
    },
    "chest_impact": {
        "model": lambda fx: __import__("ahbm.models", fromlist=["x"]).whole_body_model()
    },
    "sled_forces": {
        "model": lambda fx: __import__("ahbm.models", fromlist=["x"]).whole_body_model()
    },
    "airbag_force": {"t": lambda fx: np.linspace(0, 0.1, 11)},
    "half_sine": {
        "t": lambda fx: np.linspace(0, 0.1, 11),
        "peak": lambda fx: 10.0,
        "duration": lambda fx: 0.05,
    },
    "sled_pulse": {"t": lambda fx: np.linspace(0, 0.1, 11)},
    "pendulum_torque": {"q": lambda fx: np.linspace(0, 1, 5), "qdd": lambda fx: np.zeros(5)},
    "sagittal_inverse_dynamics": {"mass": lambda fx: 70.0, "rate": lambda fx: 100.0},
    "subject_parameters": {"mass": lambda fx: 70.0, "height": lambda fx: 1.75},
    "analyze_gait": {"mass": lambda fx: 70.0, "height": lambda fx: 1.75},
    "BaseAcceleration": {"acceleration": lambda fx: lambda t: np.array([9.81 * t, 0.0, 0.0])},
    "butter_filtfilt": {"rate": lambda fx: 100.0},
    "critically_damped_filtfilt": {"rate": lambda fx: 100.0},
    "gcv_spline": {"rate": lambda fx: 100.0},
    "central_difference": {"rate": lambda fx: 100.0},
    "marker_derivatives": {"rate": lambda fx: 100.0, "points": lambda fx: fx.points},
    "residual_analysis": {"rate": lambda fx: 100.0},
    "savgol_derivative": {"rate": lambda fx: 100.0},
    "spline_derivative": {"rate": lambda fx: 100.0},
    "force_plate_events": {"rate": lambda fx: 1000.0},
    "detect_gait_events": {},
    "lab_reference_frame": {},
    "ensemble_stats": {"cycles": lambda fx: np.ones((3, 101))},
}


def _gappy(x):
    y = np.array(x, dtype=float)
    y[10:14, 0] = np.nan
    return y


def _gappy_points(p):
    y = np.array(p, dtype=float)
    y[5:8, 0, :] = np.nan
    return y


# ----------------------------------------------------------------------------- bad values


class _Bad:
    """A callable returning text (a user callback gone wrong)."""

    def __call__(self, *args, **kwargs):
        return "x"

    def __repr__(self):
        return "<callable returning 'x'>"


def bad_values(fx: Fixtures, param: str, good, *, has_default: bool):
    """(label, factory) pairs of bad values for one argument whose valid value is `good`."""
    out = []

    def add(label, make):
        out.append((label, make))

    if has_default and good is None:
        # an optional argument whose default is None: None is valid, try the others
        for label, value in [("str", "bogus"), ("dict", {}), ("nan", np.nan), ("neg", -1.0)]:
            add(label, lambda value=value: value)
        return out
    if not (has_default and good is None):
        add("None", lambda: None)
    if isinstance(good, bool):
        add("str", lambda: "yes")
        add("nan", lambda: np.nan)
        return out
    add("str", lambda: "x")
    add("dict", lambda: {})
    if isinstance(good, str):
        add("bogus", lambda: "bogus")
        add("empty_str", lambda: "")
        add("float", lambda: 1.5)
        return out
    if isinstance(good, (Path, os.PathLike)):
        add("folder", lambda: fx.folder)
        add("missing", lambda: fx.folder / "missing" / "file.xyz")
        add("float", lambda: 1.5)
        add("garbage", lambda: fx.garbage)
        return out
    if callable(good) and not isinstance(good, type):
        add("returns_str", lambda: _Bad())
        add("float", lambda: 1.5)
        return out
    if isinstance(good, (int, float, np.floating, np.integer)) and not isinstance(good, bool):
        add("nan", lambda: np.nan)
        add("inf", lambda: np.inf)
        add("neg", lambda: -1.0)
        add("zero", lambda: 0)
        add("complex", lambda: 1 + 2j)
        add("array", lambda: np.ones(3))
        add("numeric_str", lambda: str(good))
        return out
    if isinstance(good, np.ndarray) or (
        isinstance(good, (list, tuple)) and good and isinstance(good[0], (int, float))
    ):
        arr = np.asarray(good, dtype=float)
        add("nan", lambda: np.nan)
        add("complex", lambda arr=arr: arr + 1j)
        add("empty", lambda arr=arr: np.empty((0,) + arr.shape[1:]))
        add("empty_batch", lambda arr=arr: np.empty((0,) + arr.shape))
        add("shape", lambda arr=arr: np.zeros(arr.shape[:-1] + (7,)) if arr.ndim else np.zeros(7))
        if arr.size:
            bad = arr.copy()
            bad.flat[0] = np.nan
            add("nan_array", lambda bad=bad: bad)
            ib = arr.copy()
            ib.flat[0] = np.inf
            add("inf_array", lambda ib=ib: ib)
        add("neg", lambda arr=arr: -np.abs(arr) - 1.0)
        add("text_array", lambda arr=arr: np.full(arr.shape, "a"))
        add("scalar", lambda: 1.0)
        return out
    # models, trials, tables, lists of objects, results
    add("float", lambda: 1.5)
    add("array", lambda: np.ones(3))
    add("list_str", lambda: ["x"])
    if type(good).__name__ == "Trial":
        add("empty_trial", lambda: type(good)())
        add("labels_mismatch", lambda: _mislabelled(good))
        add("string_points", lambda: _string_points(good))
    return out


def _mislabelled(trial):
    t = copy.deepcopy(trial)
    t.point_labels = t.point_labels[:-1]
    return t


def _string_points(trial):
    t = copy.deepcopy(trial)
    t.points = np.full(t.points.shape, "a")
    return t


# ----------------------------------------------------------------------------- cases


def public_callables(only=None):
    out = []
    for pkg in PACKAGES:
        mod = importlib.import_module(f"ahbm.{pkg}")
        for name in mod.__all__:
            obj = getattr(mod, name)
            if not callable(obj) or name in SKIP:
                continue
            if inspect.isclass(obj) and name not in CONSTRUCTORS:
                continue
            if only and name not in only:
                continue
            out.append((pkg, name, obj))
    return out


def build_cases(fx: Fixtures, only=None):
    """(cases, unresolved): each case a dict with the callable, args maker and labels."""
    cases = []
    unresolved = []
    for pkg, name, obj in public_callables(only):
        try:
            sig = inspect.signature(obj)
        except (TypeError, ValueError):
            unresolved.append((name, "no signature"))
            continue
        module = getattr(obj, "__module__", "") or ""
        params = [
            p
            for p in sig.parameters.values()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name != "self"
        ]
        missing = []
        for p in params:
            over = OVERRIDES.get(name, {})
            if p.default is inspect.Parameter.empty or p.name in over:
                try:
                    good_value(fx, name, module, p.name)
                except KeyError:
                    missing.append(p.name)
                except Exception as err:  # a fixture that does not build here
                    missing.append(f"{p.name} ({type(err).__name__}: {err})")
        if missing:
            unresolved.append((name, f"no valid value for {missing}"))
            continue

        def fixed(name=name, module=module, params=params):
            """args, kwargs of the valid call, positionals in order."""
            args, kwargs = [], {}
            over = OVERRIDES.get(name, {})
            gap = False
            for p in params:
                given = p.default is inspect.Parameter.empty or p.name in over
                if p.kind == p.KEYWORD_ONLY:
                    if given:
                        kwargs[p.name] = good_value(fx, name, module, p.name)
                    continue
                if given and not gap:
                    args.append(good_value(fx, name, module, p.name))
                elif given:
                    kwargs[p.name] = good_value(fx, name, module, p.name)
                else:
                    gap = True
            return args, kwargs

        cases.append(dict(pkg=pkg, func=name, obj=obj, param="", label="valid", make=fixed))
        pos_names = []
        probe_args, probe_kwargs = fixed()
        for p in params:
            if p.kind != p.KEYWORD_ONLY and len(pos_names) < len(probe_args):
                pos_names.append(p.name)
        for p in params:
            has_default = p.default is not inspect.Parameter.empty
            if p.name in probe_kwargs:
                good = probe_kwargs[p.name]
            elif p.name in pos_names:
                good = probe_args[pos_names.index(p.name)]
            else:
                good = p.default
            if has_default and p.name not in OVERRIDES.get(name, {}) and p.name in ("name", "warn"):
                continue
            for label, make_bad in bad_values(fx, p.name, good, has_default=has_default):

                def make(fixed=fixed, pos_names=pos_names, p=p, make_bad=make_bad):
                    args, kwargs = fixed()
                    value = make_bad()
                    if p.name in pos_names:
                        args[pos_names.index(p.name)] = value
                    else:
                        kwargs[p.name] = value
                    return args, kwargs

                cases.append(
                    dict(pkg=pkg, func=name, obj=obj, param=p.name, label=label, make=make)
                )
        if len(pos_names) >= 2:

            def swapped(fixed=fixed):
                args, kwargs = fixed()
                args[0], args[1] = args[1], args[0]
                return args, kwargs

            cases.append(
                dict(
                    pkg=pkg,
                    func=name,
                    obj=obj,
                    param=f"{pos_names[0]}|{pos_names[1]}",
                    label="swapped",
                    make=swapped,
                )
            )
    return cases, unresolved


# ----------------------------------------------------------------------------- running


def run_case(case) -> dict:
    """Run one case in this process; classify the outcome."""
    from ahbm.errors import AhbmError

    out = dict(func=case["func"], param=case["param"], label=case["label"])
    try:
        args, kwargs = case["make"]()
    except Exception as err:  # the campaign's own fixture failed
        out.update(outcome="setup", error=f"{type(err).__name__}: {err}")
        return out
    try:
        inspect.signature(case["obj"]).bind(*args, **kwargs)
    except TypeError as err:
        out.update(outcome="unbound", error=str(err))
        return out
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with np.errstate(all="ignore"):
                case["obj"](*args, **kwargs)
        out["outcome"] = "ok"
    except AhbmError as err:
        msg = str(err)
        names = [n for n in case["param"].split("|") if n]
        named = not names or any(n in msg for n in names)
        out.update(outcome="ahbm", named=named, error=f"{type(err).__name__}: {msg[:300]}")
    except Exception as err:
        tb = traceback.extract_tb(err.__traceback__)
        where = [f"{Path(f.filename).name}:{f.lineno}" for f in tb if "ahbm" in f.filename]
        out.update(
            outcome="raw",
            error=f"{type(err).__name__}: {' '.join(str(err).split())[:200]}",
            where=" < ".join(reversed(where[-3:])),
        )
    finally:
        import matplotlib.pyplot as plt

        plt.close("all")
    return out


def _worker(cases, start, conn, mem_limit):
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (mem_limit, mem_limit))
    except (ImportError, ValueError, OSError):
        pass
    for i in range(start, len(cases)):
        conn.send(("start", i))
        res = run_case(cases[i])
        conn.send(("done", i, res))
    conn.send(("end",))


def run_all(cases, *, timeout: float, mem_limit: int, verbose: bool):
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    results = [None] * len(cases)
    start = 0
    while start < len(cases):
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_worker, args=(cases, start, child, mem_limit), daemon=True)
        proc.start()
        child.close()
        current = start
        t0 = time.monotonic()
        restart = None
        while True:
            if parent.poll(0.05):
                try:
                    msg = parent.recv()
                except EOFError:
                    msg = ("died",)
                if msg[0] == "start":
                    current, t0 = msg[1], time.monotonic()
                elif msg[0] == "done":
                    results[msg[1]] = msg[2]
                    if verbose:
                        print(msg[2], flush=True)
                elif msg[0] == "end":
                    restart = len(cases)
                    break
                else:
                    restart = current
                    break
            elif not proc.is_alive() and not parent.poll(0):
                restart = current
                break
            elif time.monotonic() - t0 > timeout:
                os.kill(proc.pid, signal.SIGKILL)
                c = cases[current]
                results[current] = dict(
                    func=c["func"], param=c["param"], label=c["label"], outcome="hang"
                )
                restart = current + 1
                break
        proc.join(5)
        if restart is not None and restart < len(cases) and results[restart] is None:
            if restart == current and not proc.is_alive() and results[current] is None:
                c = cases[current]
                results[current] = dict(
                    func=c["func"],
                    param=c["param"],
                    label=c["label"],
                    outcome="crash",
                    error=f"exit code {proc.exitcode}",
                )
                restart = current + 1
        start = restart if restart is not None else len(cases)
        while start < len(cases) and results[start] is not None:
            start += 1
    return results


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=float, default=30.0, help="per-call timeout, s")
    ap.add_argument("--mem", type=float, default=8.0, help="address-space limit per worker, GiB")
    ap.add_argument("--json", help="write every case's outcome to this file")
    ap.add_argument("--only", nargs="*", help="only these callables")
    ap.add_argument("--verbose", action="store_true")
    opts = ap.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    with tempfile.TemporaryDirectory() as tmp:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fx = Fixtures(Path(tmp))
            fx.gait()
        cases, unresolved = build_cases(fx, opts.only)
        # warm the compiled kernels in the parent so that every worker inherits them
        for case in cases:
            if case["label"] == "valid":
                run_case(case)
        t0 = time.perf_counter()
        results = run_all(
            cases, timeout=opts.timeout, mem_limit=int(opts.mem * 2**30), verbose=opts.verbose
        )
        elapsed = time.perf_counter() - t0
    valid = [r for r in results if r["label"] == "valid"]
    bad = [r for r in results if r["label"] != "valid" and r["outcome"] not in ("unbound",)]
    counts = Counter(r["outcome"] for r in bad)
    n_funcs = len({r["func"] for r in results})
    print(f"callables: {n_funcs} (+{len(unresolved)} without valid arguments: {unresolved})")
    broken = [r for r in valid if r["outcome"] != "ok"]
    print(f"valid calls: {len(valid)}, not ok: {len(broken)}")
    for r in broken:
        print(f"  VALID CALL FAILS {r['func']}: {r.get('outcome')} {r.get('error', '')}")
    print(
        f"bad-argument cases: {len(bad)} in {elapsed:.0f} s: "
        + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    )
    named = sum(1 for r in bad if r["outcome"] == "ahbm" and r.get("named"))
    print(f"  AhbmError naming the argument: {named} of {counts.get('ahbm', 0)}")
    for r in bad:
        if r["outcome"] in ("raw", "hang", "crash", "setup"):
            print(
                f"  {r['outcome'].upper():5s} {r['func']}({r['param']}={r['label']}): "
                f"{r.get('error', '')} [{r.get('where', '')}]"
            )
    if opts.verbose:
        for r in bad:
            if r["outcome"] == "ahbm" and not r.get("named"):
                print(f"  UNNAMED {r['func']}({r['param']}={r['label']}): {r['error']}")
    if opts.json:
        Path(opts.json).write_text(json.dumps(results, indent=1, default=str))
    return 1 if any(counts.get(k) for k in ("raw", "hang", "crash")) else 0


if __name__ == "__main__":
    sys.exit(main())
