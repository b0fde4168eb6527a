"""The predictive 3-D walk on HeiMan (examples/predictive_walking_3d.py) on its quick grid."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("casadi")

from ahbm.dynamics.inverse import rnea  # noqa: E402
from ahbm.kinematics.forward import forward_kinematics  # noqa: E402
from ahbm.kinematics.marker_model import model_markers  # noqa: E402
from ahbm.models import heiman_model  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "predictive_walking_3d.py"
S = np.diag([1.0, -1.0, 1.0])  # the sagittal mirror y -> -y


@pytest.fixture(scope="module")
def walk_mod():
    spec = importlib.util.spec_from_file_location("ahbm_example_predictive_walking_3d", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def quick(walk_mod, tmp_path_factory):
    out = tmp_path_factory.mktemp("walk3d")
    return walk_mod.run(out, quick=True), out


def _markers(model, q):
    """All marker positions (n, m, 3) and their names, from the forward kinematics."""
    mm = model_markers(model)
    kin = forward_kinematics(model, q)
    b = [model.body_index(x) for x in mm.bodies]
    pts = np.einsum("nmij,mj->nmi", kin.rotations[:, b], np.asarray(mm.local, float))
    return pts + kin.positions[:, b], list(mm.names)


# markers placed symmetrically on both sides (RBAK and the upper-arm/forearm wands are not)
SYMMETRIC = [("heel_r", "heel_l"), ("toe_r", "toe_l"), ("RASI", "LASI"), ("RKNE", "LKNE"),
             ("RANK", "LANK"), ("RSHO", "LSHO"), ("RELB", "LELB"), ("RFIN", "LFIN"),
             ("RFHD", "LFHD")]  # fmt: skip


def test_mirror_map_reflects_the_whole_body(walk_mod):
    # the Symmetry's pairs and signs turn any pose into its mirror image across y = 0
    m = heiman_model(root="free_euler")
    names = list(m.coordinate_names)
    pairs, negate = walk_mod.mirror_pairs(m)
    assert ("hip_r_ry", "hip_l_ry") in pairs and ("knee_r", "knee_l") in pairs
    assert len(pairs) == 11 and "pelvis_ry" not in negate and "hip_l_rz" in negate
    perm, sign = np.arange(m.nq), np.ones(m.nq)
    for a, b in pairs:
        perm[names.index(a)], perm[names.index(b)] = names.index(b), names.index(a)
    for n in negate:
        sign[names.index(n)] = -1.0
    q = np.random.default_rng(3).uniform(-0.5, 0.5, (4, m.nq))
    P, mk = _markers(m, q)
    Pm, _ = _markers(m, q[:, perm] * sign)
    for a, b in SYMMETRIC:
        np.testing.assert_allclose(Pm[:, mk.index(a)], P[:, mk.index(b)] @ S, atol=1e-12)
        np.testing.assert_allclose(Pm[:, mk.index(b)], P[:, mk.index(a)] @ S, atol=1e-12)


def test_quick_walk_converges_at_the_prescribed_speed(quick):
    n, out = quick
    assert n["success"], n["result"].summary()
    assert n["violation"] < 1e-3  # the quick grid's loose tolerance
    assert n["speed"] == pytest.approx(n["target_speed"], abs=1e-6)
    assert n["step_length"] == pytest.approx(1.2 * n["half_cycle"], abs=1e-6)
    assert 0.35 < n["half_cycle"] < 0.9  # inside the free duration's bounds
    assert (out / "predictive_walk_3d.png").stat().st_size > 5000


def test_quick_walk_ends_in_the_mirror_image_of_its_start(quick):
    n, _ = quick
    r = n["result"].phases[0]
    m = n["model"]
    P, mk = _markers(m, r.q[[0, -1]])
    step = np.array([n["step_length"], 0.0, 0.0])
    for a, b in SYMMETRIC:
        # the right side at the start is the left side at the end, mirrored and one step back
        np.testing.assert_allclose(P[0, mk.index(a)], (P[1, mk.index(b)] - step) @ S, atol=1e-5)
    # velocities: the forward one repeats (a boundary constraint), the lateral one flips
    ix = {k: i for i, k in enumerate(m.coordinate_names)}
    assert r.qd[0, ix["pelvis_tx"]] == pytest.approx(r.qd[-1, ix["pelvis_tx"]], abs=1e-5)
    assert r.qd[0, ix["pelvis_ty"]] == pytest.approx(-r.qd[-1, ix["pelvis_ty"]], abs=1e-5)
    assert r.qd[0, ix["knee_r"]] == pytest.approx(r.qd[-1, ix["knee_l"]], abs=1e-5)


def test_quick_walk_ground_forces_only_where_the_feet_touch(quick):
    n, _ = quick
    r = n["result"].phases[0]
    ph = n["problem"].phases[0]
    bw = n["model"].total_mass * 9.81
    out = ph.contact_outputs(np.vstack([r.q.T, r.qd.T]))
    F, depth = out["F"], out["depth"]
    # a sphere clear of the ground by 5 mm or more carries nothing; none pulls (the law's
    # smooth switches let at most a trace through)
    assert np.all(np.abs(F[depth < -5e-3]) < 1e-3 * bw)
    assert np.all(F[..., 2] > -1e-3 * bw)
    # each foot is loaded somewhere and unloaded somewhere (it steps)
    for side in ("r", "l"):
        fz = n["forces"][side]
        assert fz.max() > 0.5 * bw and fz.min() < 0.01 * bw
    # the vertical impulse over the half cycle carries the weight (the vertical momentum repeats)
    fz = F[..., 2].sum(axis=1)
    impulse = np.trapezoid(fz, r.t)
    assert impulse == pytest.approx(bw * n["half_cycle"], rel=0.02)


def test_quick_walk_obeys_the_equations_of_motion(quick):
    # an independent check: numpy RNEA minus the numpy spheres' generalized forces = the torques
    n, _ = quick
    r = n["result"].phases[0]
    m = n["model"]
    ph = n["problem"].phases[0]
    tau_c = sum(s.generalized_force(m, r.q, r.qd) for s in ph.smooth_contacts)
    residual = rnea(m, r.q, r.qd, r.qdd) - tau_c - r.tau
    scale = m.total_mass * 9.81  # N (and N m at 1 m)
    assert np.abs(residual).max() < 1e-3 * scale
    np.testing.assert_array_equal(r.tau[:, :6], 0.0)  # the root is not actuated
