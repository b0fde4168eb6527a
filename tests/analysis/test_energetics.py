"""Segment energies, Winter's work measures and power flow (ahbm.analysis.energetics)."""

import numpy as np
import pytest

from ahbm.analysis import (
    SegmentEnergies,
    external_work,
    internal_work,
    model_power_flow,
    model_segment_energies,
    model_segment_kinematics,
    segment_energies,
    segment_power_flow,
    winter_work,
)
from ahbm.dynamics import rnea
from ahbm.dynamics.segmental import JointLoads
from ahbm.errors import DataError
from ahbm.kinematics import center_of_mass, com_velocity, kinetic_energy, potential_energy
from ahbm.models import double_pendulum_3d, triple_pendulum_euler

T = np.linspace(0.0, 1.0, 2001)


def _trajectory(model, seed=0):
    """Smooth q(t) = a sin(w t + phi) with exact velocities and accelerations."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=model.nq) * 0.8
    w = rng.uniform(1.0, 4.0, model.nq)
    ph = rng.uniform(0.0, 2 * np.pi, model.nq)
    arg = w * T[:, None] + ph
    return a * np.sin(arg), a * w * np.cos(arg), -a * w**2 * np.sin(arg)


def _ddt(x):
    return np.gradient(x, T, axis=0, edge_order=2)


@pytest.mark.parametrize("make", [triple_pendulum_euler, double_pendulum_3d])
def test_model_energies_match_kinematics_and_koenig(make):
    m = make()
    q, qd, _ = _trajectory(m, 1)
    e = model_segment_energies(m, q, qd)
    assert e.translational.shape == (T.size, m.n_bodies)
    np.testing.assert_allclose(e.kinetic.sum(-1), kinetic_energy(m, q, qd), atol=1e-12)
    np.testing.assert_allclose(e.potential.sum(-1), potential_energy(m, q), atol=1e-12)
    # independent route: COM velocities and world angular velocities, then ½ m v² and ½ ωᵀIω
    s = model_segment_kinematics(m, q, qd)
    e2 = segment_energies(
        m.masses, m.inertias, s["rotation"], s["com"], s["com_velocity"], s["omega"],
        gravity=m.gravity,
    )  # fmt: skip
    for a, b in zip((e.translational, e.rotational, e.potential),
                    (e2.translational, e2.rotational, e2.potential), strict=True):  # fmt: skip
        np.testing.assert_allclose(a, b, atol=1e-10)
    # COM velocity by finite differences of the COM positions
    np.testing.assert_allclose(s["com_velocity"][2:-2], _ddt(s["com"])[2:-2], atol=1e-5)
    # whole-body COM from the segment COMs
    c = np.einsum("b,nbi->ni", m.masses, s["com"]) / m.masses.sum()
    np.testing.assert_allclose(c, center_of_mass(m, q), atol=1e-12)


def test_energy_balance_with_rnea_torques_and_external_force():
    """d/dt (T + V) = Σ τ·q̇ + P_ext, with τ from RNEA and gravity in V."""
    m = triple_pendulum_euler()
    q, qd, qdd = _trajectory(m, 2)
    rng = np.random.default_rng(3)
    f_ext = np.zeros((T.size, m.n_bodies, 6))
    f_ext[:, 2, 3:] = rng.normal(size=3) * 5 * np.cos(3 * T)[:, None]  # force ...
    f_ext[:, 2, :3] = rng.normal(size=3)  # ... and a moment about the world origin
    tau = rnea(m, q, qd, qdd, f_ext=f_ext, f_ext_frame="world")
    e = model_segment_energies(m, q, qd)
    s = model_segment_kinematics(m, q, qd)
    f, n = f_ext[:, 2, 3:], f_ext[:, 2, :3]
    w, c, v = s["omega"][:, 2], s["com"][:, 2], s["com_velocity"][:, 2]
    p_ext = np.sum(f * v, -1) + np.sum((n - np.cross(c, f)) * w, -1)
    lhs = _ddt(e.total)
    rhs = np.sum(tau * qd, -1) + p_ext
    assert np.abs(rhs).max() > 1.0
    np.testing.assert_allclose(lhs[2:-2], rhs[2:-2], atol=5e-5 * np.abs(rhs).max())
    # the balance fails without the external power (the test can fail)
    assert np.abs(lhs - np.sum(tau * qd, -1)).max() > 1e-2


@pytest.mark.parametrize("make", [triple_pendulum_euler, double_pendulum_3d])
def test_segment_power_balance_on_model(make):
    """dE_i/dt equals the joint force and moment powers into segment i."""
    m = make()
    q, qd, qdd = _trajectory(m, 4)
    f_ext = np.zeros((T.size, m.n_bodies, 6))
    f_ext[:, -1, 3:] = [3.0, -2.0, 5.0]
    pf = model_power_flow(m, q, qd, qdd, f_ext=f_ext)
    e = model_segment_energies(m, q, qd)
    dE = _ddt(e.segment_total)
    scale = np.abs(dE).max()
    np.testing.assert_allclose(pf.total[2:-2], dE[2:-2], atol=5e-5 * scale)
    # summed over segments: the joint powers τ·q̇ and the external power
    tau = rnea(m, q, qd, qdd, f_ext=f_ext, f_ext_frame="world")
    np.testing.assert_allclose(
        pf.total.sum(-1), np.sum(tau * qd, -1) + pf.external.sum(-1), atol=1e-9 * scale
    )
    # energy passes through the joints: force powers cancel between neighbours
    assert np.abs(pf.proximal_force[:, 1]).max() > 1e-3
    np.testing.assert_allclose(
        pf.proximal_force[:, 1:].sum(-1) + pf.distal_force.sum(-1), 0.0, atol=1e-9 * scale
    )


def test_energy_balance_on_simulated_floating_base_model():
    """A free-floating 15-segment model (quaternion root, nq != nv), simulated by ahbm."""
    from ahbm.dynamics import simulate
    from ahbm.kinematics.configuration import neutral_q
    from ahbm.models import human15

    m = human15()
    rng = np.random.default_rng(0)
    q0, qd0 = neutral_q(m), rng.normal(size=m.nv) * 0.3
    tau = rng.normal(size=m.nv) * 0.5
    tau[:6] = 0.0  # no actuation of the free root joint
    t = np.linspace(0.0, 0.2, 801)
    kw = dict(t_eval=t, rtol=1e-11, atol=1e-12)
    # passive: the total mechanical energy is conserved while the kinetic energy changes
    r0 = simulate(m, (0.0, 0.2), q0, qd0, **kw)
    e0 = model_segment_energies(m, r0.q, r0.qd)
    assert np.ptp(e0.kinetic.sum(-1)) > 10.0
    assert np.ptp(e0.total) < 1e-8
    # driven: dE/dt = Σ τ·q̇ with τ from RNEA (equal to the applied torques)
    r = simulate(m, (0.0, 0.2), q0, qd0, tau=tau, **kw)
    tr = rnea(m, r.q, r.qd, r.qdd)
    np.testing.assert_allclose(tr, np.broadcast_to(tau, tr.shape), atol=1e-8)
    e = model_segment_energies(m, r.q, r.qd)
    P = np.sum(tr * r.qd, -1)
    dE = np.gradient(e.total, t, edge_order=2)
    np.testing.assert_allclose(dE[2:-2], P[2:-2], atol=1e-4 * np.abs(P).max())
    pf = model_power_flow(m, r.q, r.qd, r.qdd)
    dEi = np.gradient(e.segment_total, t, axis=0, edge_order=2)
    np.testing.assert_allclose(pf.total[2:-2], dEi[2:-2], atol=1e-3 * np.abs(dEi).max())
    np.testing.assert_allclose(pf.total.sum(-1), P, atol=1e-9 * np.abs(P).max())


def test_segment_power_balance_from_finite_difference_kinematics():
    """Winter's power balance with kinematics differentiated from poses (gait-lab route)."""
    from ahbm.analysis import central_difference, segment_motion
    from ahbm.dynamics.segmental import newton_euler

    m = triple_pendulum_euler()
    q, qd, _ = _trajectory(m, 5)
    s = model_segment_kinematics(m, q, qd)
    motion = segment_motion(s["rotation"], s["com"], time=T)
    v = central_difference(s["com"], time=T)
    loads = newton_euler(list(m.parent), m.masses, m.inertias, motion, s["origin"],
                         gravity=m.gravity)  # fmt: skip
    pf = segment_power_flow(m.parent, loads, s["com"], v, motion.omega)
    e = segment_energies(m.masses, m.inertias, s["rotation"], s["com"], v, motion.omega,
                         gravity=m.gravity)  # fmt: skip
    dE = _ddt(e.segment_total)
    sl = slice(5, -5)
    np.testing.assert_allclose(pf.total[sl], dE[sl], atol=2e-3 * np.abs(dE).max())


def test_winter_work_closed_forms():
    # a ball in free flight: V and T exchange perfectly within the segment
    t = np.linspace(0, 1, 101)
    z, vz = 5 * t - 4.905 * t**2, 5 - 9.81 * t
    c = np.stack([0 * t, 0 * t, z], -1)[:, None]
    v = np.stack([0 * t, 0 * t, vz], -1)[:, None]
    e = segment_energies([1.0], np.zeros((1, 3, 3)), np.eye(3)[None], c, v, 0 * v)
    w = winter_work(e)
    # W_n = Σ|ΔT| + Σ|ΔV| (each component on its own)
    T_ = 0.5 * vz**2
    expect = np.abs(np.diff(T_)).sum() + np.abs(np.diff(9.81 * z)).sum()
    assert w.no_transfer == pytest.approx(expect, rel=1e-12)
    assert abs(w.within) < 1e-9 and abs(w.within_between) < 1e-9
    # two segments exchanging energy: within > 0 but within_between = 0
    E1 = np.sin(np.linspace(0, 2 * np.pi, 50))[:, None]
    tr = np.concatenate([1 + E1, 1 - E1], axis=1)
    z2 = np.zeros_like(tr)
    w2 = winter_work(SegmentEnergies(tr, z2, z2))
    assert w2.within == pytest.approx(2 * np.abs(np.diff(E1[:, 0])).sum())
    assert w2.within_between == pytest.approx(0.0, abs=1e-12)
    assert w2.no_transfer >= w2.within >= w2.within_between
    # frame range
    w3 = winter_work(SegmentEnergies(tr, z2, z2), start=0, stop=13)
    assert w3.within == pytest.approx(2 * np.abs(np.diff(E1[:13, 0])).sum())


def test_internal_and_external_work():
    m = triple_pendulum_euler()
    q, qd, qdd = _trajectory(m, 6)
    e = model_segment_energies(m, q, qd)
    s = model_segment_kinematics(m, q, qd)
    # König: Σ T_i = ½ M |v_G|² + Σ T_i,rel
    vG = com_velocity(m, q, qd)
    M = m.masses.sum()
    rel = 0.5 * m.masses * np.sum((s["com_velocity"] - vG[:, None]) ** 2, -1)
    np.testing.assert_allclose(e.translational.sum(-1), 0.5 * M * np.sum(vG**2, -1) + rel.sum(-1),
                               atol=1e-10)  # fmt: skip
    wi = internal_work(m.masses, s["com_velocity"], e.rotational)
    ref = winter_work(SegmentEnergies(rel, e.rotational, 0 * rel))
    assert wi.within_between == pytest.approx(ref.within_between, rel=1e-12)
    # external work: the pendulum's support force on the COM; ∫ F·v_G = Δ(½ M v_G² − M g·c_G)
    s2 = model_segment_kinematics(m, q, qd, qdd)
    aG = np.einsum("b,nbi->ni", m.masses, s2["com_acc"]) / M
    F = M * (aG - m.gravity)
    w = external_work(F, vG, time=T)
    cG = center_of_mass(m, q)
    dE = 0.5 * M * (vG[-1] @ vG[-1] - vG[0] @ vG[0]) - M * m.gravity @ (cG[-1] - cG[0])
    assert w.net == pytest.approx(dE, abs=1e-4 * (w.positive - w.negative))
    assert w.positive > 0 > w.negative


def test_bad_input_raises():
    with pytest.raises(DataError, match="inertia"):
        segment_energies([1.0], np.eye(3), np.eye(3)[None], [[0, 0, 0]], [[0, 0, 0]],
                         [[0, 0, 0]])  # fmt: skip
    with pytest.raises(DataError, match="mass"):
        segment_energies([-1.0], np.eye(3)[None], np.eye(3)[None], [[0, 0, 0]], [[0, 0, 0]],
                         [[0, 0, 0]])  # fmt: skip
    with pytest.raises(DataError, match="SegmentEnergies"):
        winter_work(np.zeros((3, 2)))
    with pytest.raises(DataError, match="2 frames"):
        z = np.zeros((1, 2))
        winter_work(SegmentEnergies(z, z, z))
    with pytest.raises(DataError, match="force"):
        external_work(np.zeros((3, 2)), np.zeros((3, 2)), rate=100.0)
    with pytest.raises(DataError, match="loads"):
        segment_power_flow([-1], None, np.zeros((2, 1, 3)), np.zeros((2, 1, 3)),
                           np.zeros((2, 1, 3)))  # fmt: skip
    L = JointLoads(np.zeros((2, 1, 3)), np.zeros((2, 1, 3)), np.zeros((2, 1, 3)))
    with pytest.raises(DataError, match="parent"):
        segment_power_flow([0], L, np.zeros((2, 1, 3)), np.zeros((2, 1, 3)), np.zeros((2, 1, 3)))
    with pytest.raises(DataError, match="omega"):
        segment_power_flow([-1], L, np.zeros((2, 1, 3)), np.zeros((2, 1, 3)), np.zeros((3, 1, 3)))


# --- the gait pipeline ------------------------------------------------------------------


@pytest.fixture(scope="module")
def walk():
    import warnings

    from ahbm.errors import AhbmWarning
    from ahbm.gait import analyze_gait
    from ahbm.gait.demo import synthetic_walking_trial

    trial, _ = synthetic_walking_trial(duration=2.6, noise=0.0, gap=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        return trial, analyze_gait(trial)


def test_gait_result_energies_and_power_balance(walk):
    from ahbm.gait.frames import SEGMENTS
    from ahbm.gait.markersets import G

    _, r = walk
    en = r.energetics
    seg = en["segments"]
    assert tuple(seg) == SEGMENTS
    total = sum(d["energy"] for d in seg.values())
    np.testing.assert_allclose(en["total_energy"], total, atol=1e-9)
    mass = r.subject.mass
    legs = [k for k in SEGMENTS if k != "pelvis"]
    # the thigh's potential energy: de Leva thigh mass (~14 % of body mass) × G × COM height
    thigh = seg["thigh_Left"]
    z = thigh["potential_energy"] / (G * 0.1416 * mass)
    assert 0.6 < np.nanmedian(z) < 1.0  # thigh COM height, m
    assert np.all(thigh["translational_energy"] >= 0) and np.all(thigh["rotational_energy"] >= 0)
    # Winter's power balance: dE_i/dt = net joint and ground power into segment i
    n_ok = 0
    for k in legs:
        d = seg[k]
        dE = np.gradient(d["energy"], r.time)
        ok = np.isfinite(d["net_power"])
        ok[:5] = ok[-5:] = False
        n_ok += ok.sum()
        peak = np.nanmax(np.abs(d["net_power"]))
        assert np.abs(dE[ok] - d["net_power"][ok]).max() < 0.03 * peak, k
    assert n_ok > 500
    # at each joint the force powers nearly cancel (energy passes from one segment to the
    # next); not exactly: the joint centre's velocity as a point of the proximal and of the
    # distal segment differ by the soft-tissue / finite-difference inconsistency of the frames
    for p_, c_ in (("thigh_Left", "shank_Left"), ("shank_Right", "foot_Right")):
        into = seg[c_]["proximal_force_power"]
        cancel = into + seg[p_]["distal_force_power"]
        ok = np.isfinite(cancel)
        assert np.abs(cancel[ok]).max() < 0.1 * np.abs(into[ok]).max(), (p_, c_)
    # work per cycle: W_wb <= W_w <= W_n, ground work from the plates
    for side in ("Left", "Right"):
        c = en["cycles"][side]
        assert c["work_no_transfer"].size >= 1
        assert np.all(c["work_within_between"] <= c["work_within"] + 1e-9)
        assert np.all(c["work_within"] <= c["work_no_transfer"] + 1e-9)
        assert np.all(c["ground_work_negative"] <= 0)


def test_gait_cycle_work_matches_winter_work(walk):
    from ahbm.gait.cycles import foot_strikes

    _, r = walk
    en = r.energetics
    fs = foot_strikes(r.events, "Left")
    fs = fs[(fs >= r.time[0]) & (fs <= r.time[-1])]
    a, b = np.searchsorted(r.time, fs[:2])
    parts = [
        np.stack([d[key] for d in en["segments"].values()], -1)
        for key in ("translational_energy", "rotational_energy", "potential_energy")
    ]
    w = winter_work(SegmentEnergies(*parts), start=a, stop=b + 1)
    assert en["cycles"]["Left"]["work_within_between"][0] == pytest.approx(w.within_between)
    direct = np.abs(np.diff(en["total_energy"][a : b + 1])).sum()
    assert w.within_between == pytest.approx(direct)


def test_gait_energetics_in_hdf5_with_units(walk, tmp_path):
    from dataclasses import replace

    import h5py

    from ahbm.gait import save_gait_result

    trial, r = walk
    out = tmp_path / "walk.h5"
    name = save_gait_result(replace(trial, results={}), r, out)
    with h5py.File(out, "r") as f:
        res = f["trials"][name]["results"]["energetics"]
        assert res["total_energy"].attrs["units"] == "J"
        assert res["segments/shank_Left/rotational_energy"].attrs["units"] == "J"
        assert res["segments/shank_Left/proximal_moment_power"].attrs["units"] == "W"
        assert res["cycles/Right/work_within"].attrs["units"] == "J"
        np.testing.assert_array_equal(res["total_energy"][()], r.energetics["total_energy"])


def test_gait_energetics_without_kinetics():
    import warnings

    from ahbm.errors import AhbmWarning
    from ahbm.gait import GaitSettings, analyze_gait
    from ahbm.gait.demo import synthetic_walking_trial

    trial, _ = synthetic_walking_trial(duration=2.6, noise=0.0, gap=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        r = analyze_gait(trial, settings=GaitSettings(kinetics=False))
    seg = r.energetics["segments"]["foot_Right"]
    assert "energy" in seg and "net_power" not in seg
    assert "ground_work_positive" not in r.energetics["cycles"]["Left"]
