"""Swept-sphere distances of ahbm.kinematics.geometry against coal (hpp-fcl's successor).

coal's closed-form capsule–capsule, sphere–capsule and sphere–sphere
distances are compared on random shapes, separated and overlapping, to
1e-9 (distances) and, where the closest points are unique (separated,
non-parallel cores), the witness points too. coal's own ``TriangleP`` has no
distance function against primitives in coal 3.0 ("not yet supported"), so
the lozenge cores (triangles) are compared through single-triangle meshes
(``BVHModelOBBRSS``), whose exact triangle distances give the core distance;
the swept radii are added in ahbm's formula ``d = d_core − r1 − r2``, and
the witness points are compared on the cores (random triangles have unique
closest points). The
brute-force sampling and KKT checks of every pair are in
tests/kinematics/test_geometry.py.

A coal capsule ``Capsule(radius, length)`` lies along the z axis of its
frame, centred; a segment ``a → b`` is placed with the frame at
``(a + b)/2`` and z along ``b − a``.
"""

from __future__ import annotations

import numpy as np
import pytest

coal = pytest.importorskip("coal")

from ahbm.kinematics import ssv_distance  # noqa: E402

TOL = 1e-9
N_CASES = 300


def capsule(a, b, radius):
    e = b - a
    length = float(np.linalg.norm(e))
    z = e / length
    x = np.cross(z, [1.0, 0.0, 0.0])
    if np.linalg.norm(x) < 1e-3:
        x = np.cross(z, [0.0, 1.0, 0.0])
    x /= np.linalg.norm(x)
    R = np.column_stack([x, np.cross(z, x), z])
    return coal.Capsule(radius, length), coal.Transform3s(R, 0.5 * (a + b))


def sphere(c, radius):
    return coal.Sphere(radius), coal.Transform3s(np.eye(3), c)


def triangle(T):
    mesh = coal.BVHModelOBBRSS()
    mesh.beginModel(1, 3)
    mesh.addTriangle(*T)
    mesh.endModel()
    return mesh, coal.Transform3s()


def coal_distance(g1, g2):
    req = coal.DistanceRequest()
    req.enable_signed_distance = True
    res = coal.DistanceResult()
    d = coal.distance(g1[0], g1[1], g2[0], g2[1], req, res)
    return d, np.array(res.getNearestPoint1()), np.array(res.getNearestPoint2())


MAKERS = {1: lambda P, r: sphere(P[0], r), 2: lambda P, r: capsule(P[0], P[1], r)}


@pytest.mark.parametrize(("k1", "k2"), [(1, 1), (1, 2), (2, 1), (2, 2)])
def test_spheres_and_capsules_against_coal(k1, k2):
    rng = np.random.default_rng(31 + 3 * k1 + k2)
    P1 = rng.normal(size=(N_CASES, k1, 3))
    offset = rng.normal(size=(N_CASES, 1, 3)) * rng.choice([0.5, 2.0], size=(N_CASES, 1, 1))
    P2 = rng.normal(size=(N_CASES, k2, 3)) + offset
    r1 = rng.uniform(0.05, 0.5, N_CASES)
    r2 = rng.uniform(0.05, 0.5, N_CASES)
    ours = ssv_distance(P1, r1, P2, r2)  # all cases in one vectorized call
    n_points = n_overlap = 0
    for i in range(N_CASES):
        d, p1, p2 = coal_distance(MAKERS[k1](P1[i], r1[i]), MAKERS[k2](P2[i], r2[i]))
        assert abs(d - ours.distance[i]) < TOL, (i, d, ours.distance[i])
        if d < 0:
            n_overlap += 1
        elif k1 + k2 < 4 or _not_parallel(P1[i], P2[i]):
            np.testing.assert_allclose(ours.point1[i], p1, atol=TOL)
            np.testing.assert_allclose(ours.point2[i], p2, atol=TOL)
            n_points += 1
    assert n_points > N_CASES // 2
    assert n_overlap >= 3  # some overlapping shapes are covered too


def _not_parallel(P1, P2):
    u, v = P1[1] - P1[0], P2[1] - P2[0]
    return np.linalg.norm(np.cross(u, v)) ** 2 > 1e-6 * (u @ u) * (v @ v)


@pytest.mark.parametrize("k2", [1, 2, 3])
def test_triangle_cores_against_coal_meshes(k2):
    rng = np.random.default_rng(50 + k2)
    T = rng.normal(size=(N_CASES, 3, 3))
    P2 = rng.normal(size=(N_CASES, k2, 3)) + rng.normal(scale=1.5, size=(N_CASES, 1, 3))
    r2 = rng.uniform(0.05, 0.3, N_CASES)
    r1 = 0.1
    ours = ssv_distance(T, r1, P2, r2)
    makers = {**MAKERS, 3: lambda P, r: triangle(P)}
    n = 0
    for i in range(N_CASES):
        other = makers[k2](P2[i], 0.0 if k2 == 3 else r2[i])
        d, p1, p2 = coal_distance(triangle(T[i]), other)
        if d <= 0:  # coal's meshes give no penetration depth; crossing cores are tested elsewhere
            continue
        d_core = d + (r2[i] if k2 < 3 else 0.0)
        assert abs(d_core - r1 - r2[i] - ours.distance[i]) < TOL, (i, d_core, ours.distance[i])
        # witness points: on the triangle core, and on the other shape's surface (or core)
        np.testing.assert_allclose(ours.core_point1[i], p1, atol=TOL)
        mine2 = ours.point2[i] if k2 < 3 else ours.core_point2[i]
        np.testing.assert_allclose(mine2, p2, atol=TOL)
        n += 1
    assert n > N_CASES // 2
