"""ahbm.muscles.wrapping: closed forms, geometric identities, OpenSim's rules, derivatives.

OpenSim's own numbers are compared in tests/peers/test_opensim_wrapping.py.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from ahbm.errors import AhbmError, AhbmWarning, DataError
from ahbm.muscles import WrapResult, wrap_length_gradient, wrap_path_segment

R = 0.05
CYL = (0.04, 1.0)
ELL = (0.04, 0.06, 0.09)


def _random_segments(rng, n, size, spread=0.3):
    """Segments from points around an object (size m) to points roughly opposite."""
    p = rng.normal(size=(n, 3))
    p *= rng.uniform(1.5, 3.0, (n, 1)) * size / np.linalg.norm(p, axis=1)[:, None]
    s = -p * rng.uniform(0.6, 1.4, (n, 1)) + rng.normal(0, spread * size, (n, 3))
    return p, s


def _rotation(rng):
    q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    return q * np.sign(np.linalg.det(q))


def _planar_closed_form(d, e, radius):
    """Wrapped length of p=(-d, e), s=(d, e) over a circle of ``radius`` (0 < e < radius)."""
    D = np.hypot(d, e)
    alpha = np.arctan2(e, d)
    arc = radius * (np.pi - 2 * alpha - 2 * np.arccos(radius / D))
    return 2 * np.sqrt(D**2 - radius**2) + arc, arc


# --------------------------------------------------------------------------- sphere


def test_sphere_closed_form_any_orientation_and_batch_shape():
    rng = np.random.default_rng(0)
    d = rng.uniform(0.06, 0.2, (2, 5))
    e = rng.uniform(0.001, 0.045, (2, 5))
    z = np.zeros_like(d)
    p = np.stack([-d, e, z], axis=-1)
    s = np.stack([d, e, z], axis=-1)
    Q = _rotation(rng)  # the sphere is round: turning the segment changes nothing
    r = wrap_path_segment("sphere", (R,), "all", p @ Q.T, s @ Q.T)
    assert isinstance(r, WrapResult) and r.length.shape == (2, 5) and r.t1.shape == (2, 5, 3)
    length, arc = _planar_closed_form(d, e, R)
    assert r.active.all()
    np.testing.assert_allclose(r.length, length, rtol=0, atol=1e-15)
    np.testing.assert_allclose(r.arc_length, arc, rtol=0, atol=1e-15)
    # tangent points in the plane of the segment, on the side of the segment
    t1 = r.t1 @ Q
    np.testing.assert_allclose(t1[..., 2], 0, atol=1e-15)
    assert (t1[..., 1] > 0).all()


def test_sphere_identities_tangency_great_circle_and_shortest_path():
    rng = np.random.default_rng(1)
    p, s = _random_segments(rng, 400, R)
    r = wrap_path_segment("sphere", (R,), "all", p, s)
    a = r.active
    assert 150 < a.sum() < 400
    t1, t2, pa, sa = r.t1[a], r.t2[a], p[a], s[a]
    np.testing.assert_allclose(np.linalg.norm(t1, axis=1), R, atol=1e-15)
    np.testing.assert_allclose(np.linalg.norm(t2, axis=1), R, atol=1e-15)
    # the straight parts are tangent: the surface normal is perpendicular to them
    u1 = (pa - t1) / np.linalg.norm(pa - t1, axis=1)[:, None]
    u2 = (sa - t2) / np.linalg.norm(sa - t2, axis=1)[:, None]
    np.testing.assert_allclose(np.sum(u1 * t1, 1) / R, 0, atol=1e-13)
    np.testing.assert_allclose(np.sum(u2 * t2, 1) / R, 0, atol=1e-13)
    # the arc is the great circle between the tangent points
    ang = np.arccos(np.clip(np.sum(t1 * t2, 1) / R**2, -1, 1))
    np.testing.assert_allclose(r.arc_length[a], R * ang, atol=1e-14)
    np.testing.assert_allclose(np.linalg.det(np.stack([pa, sa, t1], 1)) / R**3, 0, atol=1e-10)

    def path_length(q1):
        q1 = R * q1 / np.linalg.norm(q1, axis=1)[:, None]
        g = np.arccos(np.clip(np.sum(q1 * t2, 1) / R**2, -1, 1))
        return np.linalg.norm(pa - q1, axis=1) + R * g + np.linalg.norm(sa - t2, axis=1)

    L0 = path_length(t1)
    np.testing.assert_allclose(L0, r.length[a], atol=1e-15)
    # moving t1 over the surface in any direction does not shorten the path
    for k in range(3):
        tangent = np.cross(t1, np.eye(3)[k])
        tangent /= np.linalg.norm(tangent, axis=1)[:, None]
        h = 1e-6
        slope = (path_length(t1 + h * tangent) - path_length(t1 - h * tangent)) / (2 * h)
        np.testing.assert_allclose(slope, 0, atol=1e-7)
    # and leaving the plane of the segment lengthens it (a minimum, not a saddle)
    normal = np.cross(pa, sa)
    normal /= np.linalg.norm(normal, axis=1)[:, None]
    assert (path_length(t1 + 1e-3 * normal) > L0).all()
    assert (path_length(t1 - 1e-3 * normal) > L0).all()


def test_sphere_quadrant_takes_the_allowed_side():
    p, s = np.array([-0.1, -0.01, 0.0]), np.array([0.1, -0.01, 0.0])
    free = wrap_path_segment("sphere", (R,), "all", p, s)
    same = wrap_path_segment("sphere", (R,), "-y", p, s)  # the free wrap is on -y already
    forced = wrap_path_segment("sphere", (R,), "+y", p, s)
    np.testing.assert_allclose(same.length, free.length, atol=1e-16)
    assert free.t1[1] < 0 and forced.t1[1] > 0 and forced.t2[1] > 0
    D, alpha = np.hypot(0.1, 0.01), np.arctan(0.1)
    np.testing.assert_allclose(
        forced.arc_length, R * (np.pi + 2 * alpha - 2 * np.arccos(R / D)), atol=1e-15
    )
    # only the constrained sphere reports OpenSim's "mandatory" wrap
    assert same.mandatory and not free.mandatory and not forced.mandatory


# --------------------------------------------------------------------------- cylinder


def test_cylinder_closed_form_at_one_height():
    rng = np.random.default_rng(2)
    d = rng.uniform(0.05, 0.2, 20)
    e = rng.uniform(0.001, 0.035, 20)
    z0 = rng.uniform(-0.4, 0.4, 20)
    p = np.stack([-d, e, z0], -1)
    s = np.stack([d, e, z0], -1)
    turn = rng.uniform(-np.pi, np.pi, 20)  # about the axis changes nothing
    c, sn = np.cos(turn), np.sin(turn)
    Rz = np.stack(
        [
            np.stack([c, -sn, 0 * c], -1),
            np.stack([sn, c, 0 * c], -1),
            np.tile([0, 0, 1.0], (20, 1)),
        ],
        -2,
    )
    r = wrap_path_segment(
        "cylinder", CYL, "all", np.einsum("nij,nj->ni", Rz, p), np.einsum("nij,nj->ni", Rz, s)
    )
    length, arc = _planar_closed_form(d, e, CYL[0])
    assert r.active.all() and r.mandatory.all()
    np.testing.assert_allclose(r.length, length, atol=1e-15)
    np.testing.assert_allclose(r.arc_length, arc, atol=1e-15)
    np.testing.assert_allclose(r.t1[:, 2], z0, atol=1e-15)
    # at one height OpenSim's tangent points are the shortest path's
    t1, t2 = r.t1, r.t2
    rad = CYL[0]

    def path_length(q1):
        th = np.arccos(np.clip(np.sum(q1[:, :2] * t2[:, :2], 1) / rad**2, -1, 1))
        helix = np.hypot(rad * th, t2[:, 2] - q1[:, 2])
        return np.linalg.norm(p_rot - q1, axis=1) + helix + np.linalg.norm(s_rot - t2, axis=1)

    p_rot = np.einsum("nij,nj->ni", Rz, p)
    s_rot = np.einsum("nij,nj->ni", Rz, s)
    around = np.stack([-t1[:, 1], t1[:, 0], 0 * t1[:, 0]], -1) / rad
    for direction in (around, np.tile([0, 0, 1.0], (20, 1))):
        h = 1e-6
        q_plus, q_minus = t1 + h * direction, t1 - h * direction
        for q in (q_plus, q_minus):
            q[:, :2] *= rad / np.linalg.norm(q[:, :2], axis=1)[:, None]
        slope = (path_length(q_plus) - path_length(q_minus)) / (2 * h)
        np.testing.assert_allclose(slope, 0, atol=1e-7)


@pytest.mark.parametrize("quadrant", ["all", "+x", "-y", "+z"])
@pytest.mark.parametrize("single_wrap", [True, False])
def test_cylinder_helix_and_tangency(quadrant, single_wrap):
    rng = np.random.default_rng(3)
    p, s = _random_segments(rng, 300, CYL[0])
    r = wrap_path_segment("cylinder", CYL, quadrant, p, s, single_wrap=single_wrap)
    a = r.active
    assert a.sum() > 60
    t1, t2 = r.t1[a], r.t2[a]
    rad = CYL[0]
    np.testing.assert_allclose(np.linalg.norm(t1[:, :2], axis=1), rad, atol=1e-15)
    np.testing.assert_allclose(np.linalg.norm(t2[:, :2], axis=1), rad, atol=1e-15)
    # the straight parts touch the surface: the radial normal is perpendicular to them
    n1 = t1 * [1, 1, 0] / rad
    n2 = t2 * [1, 1, 0] / rad
    u1 = (p[a] - t1) / np.linalg.norm(p[a] - t1, axis=1)[:, None]
    u2 = (s[a] - t2) / np.linalg.norm(s[a] - t2, axis=1)[:, None]
    np.testing.assert_allclose(np.sum(u1 * n1, 1), 0, atol=1e-12)
    np.testing.assert_allclose(np.sum(u2 * n2, 1), 0, atol=1e-12)
    # the arc is a helix: sqrt((radius * turn)^2 + rise^2)
    turn = np.arctan2(np.cross(n1, n2)[:, 2], np.sum(n1 * n2, 1))
    arc = r.arc_length[a]
    long_way = arc > np.hypot(rad * np.pi, t2[:, 2] - t1[:, 2])
    turn = np.where(long_way, 2 * np.pi - turn, turn)
    np.testing.assert_allclose(arc, np.hypot(rad * turn, t2[:, 2] - t1[:, 2]), atol=1e-14)
    if quadrant == "all":
        assert not long_way.any()


def test_cylinder_length_limits():
    p, s = np.array([-0.1, 0.01, 0.2]), np.array([0.1, 0.01, 0.2])
    short = wrap_path_segment("cylinder", (0.04, 0.3), "all", p, s)  # both tangents above
    long = wrap_path_segment("cylinder", (0.04, 0.5), "all", p, s)
    assert not short.active and long.active
    np.testing.assert_allclose(short.length, 0.2, atol=1e-16)
    # one tangent point beyond the end still wraps
    one = wrap_path_segment("cylinder", (0.04, 0.3), "all", p - [0, 0, 0.2], s + [0, 0, 0.1])
    assert one.active and abs(one.t2[2]) > 0.15 > abs(one.t1[2])


def test_cylinder_quadrant_wraps_the_allowed_side():
    p, s = np.array([-0.1, -0.01, 0.0]), np.array([0.1, -0.01, 0.0])
    free = wrap_path_segment("cylinder", CYL, "all", p, s)
    forced = wrap_path_segment("cylinder", CYL, "+y", p, s)
    same = wrap_path_segment("cylinder", CYL, "-y", p, s)
    np.testing.assert_allclose(same.length, free.length, atol=1e-16)
    assert free.t1[1] < 0 and forced.t1[1] > 0 and forced.t2[1] > 0
    # both points beside the cylinder on the -y side of a "+y" cylinder: OpenSim wraps
    # the long way round even though the segment misses the cylinder
    miss = wrap_path_segment("cylinder", CYL, "+y", [-0.1, -0.08, 0], [0.1, -0.08, 0])
    assert miss.active and miss.t1[1] > 0 and miss.t2[1] > 0
    assert miss.length > 0.3 and miss.arc_length > 0.05
    assert not wrap_path_segment("cylinder", CYL, "all", [-0.1, -0.08, 0], [0.1, -0.08, 0]).active


# --------------------------------------------------------------------------- every kind


@pytest.mark.parametrize(
    "kind, dims, size", [("sphere", (R,), R), ("cylinder", CYL, CYL[0]), ("ellipsoid", ELL, 0.09)]
)
def test_inactive_when_the_segment_misses(kind, dims, size):
    rng = np.random.default_rng(4)
    n = 200
    mid = rng.normal(size=(n, 3))
    if kind == "cylinder":
        mid[:, 2] = 0.0
    mid *= rng.uniform(1.05, 2.0, (n, 1)) * size / np.linalg.norm(mid, axis=1)[:, None]
    # segments through a point outside, perpendicular to its radius: they miss
    t = np.cross(mid, rng.normal(size=(n, 3)))
    if kind == "cylinder":
        t = np.cross(mid, [0, 0, 1.0]) + rng.normal(0, 0.01, (n, 1)) * [0, 0, 1.0]
    t /= np.linalg.norm(t, axis=1)[:, None]
    p = mid - rng.uniform(0.05, 0.3, (n, 1)) * t
    s = mid + rng.uniform(0.05, 0.3, (n, 1)) * t
    r = wrap_path_segment(kind, dims, "all", p, s)
    assert not r.active.any() and not r.mandatory.any()
    assert np.isnan(r.t1).all() and np.isnan(r.t2).all() and (r.arc_length == 0).all()
    np.testing.assert_allclose(r.length, np.linalg.norm(p - s, axis=1), atol=0)


@pytest.mark.parametrize(
    "kind, dims, inside",
    [
        ("sphere", (R,), (0.03, 0.03, 0.03)),
        ("cylinder", CYL, (0.025, 0.025, 2.0)),  # the cylinder's radius is infinite in z
        ("ellipsoid", ELL, (0.02, 0.03, 0.05)),
    ],
)
def test_points_inside_keep_the_straight_line(kind, dims, inside):
    rng = np.random.default_rng(5)
    p = rng.uniform(-1, 1, (50, 3)) * inside
    s = rng.normal(size=(50, 3)) * 0.3
    r = wrap_path_segment(kind, dims, "all", p, s)
    r2 = wrap_path_segment(kind, dims, "+x", s, p)
    assert not r.active.any() and not r2.active.any()
    np.testing.assert_allclose(r.length, np.linalg.norm(p - s, axis=1), atol=0)


@pytest.mark.parametrize("method", ["hybrid", "midpoint", "axial"])
@pytest.mark.parametrize("quadrant", ["all", "-z"])
def test_ellipsoid_wrap_lies_on_the_surface_and_is_tangent(method, quadrant):
    rng = np.random.default_rng(6)
    p, s = _random_segments(rng, 120, 0.07)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        r = wrap_path_segment("ellipsoid", ELL, quadrant, p, s, method=method)
    a = r.active & np.isfinite(r.length)
    assert a.sum() > 60
    a_ = np.asarray(ELL)
    for t, e in ((r.t1[a], p[a]), (r.t2[a], s[a])):
        # on the surface, and the straight part lies in the tangent plane (to the
        # tolerance of OpenSim's tangent-point solver, ~1e-4 in normalized units)
        np.testing.assert_allclose(np.sum((t / a_) ** 2, 1), 1, atol=2e-4)
        normal = t / a_**2
        normal /= np.linalg.norm(normal, axis=1)[:, None]
        u = (e - t) / np.linalg.norm(e - t, axis=1)[:, None]
        assert np.abs(np.sum(u * normal, 1)).max() < 5e-3
    # the surface path is at least as long as the chord and wrapping lengthens the segment
    chord = np.linalg.norm(r.t2[a] - r.t1[a], axis=1)
    assert (r.arc_length[a] >= chord - 1e-12).all()
    assert (r.length[a] >= np.linalg.norm(p[a] - s[a], axis=1)).all()


def test_ellipsoid_of_equal_axes_is_the_sphere():
    """OpenSim's ellipsoid construction on a sphere: same tangent points as WrapSphere,
    and the 1 mm polyline is shorter than the great circle by its chord error only."""
    rng = np.random.default_rng(7)
    p, s = _random_segments(rng, 100, R)
    sph = wrap_path_segment("sphere", (R,), "all", p, s)
    ell = wrap_path_segment("ellipsoid", (R, R, R), "all", p, s, method="midpoint")
    a = sph.active & ell.active
    assert a.sum() > 40
    # (to the tolerance of OpenSim's tangent-point solver)
    np.testing.assert_allclose(ell.t1[a], sph.t1[a], atol=1e-5)
    np.testing.assert_allclose(ell.t2[a], sph.t2[a], atol=1e-5)
    np.testing.assert_allclose(ell.arc_length[a], sph.arc_length[a], atol=5e-6)


@pytest.mark.parametrize("kind, dims", [("cylinder", (0.04, 0.3)), ("ellipsoid", ELL)])
def test_batch_equals_one_by_one(kind, dims):
    """Masks and batched iterations give what one-segment calls give."""
    rng = np.random.default_rng(8)
    p, s = _random_segments(rng, 12, 0.07)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        batch = wrap_path_segment(kind, dims, "+y", p, s, single_wrap=False)
        for i in range(12):
            one = wrap_path_segment(kind, dims, "+y", p[i], s[i], single_wrap=False)
            assert one.active == batch.active[i]
            np.testing.assert_allclose(one.length, batch.length[i], rtol=0, atol=1e-15)


# --------------------------------------------------------------------------- derivatives


def _fd(kind, dims, quadrant, p, s, h, **kw):
    gp, gs = [], []
    for e in np.eye(3):
        lp = wrap_path_segment(kind, dims, quadrant, p + h * e, s, **kw).length
        lm = wrap_path_segment(kind, dims, quadrant, p - h * e, s, **kw).length
        gp.append((lp - lm) / (2 * h))
        lp = wrap_path_segment(kind, dims, quadrant, p, s + h * e, **kw).length
        lm = wrap_path_segment(kind, dims, quadrant, p, s - h * e, **kw).length
        gs.append((lp - lm) / (2 * h))
    return np.stack(gp, -1), np.stack(gs, -1)


@pytest.mark.parametrize("quadrant", ["all", "+x"])
def test_sphere_gradient_is_the_unit_vector_to_the_tangent_point(quadrant):
    rng = np.random.default_rng(9)
    p, s = _random_segments(rng, 200, R)
    gp, gs = wrap_length_gradient("sphere", (R,), quadrant, p, s)
    fp, fs = _fd("sphere", (R,), quadrant, p, s, 1e-6)
    r = wrap_path_segment("sphere", (R,), quadrant, p, s)
    assert 50 < r.active.sum() < 200
    np.testing.assert_allclose(gp, fp, atol=1e-7)
    np.testing.assert_allclose(gs, fs, atol=1e-7)
    np.testing.assert_allclose(np.linalg.norm(gp, axis=1), 1, atol=1e-15)


def _smooth_rows(kind, dims, quadrant, p, s, h, h2, tol, **kw):
    """Central differences with step h, and the rows where those with step h2 agree
    (within tol): there the length is smooth (OpenSim's constructions have kinks and,
    for the ellipsoid, jumps where one of its choices flips)."""
    fp, fs = _fd(kind, dims, quadrant, p, s, h, **kw)
    fp2, fs2 = _fd(kind, dims, quadrant, p, s, h2, **kw)
    diff = np.maximum(np.abs(fp - fp2).max(1), np.abs(fs - fs2).max(1))
    return fp, fs, np.isfinite(diff) & (diff < tol)


@pytest.mark.parametrize("quadrant", ["all", "-y"])
def test_cylinder_gradient_matches_finite_differences(quadrant):
    rng = np.random.default_rng(10)
    p, s = _random_segments(rng, 200, CYL[0])
    gp, gs = wrap_length_gradient("cylinder", CYL, quadrant, p, s)
    fp, fs, smooth = _smooth_rows("cylinder", CYL, quadrant, p, s, 1e-6, 1e-5, 1e-6)
    assert smooth.mean() > 0.97
    np.testing.assert_allclose(gp[smooth], fp[smooth], atol=1e-6)
    np.testing.assert_allclose(gs[smooth], fs[smooth], atol=1e-6)
    # OpenSim's cylinder path is not exactly shortest: the envelope formula is close only
    r = wrap_path_segment("cylinder", CYL, quadrant, p, s)
    a = r.active
    env = (p[a] - r.t1[a]) / np.linalg.norm(p[a] - r.t1[a], axis=1)[:, None]
    assert np.median(np.abs(env - gp[a])) < 0.02


@pytest.mark.parametrize(
    "method, smooth_share", [("hybrid", 0.6), ("midpoint", 0.9), ("axial", 0.9)]
)
def test_ellipsoid_gradient_matches_finite_differences(method, smooth_share):
    """Where OpenSim's ellipsoid length is smooth (the hybrid method's fan of closest
    points of interior chord points makes it rough more often), its slope is the
    gradient's."""
    rng = np.random.default_rng(11)
    p, s = _random_segments(rng, 150, 0.07)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        gp, gs = wrap_length_gradient("ellipsoid", ELL, "all", p, s, method=method)
        fp, fs, smooth = _smooth_rows(
            "ellipsoid", ELL, "all", p, s, 1e-4, 3e-4, 2e-3, method=method
        )
    assert smooth.mean() > smooth_share
    # OpenSim's own length (jittery at ~1e-7 m) against the smooth construction's slope
    err = np.maximum(np.abs(gp - fp).max(1), np.abs(gs - fs).max(1))[smooth]
    assert np.median(err) < 1e-4 and err.max() < 1e-2


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "args, kw, word",
    [
        (("cone", (0.1, 0.02), "all"), {}, "kind"),
        (("torus", (0.1, 0.02), "all"), {}, "outer_radius > inner_radius"),
        (("sphere", (0.1, 0.2), "all"), {}, "dimensions"),
        (("sphere", (-0.1,), "all"), {}, "dimensions"),
        (("cylinder", (0.1, -1.0), "all"), {}, "dimensions"),
        (("ellipsoid", (0.1, 0.2, np.nan), "all"), {}, "dimensions"),
        (("sphere", (0.1,), "+w"), {}, "quadrant"),
        (("sphere", (0.1,), None), {}, "quadrant"),
        (("ellipsoid", (0.1, 0.2, 0.3), "all"), {"method": "fast"}, "method"),
        (("cylinder", (0.1, 0.2), "all"), {"single_wrap": "yes"}, "single_wrap"),
    ],
)
def test_bad_arguments_name_themselves(args, kw, word):
    with pytest.raises(DataError, match=word):
        wrap_path_segment(*args, [0.2, 0, 0], [-0.2, 0, 0], **kw)


def test_bad_points():
    with pytest.raises(DataError, match="`p`"):
        wrap_path_segment("sphere", (0.1,), "all", [0.2, 0], [-0.2, 0, 0])
    with pytest.raises(DataError, match="`s`"):
        wrap_path_segment("sphere", (0.1,), "all", [0.2, 0, 0], [np.nan, 0, 0])
    with pytest.raises(AhbmError, match="broadcast"):
        wrap_path_segment("sphere", (0.1,), "all", np.zeros((4, 3)), np.ones((5, 3)))
    with pytest.raises(DataError, match="step"):
        wrap_length_gradient("cylinder", (0.1, 0.2), "all", [0.2, 0, 0], [-0.2, 0, 0], step=0)


def test_sphere_gradient_of_negative_far_side_arcs():
    """OpenSim counts a sphere arc forced the long way round as negative; that length
    is not a shortest path, so its gradient is differentiated, and matches differences."""
    rng = np.random.default_rng(12)
    p = rng.normal(size=(3000, 3))
    p *= rng.uniform(1.05, 3.0, (3000, 1)) * R / np.linalg.norm(p, axis=1)[:, None]
    s = -p * rng.uniform(0.5, 1.5, (3000, 1)) + rng.normal(0, 0.6 * R, (3000, 3))
    r = wrap_path_segment("sphere", (R,), "-x", p, s)
    odd = r.active & (r.arc_length < 0)
    assert odd.sum() >= 3
    gp, gs = wrap_length_gradient("sphere", (R,), "-x", p[odd], s[odd])
    fp, fs = _fd("sphere", (R,), "-x", p[odd], s[odd], 1e-6)
    np.testing.assert_allclose(gp, fp, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gs, fs, rtol=1e-5, atol=1e-6)
    # the unit vector toward the tangent point would be wrong here
    env = (p[odd] - r.t1[odd]) / np.linalg.norm(p[odd] - r.t1[odd], axis=1)[:, None]
    assert np.abs(env - gp).max() > 0.5


def test_opensim_spellings_of_quadrant_and_method():
    p, s = np.array([-0.1, -0.01, 0.02]), np.array([0.1, -0.01, -0.03])
    for a, b in (("+x", "X"), ("-y", "-Y"), ("all", "All"), ("+z", "z")):
        ra = wrap_path_segment("ellipsoid", ELL, a, p, s, method="midpoint")
        rb = wrap_path_segment("ellipsoid", ELL, b, p, s, method="Midpoint")
        assert ra.length == rb.length


@pytest.mark.parametrize("quadrant", ["all", "+y", "-x"])
def test_sphere_segment_through_the_centre_stays_straight(quadrant):
    """No plane to wrap in: OpenSim's wrap is NaN there and never chosen."""
    p, s = np.array([0.12, 0.0, 0.0]), np.array([-0.1, 0.0, 0.0])
    r = wrap_path_segment("sphere", (R,), quadrant, p, s)
    assert not r.active and r.length == pytest.approx(0.22, abs=1e-15)
    # just off the line through the centre it wraps
    assert wrap_path_segment("sphere", (R,), quadrant, p, s + [0, 1e-3, 0]).active
