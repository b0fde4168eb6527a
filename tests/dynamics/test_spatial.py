"""Tests of ahbm.dynamics.spatial: Plücker transforms, cross products, inertia."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from ahbm.dynamics import (
    force_cross,
    force_transform,
    motion_cross,
    motion_transform,
    spatial_inertia,
)
from ahbm.errors import DataError


def crm(v):
    """6x6 matrix of v ×m (Featherstone eq. 2.31), written from the definition."""
    w, u = v[:3], v[3:]

    def sk(a):
        return np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])

    return np.block([[sk(w), np.zeros((3, 3))], [sk(u), sk(w)]])


@pytest.fixture
def rng():
    return np.random.default_rng(9)


def test_cross_products(rng):
    v, m, f = rng.normal(size=(3, 6))
    np.testing.assert_allclose(motion_cross(v, m), crm(v) @ m, atol=1e-14)
    np.testing.assert_allclose(force_cross(v, f), -crm(v).T @ f, atol=1e-14)
    # duality: f · (v × m) = −(v ×* f) · m
    assert f @ motion_cross(v, m) == pytest.approx(-force_cross(v, f) @ m)
    vb = rng.normal(size=(5, 6))
    mb = rng.normal(size=(5, 6))
    np.testing.assert_allclose(motion_cross(vb, mb)[2], motion_cross(vb[2], mb[2]))


def test_transforms(rng):
    R = Rotation.random(4, random_state=1).as_matrix()
    p = rng.normal(size=(4, 3))
    X = motion_transform(R, p)
    Xf = force_transform(R, p)
    # power is invariant: (X* f) · (X m) = f · m
    m = rng.normal(size=(4, 6))
    f = rng.normal(size=(4, 6))
    np.testing.assert_allclose(
        np.sum((Xf @ f[..., None])[..., 0] * (X @ m[..., None])[..., 0], axis=-1),
        np.sum(f * m, axis=-1),
    )
    np.testing.assert_allclose(Xf, np.swapaxes(np.linalg.inv(X), -1, -2), atol=1e-12)
    # a pure rotation about the world z axis seen from a frame at p: v = ω × p
    X1 = motion_transform(np.eye(3), [1.0, 2.0, 0.0])
    np.testing.assert_allclose(X1 @ [0, 0, 1, 0, 0, 0], [0, 0, 1, -2, 1, 0])
    # X (a × b) = (X a) × (X b)
    a, b = rng.normal(size=(2, 6))
    np.testing.assert_allclose(X[0] @ motion_cross(a, b), motion_cross(X[0] @ a, X[0] @ b),
                               atol=1e-12)  # fmt: skip


def test_spatial_inertia(rng):
    m, c = 2.5, rng.normal(size=3)
    Ic = np.diag([0.1, 0.2, 0.25])
    I6 = spatial_inertia(m, c, Ic)
    np.testing.assert_allclose(I6, I6.T)
    # kinetic energy of a velocity ν: ½ m |v_c|² + ½ ωᵀ I_c ω
    nu = rng.normal(size=6)
    w, v = nu[:3], nu[3:]
    vc = v + np.cross(w, c)
    assert 0.5 * nu @ I6 @ nu == pytest.approx(0.5 * m * vc @ vc + 0.5 * w @ Ic @ w)
    # transforming the inertia to the COM frame gives block-diag(I_c, m 1)
    X = motion_transform(np.eye(3), c)  # COM frame seen from the body frame
    Xinv = np.linalg.inv(X)
    np.testing.assert_allclose(Xinv.T @ I6 @ Xinv, np.block(
        [[Ic, np.zeros((3, 3))], [np.zeros((3, 3)), m * np.eye(3)]]), atol=1e-12)  # fmt: skip


def test_errors():
    with pytest.raises(DataError, match=r"Expected `v` to have shape \(\.\.\., 6\)"):
        motion_cross(np.zeros(5), np.zeros(6))
    with pytest.raises(DataError, match="Expected `rotation`"):
        motion_transform(np.eye(2), np.zeros(3))
    with pytest.raises(DataError, match="non-finite"):
        spatial_inertia(1.0, [np.nan, 0, 0], np.eye(3))
