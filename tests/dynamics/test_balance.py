"""Balance: ZMP, support polygons, stability margin, centroidal momentum, extrapolated COM.

References: the identity ḣ_G = A_G q̈ + Ȧ_G q̇ and finite differences of the
momentum; the centre of pressure of the ground reaction that inverse dynamics
(RNEA) of a floating-base model needs; Chung's (2009) eqs 4.13 and 7.31 typed
as printed; the static closed form; scipy's convex hull; rectangle distances;
the linear inverted pendulum for the extrapolated COM (the Pinocchio
cross-checks are in tests/peers/test_pinocchio_centroidal.py).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from sample_data import SHARED
from scipy.spatial import ConvexHull, QhullError

from ahbm.dynamics import (
    centroidal_momentum_bias,
    centroidal_momentum_matrix,
    centroidal_momentum_rate,
    extrapolated_com,
    inside_polygon,
    rnea,
    stability_margin,
    support_polygon,
    zmp,
    zmp_from_grf,
)
from ahbm.errors import DataError, ModelError
from ahbm.kinematics import (
    Model,
    center_of_mass,
    forward_kinematics,
    integrate_q,
    momentum,
    point_acceleration,
    random_model,
    random_q,
)

ROOT = Path(__file__).resolve().parents[2]
GAIT = SHARED / "c3d" / "gait-raw.c3d"
CHILD_TYPES = ["revolute", "prismatic", "universal", "euler", "spherical", "free_euler", "planar",
               "fixed", "free"]  # fmt: skip


def floating_model(rng, n_bodies, gravity=(0.0, 0.0, -9.81)):
    """A free-floating root with a random tree of every joint type below it."""
    model = Model("floating", gravity=gravity)
    for i in range(n_bodies):
        jtype = "free" if i == 0 else CHILD_TYPES[i % len(CHILD_TYPES)]
        joint = {"type": jtype}
        if jtype in ("revolute", "prismatic"):
            a = rng.normal(size=3)
            joint["axis"] = a / np.linalg.norm(a)
        elif jtype == "universal":
            joint["sequence"] = "XZ"
        elif jtype in ("euler", "free_euler"):
            joint["sequence"] = "ZXY"
        d = rng.uniform(0.05, 0.5, size=3)
        model.add_body(
            f"b{i}",
            -1 if i == 0 else int(rng.integers(0, i)),
            joint,
            position=rng.normal(size=3) * 0.3,
            mass=rng.uniform(0.5, 5.0),
            com=rng.normal(size=3) * 0.2,
            inertia=np.diag([d[0] + d[1], d[1] + d[2], d[0] + d[2]]),
        )
    return model


def random_states(model, rng, size=()):
    q = random_q(model, rng=rng, size=size)
    qd = rng.normal(size=np.shape(q)[:-1] + (model.nv,))
    qdd = rng.normal(size=qd.shape)
    return q, qd, qdd


# ----------------------------------------------------------------------------
# centroidal momentum
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_matrix_times_qd_is_momentum_and_rate_splits(seed):
    rng = np.random.default_rng(seed)
    model = random_model(6 + 3 * seed, rng=rng)
    q, qd, qdd = random_states(model, rng, size=(2, 3))
    kin = forward_kinematics(model, q, qd, qdd)
    A = centroidal_momentum_matrix(model, q)
    assert A.shape == (2, 3, 6, model.nv)
    np.testing.assert_allclose(np.einsum("...ij,...j->...i", A, qd), momentum(model, q, qd),
                               rtol=1e-12, atol=1e-12)  # fmt: skip
    rate = centroidal_momentum_rate(model, q, qd, qdd)
    split = np.einsum("...ij,...j->...i", A, qdd) + centroidal_momentum_bias(model, q, qd)
    np.testing.assert_allclose(rate, split, rtol=1e-11, atol=1e-11)
    # the same with a shared state, and with a state that has no accelerations
    np.testing.assert_array_equal(centroidal_momentum_matrix(model, None, kin=kin), A)
    np.testing.assert_allclose(centroidal_momentum_rate(model, None, None, None, kin=kin), rate,
                               rtol=1e-13, atol=1e-13)  # fmt: skip
    kin0 = forward_kinematics(model, q, qd)
    np.testing.assert_allclose(centroidal_momentum_rate(model, None, None, qdd, kin=kin0), rate,
                               rtol=1e-13, atol=1e-13)  # fmt: skip


@pytest.mark.parametrize("seed", range(3))
def test_rate_is_the_time_derivative_of_momentum(seed):
    """Central differences of h_G(q(t), q̇ + t q̈) along q(t) = q ⊕ q̇ t."""
    rng = np.random.default_rng(10 + seed)
    model = random_model(8, rng=rng, joint_types=CHILD_TYPES)
    q, qd, qdd = random_states(model, rng)
    dt = 1e-5
    h = [momentum(model, integrate_q(model, q, qd, s), qd + s * qdd) for s in (-dt, dt)]
    fd = (h[1] - h[0]) / (2 * dt)
    rate = centroidal_momentum_rate(model, q, qd, qdd)
    np.testing.assert_allclose(rate, fd, rtol=1e-6, atol=1e-6 * np.abs(fd).max())
    # the drift term alone: d/dt of A_G(q(t)) q̇ at constant q̇
    h = [momentum(model, integrate_q(model, q, qd, s), qd) for s in (-dt, dt)]
    fd = (h[1] - h[0]) / (2 * dt)
    np.testing.assert_allclose(centroidal_momentum_bias(model, q, qd), fd, rtol=1e-6,
                               atol=1e-6 * np.abs(fd).max())  # fmt: skip


def test_centroidal_errors():
    rng = np.random.default_rng(0)
    model = random_model(3, rng=rng)
    q, qd, qdd = random_states(model, rng)
    with pytest.raises(DataError, match="`qdd` is None"):
        centroidal_momentum_rate(model, q, qd, None)
    with pytest.raises(DataError, match="without accelerations"):
        centroidal_momentum_rate(model, None, None, None, kin=forward_kinematics(model, q, qd))
    with pytest.raises(DataError, match="without velocities"):
        centroidal_momentum_bias(model, None, None, kin=forward_kinematics(model, q))
    with pytest.raises(DataError, match="qdd"):
        centroidal_momentum_rate(model, q, qd, qdd[:-1])
    with pytest.raises(DataError, match="q"):
        centroidal_momentum_matrix(model, q[:-1])
    massless = Model("massless")
    massless.add_body("b", "ground", "spherical", mass=0.0)
    with pytest.raises(ModelError, match="zero total mass"):
        centroidal_momentum_matrix(massless, [0, 0, 0, 1.0])


# ----------------------------------------------------------------------------
# zero-moment point
# ----------------------------------------------------------------------------


def ground_reaction_from_rnea(model, q, qd, qdd):
    """World wrench [n_O; F] on the free root that zeroes the floating-base residual.

    With the root's world motion columns S (6 × 6), the residual is
    ``τ_root = Sᵀ W`` (the wrench W the ground must apply instead of a root
    actuator), so ``W = S⁻ᵀ τ_root``.
    """
    tau = rnea(model, q, qd, qdd)
    S = forward_kinematics(model, q).world_columns[..., :, :6]
    W = np.linalg.solve(np.swapaxes(S, -1, -2), tau[..., :6, None])[..., 0]
    return W


@pytest.mark.parametrize("seed", range(4))
def test_zmp_is_the_cop_of_the_floating_base_reaction(seed):
    rng = np.random.default_rng(100 + seed)
    g = rng.normal(size=3)
    g = -9.81 * (g / np.linalg.norm(g) + [0, 0, 2.0]) / 2.0  # mostly down, tilted
    model = floating_model(rng, 7 + seed, gravity=g)
    q, qd, qdd = random_states(model, rng, size=(5,))
    qd *= 0.3
    qdd *= 0.3
    normal = -g / np.linalg.norm(g) + rng.normal(size=3) * 0.1  # a tilted ground
    point = rng.normal(size=3) * 0.2
    W = ground_reaction_from_rnea(model, q, qd, qdd)
    # the reaction applied to the root makes the base residual vanish
    f_ext = np.zeros((5, model.n_bodies, 6))
    f_ext[:, 0] = W
    resid = rnea(model, q, qd, qdd, f_ext=f_ext)[:, :6]
    assert np.abs(resid).max() < 1e-10 * np.abs(W).max()
    cop = zmp_from_grf(W[:, 3:], W[:, :3], ground_normal=normal, ground_point=point,
                       threshold=-np.inf)  # fmt: skip
    d = zmp(model, q, qd, qdd, ground_normal=normal, ground_point=point, threshold=-np.inf)
    np.testing.assert_allclose(d, cop, rtol=1e-10, atol=1e-10)
    n = normal / np.linalg.norm(normal)
    np.testing.assert_allclose((d - point) @ n, 0.0, atol=1e-12)


def test_zmp_human_model_standing_on_the_floor():
    from ahbm.kinematics import neutral_q
    from ahbm.models import human15

    rng = np.random.default_rng(3)
    model = human15()
    q = np.tile(neutral_q(model), (4, 1))
    q[:, 2] = 1.0
    q[:, 7:] += rng.normal(size=(4, model.nq - 7)) * 0.2
    qd = rng.normal(size=(4, model.nv)) * 0.5
    qdd = rng.normal(size=(4, model.nv)) * 2.0
    W = ground_reaction_from_rnea(model, q, qd, qdd)
    kin = forward_kinematics(model, q, qd, qdd)
    d = zmp(model, None, None, None, kin=kin)
    np.testing.assert_allclose(d, zmp_from_grf(W[:, 3:], W[:, :3]), rtol=1e-10, atol=1e-10)
    assert np.all(d[:, 2] == 0.0)


def test_static_zmp_is_the_com_projected_along_gravity():
    rng = np.random.default_rng(4)
    model = floating_model(rng, 6, gravity=(0.5, -0.3, -9.7))
    q = random_q(model, rng=rng, size=(3,))
    zero = np.zeros((3, model.nv))
    c = center_of_mass(model, q)
    g = model.gravity
    # flat ground through the origin, normal +z
    d = zmp(model, q, zero, zero)
    np.testing.assert_allclose(d, c - np.outer(c[:, 2], g / g[2]), rtol=1e-12, atol=1e-12)
    # gravity along the normal: the ground projection of the COM
    model.gravity = (0.0, 0.0, -9.81)
    d = zmp(model, q, zero, zero, ground_point=(0, 0, -0.3))
    np.testing.assert_allclose(d, np.c_[c[:, :2], np.full(3, -0.3)], rtol=1e-12, atol=1e-12)
    # a tilted ground: the line through the COM along g meets the plane
    n = np.array([0.2, -0.1, 1.0])
    p0 = np.array([0.1, 0.2, -0.5])
    d = zmp(model, q, zero, zero, ground_normal=n, ground_point=p0)
    s = -((c - p0) @ n) / (model.gravity @ n)
    np.testing.assert_allclose(d, c + s[:, None] * model.gravity, rtol=1e-12, atol=1e-12)


def chung_4_13(m, r, a, Hd, n, g):
    """Chung (2009) eq. 4.13b-d as printed (gravity (0, −g, 0), ground through O)."""
    nx, ny, nz = n / np.linalg.norm(n)
    x, y, z = r[..., 0], r[..., 1], r[..., 2]
    xa, ya, za = a[..., 0], a[..., 1], a[..., 2]
    den = (m * (-xa * nx - ya * ny - g * ny - za * nz)).sum(-1)
    xs = (m * (-ya * x * ny - g * x * ny - za * x * nz + xa * y * ny + xa * z * nz)).sum(-1)
    ys = m * (ya * nx * x + g * nx * x - xa * y * nx - za * y * nz + ya * z * nz + g * nz * z)
    zs = (m * (-xa * z * nx - g * z * ny - ya * z * ny + za * x * nx + za * y * ny)).sum(-1)
    xs = xs - Hd[..., 2] * ny + Hd[..., 1] * nz
    ys = ys.sum(-1) + Hd[..., 2] * nx - Hd[..., 0] * nz
    zs = zs - Hd[..., 1] * nx + Hd[..., 0] * ny
    return np.stack([xs, ys, zs], axis=-1) / den[..., None]


def segment_terms(model, q, qd, qdd):
    """COM positions and accelerations of the segments, and Σ Ḣ_i (eq. 4.15), world."""
    kin = forward_kinematics(model, q, qd, qdd)
    r = np.stack([kin.positions[..., i, :] + kin.rotations[..., i, :, :] @ model.coms[i]
                  for i in range(model.n_bodies)], axis=-2)  # fmt: skip
    a = np.stack([point_acceleration(model, None, None, None, i, model.coms[i], kin=kin)
                  for i in range(model.n_bodies)], axis=-2)  # fmt: skip
    w, wd = kin.velocities[..., :3], kin.accelerations[..., :3]  # body coordinates
    Jw = np.einsum("bij,...bj->...bi", model.inertias, w)
    Hd_body = np.einsum("bij,...bj->...bi", model.inertias, wd) + np.cross(w, Jw)
    Hd = np.einsum("...bij,...bj->...i", kin.rotations, Hd_body)  # Σ R_i (J ω̇ + ω × J ω)
    return r, a, Hd


def test_zmp_equals_chung_eq_4_13_with_a_general_normal():
    rng = np.random.default_rng(5)
    model = floating_model(rng, 6, gravity=(0.0, -9.81, 0.0))
    q, qd, qdd = random_states(model, rng, size=(4,))
    qd *= 0.3
    qdd *= 0.3
    n = np.array([0.1, 1.0, -0.2])
    r, a, Hd = segment_terms(model, q, qd, qdd)
    ref = chung_4_13(model.masses, r, a, Hd, n, 9.81)
    d = zmp(model, q, qd, qdd, ground_normal=n, threshold=-np.inf)
    np.testing.assert_allclose(d, ref, rtol=1e-10, atol=1e-10)


def test_zmp_equals_chung_eq_7_31_on_a_two_body_case():
    """A cart (prismatic along x) carrying an inverted pendulum (revolute about z); y up.

    Positions, accelerations and the pendulum's spin rate I_zz θ̈ written by hand;
    Chung's eq. 7.31 (ground = x-z plane) with Ḣ = Σ Ḣ_i (eq. 4.15).
    """
    g, m1, m2, l, izz, h = 9.81, 3.0, 2.0, 0.6, 0.08, 0.4
    z1, z2 = 0.1, -0.05
    model = Model("cart-pendulum", gravity=(0.0, -g, 0.0))
    model.add_body(
        "cart",
        "ground",
        {"type": "prismatic", "axis": [1, 0, 0]},
        position=[0, h, 0],
        mass=m1,
        com=[0, 0, z1],
        inertia=np.eye(3) * 0.01,
    )
    model.add_body("pole", "cart", {"type": "revolute", "axis": [0, 0, 1]},
                   mass=m2, com=[0, l, z2], inertia=np.diag([0.07, 0.05, izz]))  # fmt: skip
    rng = np.random.default_rng(6)
    s, th = rng.normal(size=(2, 7))
    sd, thd, sdd, thdd = rng.normal(size=(4, 7))
    q = np.c_[s, th]
    # hand kinematics: COM 2 = (s − l sin θ, h + l cos θ, z2)
    x = np.c_[s, s - l * np.sin(th)]
    y = np.c_[np.full(7, h), h + l * np.cos(th)]
    z = np.c_[np.full(7, z1), np.full(7, z2)]
    xa = np.c_[sdd, sdd - l * (thdd * np.cos(th) - thd**2 * np.sin(th))]
    ya = np.c_[np.zeros(7), -l * (thdd * np.sin(th) + thd**2 * np.cos(th))]
    za = np.zeros((7, 2))
    Hx, Hz = 0.0, izz * thdd
    mm = np.array([m1, m2])
    den = (mm * (-ya - g)).sum(-1)
    z_zmp = ((mm * (-ya - g) * z + mm * za * y).sum(-1) + Hx) / den  # eq. 7.31a
    x_zmp = ((mm * (-ya - g) * x + mm * xa * y).sum(-1) - Hz) / den  # eq. 7.31b
    d = zmp(model, q, np.c_[sd, thd], np.c_[sdd, thdd], ground_normal=(0, 1, 0),
            threshold=-np.inf)  # fmt: skip
    np.testing.assert_allclose(d[:, 0], x_zmp, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(d[:, 2], z_zmp, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(d[:, 1], 0.0, atol=1e-15)


def test_zmp_threshold_and_errors():
    rng = np.random.default_rng(7)
    model = floating_model(rng, 3)
    q = random_q(model, rng=rng)
    zero = np.zeros(model.nv)
    up = np.zeros(model.nv)
    up[2] = -9.81  # free fall: no ground reaction
    assert np.isnan(zmp(model, q, zero, up)).all()
    assert np.isfinite(zmp(model, q, zero, zero)).all()
    # a ground above, facing down, would have to pull
    assert np.isnan(zmp(model, q, zero, zero, ground_normal=(0, 0, -1))).all()
    with pytest.raises(DataError, match="ground_normal"):
        zmp(model, q, zero, zero, ground_normal=(0, 0, 0))
    with pytest.raises(DataError, match="ground_point"):
        zmp(model, q, zero, zero, ground_point=(0, 0))
    with pytest.raises(DataError, match="threshold"):
        zmp(model, q, zero, zero, threshold="high")
    with pytest.raises(DataError, match="qdd"):
        zmp(model, q, zero, zero[:-1])


def test_zmp_from_grf_closed_forms():
    rng = np.random.default_rng(8)
    r = np.c_[rng.normal(size=(6, 2)), np.zeros(6)]  # points of the floor
    F = np.c_[rng.normal(size=(6, 2)) * 50, rng.uniform(100, 900, 6)]
    T = rng.normal(size=6)  # free moments about the normal
    M = np.cross(r, F) + np.c_[np.zeros((6, 2)), T]
    np.testing.assert_allclose(zmp_from_grf(F, M), r, atol=1e-13)
    # moment given about another point
    p = np.array([0.4, -0.2, 0.0])
    np.testing.assert_allclose(zmp_from_grf(F, M - np.cross(p, F), origin=p), r, atol=1e-13)
    # a tilted ground: force applied at a point of the plane plus a moment along n
    n = np.array([0.3, 0.1, 1.0])
    n /= np.linalg.norm(n)
    p0 = np.array([0.1, 0.2, 0.3])
    e = np.cross(n, [1.0, 0, 0])
    rr = p0 + rng.normal(size=(6, 1)) * e + rng.normal(size=(6, 1)) * np.cross(n, e)
    M = np.cross(rr, F) + T[:, None] * n
    got = zmp_from_grf(F, M, ground_normal=n, ground_point=p0)
    np.testing.assert_allclose(got, rr, atol=1e-12)
    # below the threshold and NaN in: NaN out
    F2 = F.copy()
    F2[0, 2] = 5.0
    F2[1] = np.nan
    out = zmp_from_grf(F2, M)
    assert np.isnan(out[:2]).all() and np.isfinite(out[2:]).all()
    with pytest.raises(DataError, match="force"):
        zmp_from_grf(F[:, :2], M)
    with pytest.raises(DataError, match="do not broadcast"):
        zmp_from_grf(F, M[:4])


@pytest.mark.skipif(not GAIT.is_file(), reason="shared data folder ../shared/data not found")
def test_zmp_from_grf_is_the_force_plate_cop():
    from ahbm.io import read_c3d

    trial = read_c3d(GAIT)
    for plate in trial.force_plates:
        d = zmp_from_grf(plate.force, plate.moment, origin=plate.origin)
        ok = ~np.isnan(plate.cop).any(-1)
        assert ok.sum() > 100
        np.testing.assert_allclose(d[ok], plate.cop[ok], atol=1e-9)
        assert np.isnan(d[~ok]).all()


# ----------------------------------------------------------------------------
# support polygons
# ----------------------------------------------------------------------------


def signed_area(poly2):
    x, y = poly2[:, 0], poly2[:, 1]
    return 0.5 * np.sum(x * np.roll(y, -1) - y * np.roll(x, -1))


def test_support_polygon_matches_scipy_hull(monkeypatch):
    rng = np.random.default_rng(9)
    pts = rng.normal(size=(40, 9, 3))
    pts[::3, 2] = np.nan  # missing points
    pts[::5, 7:] = np.nan
    poly = support_polygon(pts)
    assert poly.shape == pts.shape
    # frames are processed in chunks of bounded size; any chunking gives the same result
    monkeypatch.setattr("ahbm.dynamics.balance._HULL_CHUNK", 3 * 9**3)
    np.testing.assert_array_equal(support_polygon(pts), poly)
    for k in range(40):
        ok = ~np.isnan(pts[k]).any(-1)
        hull = ConvexHull(pts[k, ok, :2])
        ref = pts[k, ok, :2][hull.vertices]  # counter-clockwise in 2-D
        got = poly[k][~np.isnan(poly[k]).any(-1)]
        assert len(got) == len(ref)
        assert np.all(got[:, 2] == 0.0)
        assert signed_area(got[:, :2]) > 0
        # same cycle, possibly another start
        start = int(np.argmin(np.linalg.norm(ref - got[0, :2], axis=-1)))
        np.testing.assert_allclose(np.roll(ref, -start, axis=0), got[:, :2], atol=1e-14)
        assert np.all(np.isnan(poly[k, len(ref) :]))


def test_support_polygon_of_lattice_points():
    """Many collinear and repeated points: only the extreme points are vertices."""
    rng = np.random.default_rng(14)
    pts = np.concatenate([rng.integers(0, 4, size=(60, 12, 2)) * 0.05, np.zeros((60, 12, 1))], -1)
    poly = support_polygon(pts)
    for k in range(60):
        try:
            hull = ConvexHull(pts[k, :, :2])
        except QhullError:  # all collinear: scipy has no 2-D hull
            continue
        got = poly[k][~np.isnan(poly[k]).any(-1)]
        assert len(got) == len(hull.vertices), k
        assert signed_area(got[:, :2]) > 0
        np.testing.assert_allclose(signed_area(got[:, :2]), hull.volume, rtol=1e-12)


def test_support_polygon_degenerate_cases_and_batches():
    sq = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], dtype=float)
    extra = np.array([[0.5, 0, 0], [1, 1, 0], [0.5, 0.5, 0.3]])  # on an edge, repeated, inside
    poly = support_polygon(np.r_[extra, sq[::-1]])
    np.testing.assert_allclose(poly[:4], sq, atol=1e-15)
    assert np.isnan(poly[4:]).all()
    # collinear points: a segment; one point; none
    line = np.array([[0, 0, 0], [2, 0, 0], [1, 0, 0], [np.nan] * 3])
    got = support_polygon(line)
    assert (~np.isnan(got).any(-1)).sum() == 2
    assert {tuple(got[0]), tuple(got[1])} == {(0.0, 0.0, 0.0), (2.0, 0.0, 0.0)}
    one = support_polygon([[1.0, 2.0, 3.0], [np.nan] * 3])
    np.testing.assert_array_equal(one[0], [1.0, 2.0, 0.0])
    assert np.isnan(support_polygon(np.full((3, 3), np.nan))).all()
    assert support_polygon(np.zeros((5, 0, 3))).shape == (5, 0, 3)
    assert support_polygon(np.zeros((0, 4, 3))).shape == (0, 4, 3)
    # batch axes and a tilted ground: vertices lie on the plane, counter-clockwise about n
    rng = np.random.default_rng(10)
    n = np.array([0.2, -0.3, 1.0])
    p0 = np.array([0.0, 0.0, 0.5])
    pts = rng.normal(size=(2, 3, 6, 3))
    poly = support_polygon(pts, ground_normal=n, ground_point=p0)
    nu = n / np.linalg.norm(n)
    assert poly.shape == (2, 3, 6, 3)
    ok = ~np.isnan(poly).any(-1)
    np.testing.assert_allclose(((poly - p0) @ nu)[ok], 0.0, atol=1e-14)
    for idx in np.ndindex(2, 3):
        v = poly[idx][ok[idx]]
        c = np.cross(v - v.mean(0), np.roll(v, -1, axis=0) - v.mean(0)) @ nu
        assert np.all(c > 0)
    with pytest.raises(DataError, match="n_points, 3"):
        support_polygon(np.zeros((4, 2)))
    with pytest.raises(DataError, match="inf"):
        support_polygon([[0, 0, np.inf]])


def rectangle_margin(x, y, a, b):
    inside = (0 <= x) & (x <= a) & (0 <= y) & (y <= b)
    din = np.minimum.reduce([x, a - x, y, b - y])
    dx = np.maximum.reduce([-x, np.zeros_like(x), x - a])
    dy = np.maximum.reduce([-y, np.zeros_like(y), y - b])
    return np.where(inside, din, -np.hypot(dx, dy))


def test_stability_margin_of_a_rectangle():
    a, b = 0.25, 0.1  # a foot-sized rectangle
    rect = np.array([[0, 0, 0], [a, 0, 0], [a, b, 0], [0, b, 0], [np.nan] * 3])
    rng = np.random.default_rng(11)
    p = np.c_[rng.uniform(-0.2, 0.45, 500), rng.uniform(-0.2, 0.3, 500), rng.normal(size=500)]
    want = rectangle_margin(p[:, 0], p[:, 1], a, b)
    np.testing.assert_allclose(stability_margin(p, rect), want, atol=1e-15)
    np.testing.assert_array_equal(inside_polygon(p, rect), want >= 0)
    # clockwise order gives the same answer
    np.testing.assert_allclose(stability_margin(p, rect[[3, 2, 1, 0, 4]]), want, atol=1e-15)
    # boundary points are inside, with zero margin
    edge = np.array([[a / 2, 0, 0], [a, b, 0]])
    np.testing.assert_allclose(stability_margin(edge, rect), 0.0, atol=1e-15)
    assert inside_polygon(edge, rect).all()


def test_inside_polygon_is_chungs_edge_test_on_random_hulls():
    rng = np.random.default_rng(12)
    pts = rng.normal(size=(200, 6, 3))
    poly = support_polygon(pts)
    D = np.c_[rng.normal(size=(200, 2)) * 1.2, np.zeros(200)]
    got = inside_polygon(D, poly)
    margin = stability_margin(D, poly)
    for k in range(200):
        v = poly[k][~np.isnan(poly[k]).any(-1)]
        L = np.roll(v, -1, axis=0) - v
        d = D[k] - v
        n_k = np.cross(L, d)[:, 2]  # eq. 7.32: all positive inside
        assert got[k] == bool(np.all(n_k >= 0))
        # distance to the nearest edge segment, by brute force
        t = np.linspace(0, 1, 2001)[:, None, None]
        samples = (v + t * L).reshape(-1, 3)
        dist = np.linalg.norm(samples - D[k], axis=-1).min()
        assert abs(abs(margin[k]) - dist) < 1e-3 * np.linalg.norm(L, axis=-1).max()
        assert (margin[k] >= 0) == got[k]
    assert 40 < got.sum() < 160


def test_margin_of_degenerate_polygons_and_missing_data():
    seg = np.array([[0, 0, 0], [1, 0, 0], [np.nan] * 3])
    np.testing.assert_allclose(stability_margin([[0.5, 0.2, 0], [2, 0, 0]], seg), [-0.2, -1])
    assert inside_polygon([0.5, 0.0, 0.0], seg)
    assert np.isnan(stability_margin([0.5, 0.2, 0.0], np.full((3, 3), np.nan)))
    assert np.isnan(stability_margin([np.nan, 0.2, 0.0], seg))
    assert not inside_polygon([np.nan, 0.2, 0.0], seg)
    # broadcasting: one polygon, many points; many polygons, one point
    sq = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], dtype=float)
    assert stability_margin(np.zeros((4, 5, 3)) + 0.5, sq).shape == (4, 5)
    assert stability_margin([0.5, 0.5, 0], np.broadcast_to(sq, (7, 4, 3))).shape == (7,)
    with pytest.raises(DataError, match="NaN row before a vertex"):
        stability_margin([0, 0, 0], np.r_[[[np.nan] * 3], sq])
    with pytest.raises(DataError, match="do not broadcast"):
        stability_margin(np.zeros((3, 3)), np.zeros((2, 4, 3)))
    with pytest.raises(DataError, match="polygon"):
        inside_polygon([0, 0, 0], [0, 0, 0])


# ----------------------------------------------------------------------------
# extrapolated centre of mass
# ----------------------------------------------------------------------------


def test_extrapolated_com_stops_the_linear_inverted_pendulum():
    """With the COP at XcoM, x(t) = u + (x0 − u) cosh ωt + v0/ω sinh ωt tends to u."""
    rng = np.random.default_rng(13)
    c = np.c_[rng.normal(size=(5, 2)) * 0.1, np.full(5, 0.95)]
    v = np.c_[rng.normal(size=(5, 2)), np.zeros(5)]
    ell = 0.95
    u = extrapolated_com(c, v, leg_length=ell)
    w = np.sqrt(9.81 / ell)
    t = 3.0
    x = u + (c - u) * np.cosh(w * t) + v / w * np.sinh(w * t)
    np.testing.assert_allclose(x[:, :2], u[:, :2], atol=1e-4)  # ~ e^(−ωt)
    np.testing.assert_allclose(u[:, 2], 0.0)
    np.testing.assert_allclose(extrapolated_com(c, v, omega0=w), u, rtol=1e-15)
    # per-frame pendulum lengths and a tilted ground
    lens = rng.uniform(0.8, 1.0, 5)
    n = np.array([0.0, 0.2, 1.0])
    got = extrapolated_com(
        c, v, leg_length=lens, ground_normal=n, ground_point=(0, 0, 0.1), gravity=(0.0, 9.81, 0.0)
    )  # only its magnitude matters
    x = c + v / np.sqrt(9.81 / lens)[:, None]
    nu = n / np.linalg.norm(n)
    np.testing.assert_allclose(got, x - ((x - [0, 0, 0.1]) @ nu)[:, None] * nu, rtol=1e-14)


def test_extrapolated_com_errors():
    with pytest.raises(DataError, match="exactly one"):
        extrapolated_com([0, 0, 1], [1, 0, 0])
    with pytest.raises(DataError, match="exactly one"):
        extrapolated_com([0, 0, 1], [1, 0, 0], leg_length=1.0, omega0=3.0)
    with pytest.raises(DataError, match="leg_length"):
        extrapolated_com([0, 0, 1], [1, 0, 0], leg_length=-1.0)
    with pytest.raises(DataError, match="omega0"):
        extrapolated_com([0, 0, 1], [1, 0, 0], omega0=0.0)
    with pytest.raises(DataError, match="gravity"):
        extrapolated_com([0, 0, 1], [1, 0, 0], leg_length=1.0, gravity=-9.81)
    with pytest.raises(DataError, match="gravity"):
        extrapolated_com([0, 0, 1], [1, 0, 0], leg_length=1.0, gravity=(0, 0, 0))
    with pytest.raises(DataError, match="com_velocity"):
        extrapolated_com([0, 0, 1], [1, 0], omega0=3.0)


# ----------------------------------------------------------------------------
# the example
# ----------------------------------------------------------------------------


@pytest.mark.skipif(not GAIT.is_file(), reason="shared data folder ../shared/data not found")
def test_zmp_walking_example(tmp_path):
    spec = importlib.util.spec_from_file_location(
        "ahbm_example_zmp_walking", ROOT / "examples" / "zmp_walking.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    numbers = module.run(tmp_path, quick=True)
    assert (tmp_path / "zmp_walking.png").stat().st_size > 1000
    # the ZMP of the net reaction equals a plate's COP in single support
    assert numbers["max_single_support_zmp_cop_difference"] < 1e-9
    assert numbers["frames_with_zmp"] > 40
    # the ZMP of the plates lies in the estimated soles of the feet on them
    assert numbers["fraction_inside"] > 0.9
    assert numbers["median_margin"] > 0.0
