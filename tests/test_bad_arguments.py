"""Bad arguments at the public boundary raise an AhbmError naming the argument.

Representative cases of ``benchmarks/bad_argument_campaign.py`` (which runs
~8,000 of them with a timeout per call): the cases named in the issue on
damaged and hostile inputs, then wrong types, NaN/inf, empty and complex
arrays, swapped arguments and negative physical quantities for each package.
Each case asserts an :class:`~ahbm.errors.AhbmError` subclass whose message
contains the name of the argument at fault. The documented results for
None (zeros for ``qd``/``qdd``/``tau``) and for empty signals are checked
against their definitions at the end.
"""

from __future__ import annotations

import numpy as np
import pytest

import ahbm.analysis as an
import ahbm.bsp as bsp
import ahbm.dynamics as dyn
import ahbm.gait as gait
import ahbm.io as io
import ahbm.kinematics as kin
import ahbm.kinematics.rotations as rot
import ahbm.models as mdl
import ahbm.opensim as osm
from ahbm._internal.validation import as_float_array
from ahbm.errors import AhbmError, DataError


@pytest.fixture(scope="module")
def pendulum():
    return mdl.double_pendulum_3d()


@pytest.fixture(scope="module")
def walk():
    trial, _ = gait.synthetic_walking_trial(duration=1.5, rng=np.random.default_rng(3))
    return trial


def _trial(**change):
    t = io.Trial(points=np.zeros((4, 2, 3)), point_labels=["A", "B"], point_rate=100.0)
    for k, v in change.items():
        setattr(t, k, v)
    return t


SIG = np.sin(np.linspace(0, 6, 80))[:, None] * [1.0, 2.0]
Q = np.array([0.1, 0.2, -0.3, 0.4])

# (id, call(ctx) -> None, name the message must contain)
CASES = [
    # -- the cases named in the issue
    ("aba_tau_text", lambda c: dyn.aba(c.model, Q, None, "x"), "tau"),
    ("fd_qd_dict", lambda c: dyn.forward_dynamics(c.model, Q, {}, None), "qd"),
    ("rnea_qdd_complex", lambda c: dyn.rnea(c.model, Q, None, Q + 1j), "qdd"),
    ("write_c3d_swapped", lambda c: io.write_c3d(c.tmp / "x.c3d", _trial()), "trial"),
    ("write_c3d_folder", lambda c: io.write_c3d(_trial(), c.tmp), "path"),
    ("write_c3d_none", lambda c: io.write_c3d(_trial(), None), "path"),
    (
        "write_c3d_text_points",
        lambda c: io.write_c3d(_trial(points=np.full((4, 2, 3), "a")), c.tmp / "x.c3d"),
        "points",
    ),
    (
        "write_c3d_label_int",
        lambda c: io.write_c3d(_trial(point_labels=["A", 2]), c.tmp / "x.c3d"),
        "point_labels",
    ),
    (
        "write_trc_labels",
        lambda c: io.write_trc(_trial(point_labels=["A"]), c.tmp / "x.trc"),
        "point_labels",
    ),
    (
        "write_csv_labels",
        lambda c: io.write_csv(_trial(point_labels=["A"]), c.tmp / "x.csv"),
        "point_labels",
    ),
    (
        "write_mat_labels",
        lambda c: io.write_mat(_trial(point_labels=["A"]), c.tmp / "x.mat"),
        "point_labels",
    ),
    (
        "write_mat_rate",
        lambda c: io.write_mat(_trial(point_rate=-5.0), c.tmp / "x.mat"),
        "point_rate",
    ),
    (
        "write_mat_time",
        lambda c: io.write_mat(_trial(first_frame=np.inf), c.tmp / "x.mat"),
        "first_frame",
    ),
    ("write_mot_swapped", lambda c: osm.write_mot(str(c.tmp / "x.mot"), None), "table"),
    ("butter_empty", lambda c: an.butter_filtfilt(np.empty(0), rate=100.0, cutoff=6.0), "x"),
    (
        "cd_empty",
        lambda c: an.critically_damped_filtfilt(np.empty((0, 3)), rate=100.0, cutoff=6.0),
        "x",
    ),
    ("gcv_empty", lambda c: an.gcv_spline(np.empty(0), rate=100.0), "x"),
    ("fill_gaps_nan", lambda c: an.fill_gaps(SIG, max_gap=np.nan), "max_gap"),
    (
        "padtype_bogus",
        lambda c: an.butter_filtfilt(SIG, rate=100.0, cutoff=6.0, padtype="bogus"),
        "padtype",
    ),
    (
        "bsp_lengths_text",
        lambda c: bsp.segment_parameters(
            "de_leva", mass=70.0, height=1.75, sex="male", segment_lengths="x"
        ),
        "segment_lengths",
    ),
    ("gait_mass_text", lambda c: gait.analyze_gait(c.walk, mass="70"), "mass"),
    ("gait_mass_negative", lambda c: gait.analyze_gait(c.walk, mass=-70.0), "mass"),
    ("gait_mass_nan", lambda c: gait.analyze_gait(c.walk, mass=np.nan), "mass"),
    ("gait_height_negative", lambda c: gait.analyze_gait(c.walk, mass=70.0, height=-1.7), "height"),
    (
        "simulate_tau_text",
        lambda c: dyn.simulate(c.model, (0.0, 0.01), Q, None, tau=lambda t, q, qd: "x"),
        "tau",
    ),
    ("complex_array", lambda c: as_float_array(np.ones(3) + 1j, "x"), "x"),
    ("inertia_mass_negative", lambda c: dyn.spatial_inertia(-1.0, np.zeros(3), np.eye(3)), "mass"),
    (
        "inertia_triangle",
        lambda c: dyn.spatial_inertia(1.0, np.zeros(3), np.diag([1, 1, 3.0])),
        "inertia",
    ),
    ("inertia_negative", lambda c: dyn.spatial_inertia(1.0, np.zeros(3), -np.eye(3)), "inertia"),
    # -- kinematics
    ("euler_nan", lambda c: rot.euler_to_matrix([np.nan, 0, 0], "ZXY"), "angles"),
    ("quat_text", lambda c: rot.quat_to_matrix("x"), "q"),
    ("neutral_q_model", lambda c: kin.neutral_q({}), "model"),
    ("random_q_rng", lambda c: kin.random_q(c.model, rng=3), "rng"),
    ("gimbal_tol_none", lambda c: rot.gimbal_lock_mask(np.eye(3), "ZXY", tol=None), "tol"),
    ("fk_q_shape", lambda c: kin.forward_kinematics(c.model, np.zeros(7)), "q"),
    (
        "sphere_fit_iter",
        lambda c: kin.sphere_fit_centre(
            np.random.default_rng(0).normal(size=(20, 3)), max_iter="x"
        ),
        "max_iter",
    ),
    ("jcs_side_dict", lambda c: kin.pelvis_angles(np.eye(3), side={}), "side"),
    ("point_acc_kin", lambda c: kin.point_acceleration(c.model, Q, Q, Q, 1, kin="x"), "kin"),
    # -- dynamics
    ("rnea_model_swapped", lambda c: dyn.rnea(Q, c.model, None, None), "model"),
    ("forces_not_list", lambda c: dyn.total_generalized_force(c.model, 1.5, Q, Q), "forces"),
    ("forces_items", lambda c: dyn.total_generalized_force(c.model, ["x"], Q, Q), "forces"),
    ("joint_stop_text", lambda c: dyn.JointStop("pin", "a", 1.0, 10.0), "lower"),
    (
        "contact_negative",
        lambda c: dyn.PenaltyGroundContact("pendulum2", np.zeros(3), stiffness=-1.0),
        "stiffness",
    ),
    ("simulate_rtol", lambda c: dyn.simulate(c.model, (0, 0.01), Q, None, rtol="x"), "rtol"),
    (
        "simulate_forces_none",
        lambda c: dyn.simulate(c.model, (0, 0.01), Q, None, forces=None),
        "forces",
    ),
    ("constraint_set_float", lambda c: dyn.ConstraintSet(1.5), "constraints"),
    ("coupling_ratio", lambda c: dyn.CoordinateCoupling(1, 0, ratio=None), "ratio"),
    (
        "impulse_restitution",
        lambda c: dyn.compute_impulse(
            c.model, Q, Q, [dyn.CoordinateCoupling(1, 0)], restitution="x"
        ),
        "restitution",
    ),
    ("event_value", lambda c: dyn.coordinate_event(c.model, 0, None), "value"),
    (
        "joint_power_frames",
        lambda c: dyn.joint_power(np.ones((5, 3)), np.ones((0, 3)), np.ones((5, 3))),
        "omega_distal",
    ),
    (
        "newton_euler_motion",
        lambda c: dyn.newton_euler([-1], [1.0], np.eye(3)[None], "x", np.zeros((1, 1, 3))),
        "motion",
    ),
    (
        "plates_threshold",
        lambda c: dyn.assign_force_plates(
            c.walk.force_plates, {0: c.walk.points[:, 7:9]}, rate=100.0, threshold="x"
        ),
        "threshold",
    ),
    # -- bsp
    (
        "bsp_mass_negative",
        lambda c: bsp.segment_parameters("de_leva", mass=-70.0, height=1.75, sex="male"),
        "mass",
    ),
    ("bsp_sex_none", lambda c: bsp.compare_tables(mass=70.0, height=1.75, sex=None), "sex"),
    ("bsp_params", lambda c: bsp.parameters_to_dataframe(None), "params"),
    ("scale_inertia_mass", lambda c: bsp.scale_inertia(None, np.eye(3), [1, 1, 1]), "mass"),
    # -- analysis
    (
        "fp_events_threshold",
        lambda c: an.force_plate_events(np.ones(10), rate=100.0, threshold=None),
        "threshold",
    ),
    ("savgol_window", lambda c: an.savgol_derivative(SIG, rate=100.0, window=np.inf), "window"),
    ("spline_order", lambda c: an.spline_derivative(SIG, rate=100.0, order="x"), "order"),
    ("normalize_points", lambda c: an.time_normalize(SIG, [0, 50], n_points=None), "n_points"),
    ("normalize_empty", lambda c: an.time_normalize(np.empty(0), [0, 1]), "x"),
    ("derivative_axis", lambda c: an.central_difference(SIG, rate=100.0, axis="x"), "axis"),
    (
        "zeni_interval",
        lambda c: an.zeni_events(
            np.zeros((5, 3)), np.zeros((5, 3)), np.zeros((5, 3)), rate=100.0, min_interval=None
        ),
        "min_interval",
    ),
    ("gait_events_heel", lambda c: an.detect_gait_events(c.walk, heel=None), "heel"),
    (
        "rigid_donors",
        lambda c: an.fill_gaps_rigid(np.zeros((5, 4, 3)), 0, None, max_gap=2),
        "donors",
    ),
    ("spatiotemporal_events", lambda c: an.spatiotemporal_parameters(None), "events"),
    ("time_text", lambda c: an.time_normalize(SIG, [0, 0.5], time="x"), "time"),
    # -- io
    ("read_trc_none", lambda c: io.read_trc(None), "path"),
    ("read_csv_dict", lambda c: io.read_csv({}), "path"),
    (
        "wrench_threshold",
        lambda c: io.wrench_to_cop(np.ones((2, 3)), np.ones((2, 3)), [0, 0, 1], threshold=None),
        "threshold",
    ),
    ("plate_wrench_type", lambda c: io.plate_wrench(np.ones((2, 6)), {}, [0, 0, 0]), "plate_type"),
    ("zero_offset_interval", lambda c: io.remove_zero_offset(np.ones((5, 2)), None), "interval"),
    ("resample_swapped", lambda c: io.resample_force_plate(100.0, c.walk.force_plates[0]), "plate"),
    ("fp_from_c3d_trial", lambda c: io.force_plates_from_c3d("x"), "trial"),
    (
        "write_trc_format",
        lambda c: io.write_trc(_trial(), c.tmp / "x.trc", float_format="x"),
        "float_format",
    ),
    (
        "read_mot_angles",
        lambda c: osm.read_mot(c.tmp / "x.mot", angle_columns=1.5),
        "angle_columns",
    ),
    ("results_index", lambda c: io.results_to_dataframe({"a": np.ones(3)}, index="bogus"), "index"),
    ("analogs_trial", lambda c: io.analogs_to_dataframe(None), "trial"),
    # -- models
    ("walk_duration", lambda c: gait.synthetic_walking_trial(duration="x"), "duration"),
    ("walk_rng", lambda c: gait.synthetic_walking_trial(rng="x"), "rng"),
    ("lower_height", lambda c: gait.lower_extremity_model(height=None), "height"),
    ("half_sine_duration", lambda c: mdl.half_sine(0.1, peak=1.0, duration=0.0), "duration"),
    ("spring_text", lambda c: mdl.exponential_spring("a", 1.0), "A"),
    ("head_neck_params", lambda c: mdl.head_neck_model(parameters="x"), "parameters"),
    ("sled_forces_model", lambda c: mdl.sled_forces(None), "model"),
    (
        "head_load_forces",
        lambda c: mdl.estimate_head_load(
            mdl.head_neck_model(), np.zeros((5, 8)), rate=100.0, forces=1.5
        ),
        "forces",
    ),
    ("save_gait_swapped", lambda c: gait.save_gait_result(None, c.walk, c.tmp / "g.h5"), "trial"),
    (
        "base_acceleration_text",
        lambda c: mdl.BaseAcceleration(lambda t: "x")._a(0.0, ()),
        "acceleration",
    ),
]


class _Ctx:
    def __init__(self, model, walk, tmp):
        self.model, self.walk, self.tmp = model, walk, tmp


@pytest.mark.parametrize("call, name", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_argument_raises_ahbm_error_naming_it(call, name, pendulum, walk, tmp_path):
    with pytest.raises(AhbmError) as info:
        call(_Ctx(pendulum, walk, tmp_path))
    assert name in str(info.value), str(info.value)
    assert not list(tmp_path.iterdir())  # no file (or temporary) left behind


def test_graphics_bad_arguments(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import ahbm.graphics as gr

    model = mdl.double_pendulum_3d()
    for call, name in [
        (lambda: gr.save_figure(None, tmp_path / "f.png"), "fig"),
        (lambda: gr.draw_model(model, color="not-a-colour"), "color"),
        (lambda: gr.model_skeleton(model, np.eye(4)), "transforms"),
        (lambda: gr.xy_view(SIG, rate="x"), "rate"),
        (lambda: gr.stick_view(np.zeros((3, 2, 3)), floor_height=None), "floor_height"),
        (lambda: gr.plug_in_gait_segments(None), "labels"),
    ]:
        with pytest.raises(AhbmError, match=name):
            call()


def test_none_means_zeros_in_every_dynamics_entry_point(pendulum):
    """docs/api-rules.md §4: qd, qdd, tau (and simulate's qd0) given as None are zeros."""
    m, z = pendulum, np.zeros(pendulum.nv)
    np.testing.assert_array_equal(dyn.rnea(m, Q, None, None), dyn.rnea(m, Q, z, z))
    np.testing.assert_array_equal(dyn.aba(m, Q, None, None), dyn.aba(m, Q, z, z))
    np.testing.assert_allclose(
        dyn.forward_dynamics(m, Q, None, None, method="crba"), dyn.aba(m, Q, z, z), atol=1e-12
    )
    np.testing.assert_array_equal(dyn.nonlinear_effects(m, Q, None), dyn.gravity_torques(m, Q))
    np.testing.assert_array_equal(
        dyn.inverse_dynamics_residual(m, Q, None, None, None), dyn.rnea(m, Q, z, z)
    )
    batch = np.tile(Q, (3, 1))
    assert dyn.aba(m, batch, None, None).shape == (3, m.nv)
    spring = dyn.RotationalSpringDamper("pin", stiffness=2.0, damping=5.0)
    np.testing.assert_array_equal(
        dyn.total_generalized_force(m, [spring], Q, None),
        dyn.total_generalized_force(m, [spring], Q, z),
    )
    r0 = dyn.simulate(m, (0.0, 0.02), Q, None, rtol=1e-8, atol=1e-10)
    r1 = dyn.simulate(m, (0.0, 0.02), Q, z, rtol=1e-8, atol=1e-10)
    np.testing.assert_array_equal(r0.q, r1.q)


def test_documented_results_for_empty_signals():
    strikes, offs = an.force_plate_events(np.empty(0), rate=1000.0)
    assert strikes.size == 0 and offs.size == 0
    filled, report = an.fill_gaps(np.empty((0, 3)), max_gap=3)
    assert filled.shape == (0, 3) and report == []
    df = io.trial_to_dataframe(io.Trial())
    assert df.shape == (0, 0)
    # a batch of 0 frames is a valid batch: empty results of the right trailing shape
    m, none = mdl.double_pendulum_3d(), np.zeros((0, 4))
    assert kin.point_position(m, none, 1).shape == (0, 3)
    assert kin.point_jacobian(m, none, 1).shape == (0, 3, 4)
    assert dyn.aba(m, none, None, None).shape == (0, 4)


def test_constrained_dynamics_without_constraints_is_unconstrained(pendulum):
    tau = np.array([0.3, -0.2, 0.1, 0.0])
    qdd, lam = dyn.constrained_forward_dynamics(pendulum, np.tile(Q, (2, 1)), None, tau, [])
    np.testing.assert_allclose(qdd, dyn.aba(pendulum, np.tile(Q, (2, 1)), None, tau), atol=1e-10)
    assert lam.shape == (2, 0)


def test_valid_inertias_and_zero_mass_still_accepted():
    # a thin rod meets the triangle inequality with equality; a point mass has zero inertia
    rod = dyn.spatial_inertia(2.0, [0, 0, 0.5], np.diag([0.1, 0.1, 0.0]))
    assert np.allclose(rod, rod.T)
    assert dyn.spatial_inertia(0.0, np.zeros(3), np.zeros((3, 3))).shape == (6, 6)
    with pytest.raises(DataError, match="symmetric"):
        dyn.spatial_inertia(1.0, np.zeros(3), [[1, 0.5, 0], [0, 1, 0], [0, 0, 1]])
