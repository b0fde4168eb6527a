"""The body checks of Model.add_body written out for 3x3 (inertia, rotation, 3-vectors)
decide as the numpy definitions do: eigenvalues for the inertia, ``np.allclose`` and
the determinant for a rotation, ``np.isfinite`` and the magnitude cap for vectors."""

from __future__ import annotations

import numpy as np
import pytest

from ahbm.errors import ModelError
from ahbm.kinematics.joint_fields import _check_inertia, _check_rotation, _check_vec3


def _inertia_ok(I) -> bool:
    """The definition: symmetric, principal moments >= 0 and I1 + I2 >= I3 (tolerances)."""
    I = np.asarray(I, dtype=float)
    scale = max(1.0, float(np.abs(I).max()))
    if np.abs(I - I.T).max() > 1e-9 * scale:
        return False
    eig = np.linalg.eigvalsh(0.5 * (I + I.T))
    tol = 1e-10 * scale
    return bool(eig[0] >= -tol and eig[0] + eig[1] >= eig[2] - tol)


def test_inertia_check_matches_the_eigenvalue_definition():
    rng = np.random.default_rng(7)
    seen = {True: 0, False: 0}
    for k in range(3000):
        Q, _ = np.linalg.qr(rng.standard_normal((3, 3)))
        moments = rng.uniform(-0.02, 1.0, 3) * 10.0 ** rng.integers(-4, 3)
        if k % 3 == 0:  # on the triangle-inequality boundary
            moments[2] = moments[0] + moments[1] + rng.choice([-1e-13, 0.0, 1e-13, 1e-3])
        I = (Q * moments) @ Q.T
        if k % 5 == 0:
            I[0, 1] += rng.choice([0.0, 1e-12, 1e-6])  # slightly asymmetric
        ok = _inertia_ok(I)
        seen[ok] += 1
        if ok:
            np.testing.assert_array_equal(_check_inertia(I, "b"), 0.5 * (I + I.T))
        else:
            with pytest.raises(ModelError, match="inertia"):
                _check_inertia(I, "b")
    assert min(seen.values()) > 300  # both outcomes exercised


def test_rotation_check_matches_allclose_and_determinant():
    rng = np.random.default_rng(8)
    for k in range(2000):
        Q, _ = np.linalg.qr(rng.standard_normal((3, 3)))
        R = Q + rng.choice([0.0, 1e-8, 1e-6, 1e-3]) * rng.standard_normal((3, 3))
        ok = np.allclose(R.T @ R, np.eye(3), atol=1e-6) and np.linalg.det(R) >= 0
        if ok:
            np.testing.assert_array_equal(_check_rotation(R, "b"), R)
        else:
            with pytest.raises(ModelError, match="proper orthonormal"):
                _check_rotation(R, "b")


@pytest.mark.parametrize(
    ("value", "match"),
    [
        ([1.0, 2.0], "3 finite numbers"),
        ([1.0, np.nan, 2.0], "3 finite numbers"),
        ([1.0, np.inf, 2.0], "3 finite numbers"),
        ([1.0, 2e12, 2.0], "magnitude 2e"),
        (["a", 1, 2], "3 numbers"),
    ],
)
def test_vec3_check_messages(value, match):
    with pytest.raises(ModelError, match=match):
        _check_vec3(value, "v")
    np.testing.assert_array_equal(_check_vec3([1e12, -1e12, 0], "v"), [1e12, -1e12, 0])
