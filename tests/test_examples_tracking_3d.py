"""Reconstruction of subject01's walk with compliant foot contact (examples/tracking_walk_3d.py).

The quick grid (17 nodes on 0.55–0.95 s of the trial: the right heel strike
and the left toe-off). Bounds: coordinates within 1.5° (pelvis translations
1 cm) RMS of the processed inverse kinematics, the tracked ground reaction
within 5 % of body weight RMS, knee and ankle moments within 30 % of their
range in the trial's inverse dynamics, pelvis residual forces below 2 % of body
weight, the spheres' forces on and off where the measured forces are (two
node intervals around each measured event left out), and Newton's law along
the pelvis translations checked by numpy RNEA.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("casadi")

from ahbm.dynamics import rnea  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "tracking_walk_3d.py"


@pytest.fixture(scope="module")
def mod():
    spec = importlib.util.spec_from_file_location("ahbm_example_tracking_walk_3d", EXAMPLE)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


@pytest.fixture(scope="module")
def quick(mod, shared_data, tmp_path_factory):
    out = tmp_path_factory.mktemp("track3d")
    return mod.run(out, quick=True, data=shared_data / "opensim"), out


def test_converges_and_tracks(quick):
    n, out = quick
    assert n["success"], n["status"]
    assert (out / "tracking_walk_3d.png").stat().st_size > 1000
    # the treadmill's belt: the stance feet move backwards at the walking speed
    assert 0.9 < n["belt_speed"] < 1.4
    for name, deg in n["tracking_deg"].items():
        assert deg < 1.5, (name, deg)
    for name, cm in n["tracking_pelvis_cm"].items():
        assert cm < 1.0, (name, cm)
    # the measured markers (lab frame): within 1 cm RMS of what the IK poses themselves reach
    # (the sagittal model cannot follow the markers' lateral motion: about 3 cm at the IK poses)
    assert n["marker_rms"] < n["marker_rms_ik"] + 0.01
    assert 0.0 < n["marker_rms_ik"] < 0.04


def test_ground_reaction_tracked(quick):
    n, _ = quick
    bw = n["body_weight"]
    assert 700 < bw < 720  # 72.6 kg
    for axis, rms in n["grf_rms"].items():
        assert rms < 0.05 * bw, (axis, rms)
    # each foot's sagittal moment (its centre of pressure) is tracked too: the total's within
    # 2.5 cm of centre of pressure under one body weight
    assert n["grf_moment_rms"] < 0.025 * bw


def test_joint_moments_follow_inverse_dynamics(quick):
    """Knee and ankle moments within 30 % of their range in the trial (hips, lumbar: reported)."""
    n, _ = quick
    for name, v in n["moments_rms_of_range"].items():
        if name.startswith(("knee", "ankle")):
            assert v < 0.3, (name, v)


def test_residuals_small(quick):
    n, _ = quick
    bw = n["body_weight"]
    for name, v in n["residual_peak_bw"].items():
        assert v < 0.02, (name, v)
    assert n["residual_peak"]["pelvis_tilt"] < 0.02 * bw * 1.0  # N m


def test_contact_where_measured(mod, quick):
    n, _ = quick
    t = n["t"]
    h = t[1] - t[0]
    events_seen = 0
    for side in ("r", "l"):
        measured = n["measured_foot_forces"][side][:, 1]
        model = n["foot_forces"][side][:, 1]
        ev = n["measured_events"][side]
        times = ev["on"] + ev["off"]
        far = np.ones(t.size, bool)
        for te in times:
            far &= np.abs(t - te) > 2 * h
        on = measured > mod.THRESHOLD
        assert np.all(model[far & on] > mod.THRESHOLD), side
        assert np.all(model[far & ~on] < mod.THRESHOLD), side
        # each measured event has the model's event of the same kind within two intervals
        for kind in ("on", "off"):
            for te in ev[kind]:
                got = n["model_events"][side][kind]
                assert got and min(abs(np.array(got) - te)) < 2 * h, (side, kind, te, got)
                events_seen += 1
    assert events_seen == 2  # the right heel strike and the left toe-off


def test_newton_along_pelvis_translations(quick):
    """numpy RNEA of the solution = residual + the spheres' total force (world x and y)."""
    n, _ = quick
    res, model = n["result"], n["model"]
    tau = rnea(model, res.q, res.qd, res.qdd)
    F = n["foot_forces"]["r"] + n["foot_forces"]["l"]
    names = list(model.coordinate_names)
    for k, name in enumerate(("pelvis_tx", "pelvis_ty")):
        i = names.index(name)
        np.testing.assert_allclose(tau[:, i], res.tau[:, i] + F[:, k], atol=1e-4 * n["body_weight"])
