"""Joint reaction loads: identities with inverse dynamics, frames, muscle forces."""

from __future__ import annotations

import numpy as np
import pytest

from ahbm.dynamics import rnea
from ahbm.errors import DataError, ModelError
from ahbm.kinematics import Model, forward_kinematics, random_model, random_q
from ahbm.muscles.joint_reaction import joint_reaction_loads


def _state(rng, model, n=7):
    q = random_q(model, rng=rng, size=(n,))
    qd = rng.normal(size=(n, model.nv))
    qdd = rng.normal(size=(n, model.nv))
    return q, qd, qdd


def _joint_generalized_forces(model, kin, res):
    """Sᵀ f of every joint: world motion columns against the loads about the world origin."""
    n_o = res.moment + np.cross(res.point, res.force)  # moment about the world origin
    f = np.concatenate([n_o, res.force], axis=-1)  # (N, nb, 6)
    S = kin.world_columns  # (N, 6, nv)
    out = np.zeros(S.shape[:-2] + (model.nv,))
    for i in range(model.n_bodies):
        v = model.v_index[i]
        cols = np.arange(v, v + model.joint_nv[i])
        out[..., cols] = np.einsum("nkc,nk->nc", S[..., cols], f[:, i])
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_projection_on_the_joint_axes_is_inverse_dynamics(seed):
    # Sᵀ f_i = τ_i for every joint type, with child offsets and external loads
    rng = np.random.default_rng(seed)
    model = random_model(7, rng=rng, child_offsets=True)
    q, qd, qdd = _state(rng, model)
    f_ext = rng.normal(size=(q.shape[0], model.n_bodies, 6)) * 10
    res = joint_reaction_loads(model, q, qd, qdd, f_ext=f_ext, frame="ground")
    kin = forward_kinematics(model, q)
    tau = rnea(model, q, qd, qdd, f_ext=f_ext)
    np.testing.assert_allclose(_joint_generalized_forces(model, kin, res), tau, atol=1e-9)
    # the load acts at the child-frame origin of each joint
    R, p = kin.rotations, kin.positions
    child = np.array([b.child_position for b in model.bodies])
    np.testing.assert_allclose(res.point, p + np.einsum("nbij,bj->nbi", R, child), atol=1e-12)


def test_local_external_loads_equal_world_ones():
    rng = np.random.default_rng(3)
    model = random_model(5, rng=rng, child_offsets=True)
    q, qd, qdd = _state(rng, model, n=4)
    kin = forward_kinematics(model, q)
    R, p = kin.rotations, kin.positions
    f_loc = rng.normal(size=(4, model.n_bodies, 6))
    F = np.einsum("nbij,nbj->nbi", R, f_loc[..., 3:])
    f_world = np.concatenate(
        [np.einsum("nbij,nbj->nbi", R, f_loc[..., :3]) + np.cross(p, F), F], axis=-1
    )
    a = joint_reaction_loads(model, q, qd, qdd, f_ext=f_loc, f_ext_frame="local")
    b = joint_reaction_loads(model, q, qd, qdd, f_ext=f_world)
    np.testing.assert_allclose(a.force, b.force, atol=1e-10)
    np.testing.assert_allclose(a.moment, b.moment, atol=1e-10)


def test_parent_side_and_frames():
    rng = np.random.default_rng(4)
    model = random_model(6, rng=rng, child_offsets=True, joint_types=("revolute", "euler"))
    q, qd, qdd = _state(rng, model, n=3)
    kin = forward_kinematics(model, q)
    R, p = kin.rotations, kin.positions
    g = joint_reaction_loads(model, q, qd, qdd, frame="ground")
    gp = joint_reaction_loads(model, q, qd, qdd, frame="ground", on="parent")
    # the parent feels the opposite load; moments moved to the parent-frame origin
    np.testing.assert_allclose(gp.force, -g.force, atol=1e-12)
    np.testing.assert_allclose(
        gp.moment, -(g.moment + np.cross(g.point - gp.point, g.force)), atol=1e-10
    )
    par = model.parent
    for i in range(model.n_bodies):
        Rp = R[:, par[i]] if par[i] >= 0 else np.eye(3)
        pp = p[:, par[i]] if par[i] >= 0 else np.zeros(3)
        expected = pp + np.einsum("...ij,j->...i", Rp, model.bodies[i].position)
        np.testing.assert_allclose(gp.point[:, i], np.broadcast_to(expected, (3, 3)))
    assert gp.body_names[0] == "ground" or par[0] >= 0
    # expressed in the child body and in the parent body
    c = joint_reaction_loads(model, q, qd, qdd)  # child, in the child frame (default)
    np.testing.assert_allclose(c.force, np.einsum("nbji,nbj->nbi", R, g.force), atol=1e-10)
    np.testing.assert_allclose(c.point, np.einsum("nbji,nbj->nbi", R, g.point - p), atol=1e-12)
    pf = joint_reaction_loads(model, q, qd, qdd, frame="parent", joints=[model.joint_names[-1]])
    j = model.n_bodies - 1
    Rp = R[:, par[j]] if par[j] >= 0 else np.broadcast_to(np.eye(3), (3, 3, 3))
    np.testing.assert_allclose(pf.moment[:, 0], np.einsum("nji,nj->ni", Rp, g.moment[:, j]))
    assert pf.frames == (model.body_names[par[j]] if par[j] >= 0 else "ground",)
    labels = c.labels()
    assert len(labels) == 9 * model.n_bodies and labels[0].endswith("_fx")
    assert c.table().shape == (3, 9 * model.n_bodies)


def test_static_chain_closed_form():
    # two links hanging straight down at rest: the hip carries both weights
    m = Model()
    m.add_body("thigh", "ground", {"type": "revolute", "axis": [1, 0, 0]}, mass=8.0,
               com=[0, 0, -0.2])  # fmt: skip
    m.add_body("shank", "thigh", {"type": "revolute", "axis": [1, 0, 0]},
               position=[0, 0, -0.4], mass=3.0, com=[0, 0, -0.2])  # fmt: skip
    r = joint_reaction_loads(m, np.zeros(2), None, None, frame="ground")
    np.testing.assert_allclose(r.force[:, 2], [11 * 9.81, 3 * 9.81])
    np.testing.assert_allclose(r.moment, 0.0, atol=1e-12)
    # horizontal thigh: the hip moment holds both bodies
    q = np.array([np.pi / 2, -np.pi / 2])  # thigh forward, shank down again
    r = joint_reaction_loads(m, q, None, None, frame="ground")
    np.testing.assert_allclose(np.abs(r.moment[0, 0]), 9.81 * (8 * 0.2 + 3 * 0.4), rtol=1e-12)


def test_bad_arguments():
    rng = np.random.default_rng(5)
    model = random_model(3, rng=rng)
    q = np.zeros(model.nq)
    with pytest.raises(ModelError, match="joints"):
        joint_reaction_loads(model, q, None, None, joints=["nope"])
    with pytest.raises(DataError, match="joints"):
        joint_reaction_loads(model, q, None, None, joints=5)
    with pytest.raises(ModelError, match="frame"):
        joint_reaction_loads(model, q, None, None, frame="nope")
    with pytest.raises(DataError, match="on"):
        joint_reaction_loads(model, q, None, None, on="both")
    with pytest.raises(DataError, match="f_ext"):
        joint_reaction_loads(model, q, None, None, f_ext=np.zeros((2, 6)))
    with pytest.raises(ModelError, match="no muscles"):
        joint_reaction_loads(model, q, None, None, np.zeros(2))


def test_muscle_forces_act_through_their_moment_arms():
    from test_static_optimization import _arm_model, _arm_motion

    from ahbm.muscles import moment_arms, muscle_body_forces

    model = _arm_model()
    q, qd, qdd = _arm_motion(20)
    rng = np.random.default_rng(6)
    tension = rng.uniform(0.0, 500.0, (20, len(model.muscles)))
    fm = muscle_body_forces(model, q, tension)
    R = moment_arms(model, q)
    # Σ_b J_bᵀ f_b = Σ_m r_m F_m  (rnea subtracts the external loads' generalized forces)
    tau0 = rnea(model, q, qd, qdd)
    np.testing.assert_allclose(
        tau0 - rnea(model, q, qd, qdd, f_ext=fm), np.einsum("nmk,nm->nk", R, tension), atol=1e-9
    )
    # the joints transmit what the muscles do not: Sᵀ f_i = τ − Σ_m r_m F_m
    res = joint_reaction_loads(model, q, qd, qdd, tension, frame="ground")
    kin = forward_kinematics(model, q)
    np.testing.assert_allclose(
        _joint_generalized_forces(model, kin, res),
        tau0 - np.einsum("nmk,nm->nk", R, tension),
        atol=1e-9,
    )
    # a muscle between two bodies exerts no net force on the pair
    one = np.zeros_like(tension)
    one[:, 3] = 100.0  # brachialis: upper arm -> forearm
    f = muscle_body_forces(model, q, one)
    np.testing.assert_allclose(f.sum(axis=1), 0.0, atol=1e-10)
    assert np.all(np.linalg.norm(f[:, 0, 3:], axis=-1) > 99.0)


def test_muscle_body_forces_checks():
    from test_static_optimization import _arm_model

    from ahbm.muscles import muscle_body_forces

    model = _arm_model()
    with pytest.raises(DataError, match="muscle_forces"):
        muscle_body_forces(model, np.zeros(2), np.zeros(3))
    sub = muscle_body_forces(model, np.zeros(2), [10.0], muscles=["biceps"])
    assert sub.shape == (2, 6)


def test_wrapping_muscle_loads_the_wrap_body():
    # the triceps wraps over a cylinder at the elbow: Sᵀ f = τ − r F still holds
    import dataclasses

    from test_static_optimization import _arm_model, _arm_motion

    from ahbm.muscles import PathWrap, WrapObject, moment_arms, muscle_lengths

    model = _arm_model()
    plain = muscle_lengths(model, _arm_motion(30)[0])
    model.wrap_objects = [
        WrapObject("elbow", "upper", "cylinder", (0.3, -0.01, 0.0), np.eye(3), (0.012, 0.2))
    ]
    muscles = list(model.muscles)
    muscles[4] = dataclasses.replace(muscles[4], wraps=(PathWrap("elbow"),))
    model.muscles = muscles
    q, qd, qdd = _arm_motion(30)
    wrapped = muscle_lengths(model, q)
    assert (wrapped[:, 4] > plain[:, 4] + 1e-5).sum() >= 5  # the wrap is active in some frames
    tension = np.full((30, 5), 200.0)
    res = joint_reaction_loads(model, q, qd, qdd, tension, frame="ground")
    R = moment_arms(model, q)
    kin = forward_kinematics(model, q)
    np.testing.assert_allclose(
        _joint_generalized_forces(model, kin, res),
        rnea(model, q, qd, qdd) - np.einsum("nmk,nm->nk", R, tension),
        atol=1e-8,
    )
