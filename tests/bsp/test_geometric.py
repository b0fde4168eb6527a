import numpy as np
import pytest

from ahbm.bsp import ellipsoid, elliptical_cylinder, elliptical_frustum, truncated_cone
from ahbm.errors import DataError


def test_cylinder_closed_form():
    h, r, rho = 0.4, 0.05, 1100.0
    p = truncated_cone(h, r, r, density=rho)
    m = rho * np.pi * r**2 * h
    assert p.mass == pytest.approx(m)
    np.testing.assert_allclose(p.com, [0, 0, -h / 2])
    np.testing.assert_allclose(
        np.diag(p.inertia), [m * (3 * r**2 + h**2) / 12] * 2 + [m * r**2 / 2]
    )


def test_cone_closed_form():
    # solid cone, apex distal: COM h/4 from the base, I_zz = 3/10 m R^2,
    # I_transverse about COM = 3/20 m R^2 + 3/80 m h^2
    h, R = 0.3, 0.06
    p = truncated_cone(h, R, 0.0)
    m = 1000 * np.pi * R**2 * h / 3
    assert p.mass == pytest.approx(m)
    assert p.com[2] == pytest.approx(-h / 4)
    np.testing.assert_allclose(
        np.diag(p.inertia), [3 / 20 * m * R**2 + 3 / 80 * m * h**2] * 2 + [0.3 * m * R**2]
    )


def test_frustum_formulas():
    h, R, r = 0.4, 0.07, 0.04
    p = truncated_cone(h, R, r)
    s = R**2 + R * r + r**2
    assert p.mass == pytest.approx(1000 * np.pi * h * s / 3)
    assert -p.com[2] == pytest.approx(h * (R**2 + 2 * R * r + 3 * r**2) / (4 * s))
    assert p.inertia[2, 2] == pytest.approx(0.3 * p.mass * (R**5 - r**5) / (R**3 - r**3))


def test_elliptical_frustum_monte_carlo():
    rng = np.random.default_rng(0)
    h, (a0, b0), (a1, b1) = 0.35, (0.08, 0.05), (0.04, 0.045)
    p = elliptical_frustum(h, (a0, b0), (a1, b1), density=1000.0)
    n = 400_000
    pts = rng.uniform([-a0, -b0, -h], [a0, b0, 0], (n, 3))
    s = -pts[:, 2]
    a = a0 + (a1 - a0) * s / h
    b = b0 + (b1 - b0) * s / h
    inside = (pts[:, 0] / a) ** 2 + (pts[:, 1] / b) ** 2 <= 1
    vol = 4 * a0 * b0 * h * inside.mean()
    q = pts[inside]
    com = q.mean(axis=0)
    d = q - com
    i_mc = (
        1000
        * vol
        * np.array(
            [
                np.mean(d[:, 1] ** 2 + d[:, 2] ** 2),
                np.mean(d[:, 0] ** 2 + d[:, 2] ** 2),
                np.mean(d[:, 0] ** 2 + d[:, 1] ** 2),
            ]
        )
    )
    assert p.mass == pytest.approx(1000 * vol, rel=5e-3)
    np.testing.assert_allclose(p.com, com, atol=1e-3)
    np.testing.assert_allclose(np.diag(p.inertia), i_mc, rtol=1e-2)


def test_elliptical_cylinder_and_ellipsoid():
    h, a, b = 0.5, 0.15, 0.1
    p = elliptical_cylinder(h, a, b, density=1050)
    m = 1050 * np.pi * a * b * h
    np.testing.assert_allclose(
        np.diag(p.inertia),
        m * np.array([b**2 / 4 + h**2 / 12, a**2 / 4 + h**2 / 12, (a**2 + b**2) / 4]),
    )
    e = ellipsoid((0.1, 0.08, 0.12), density=1000)
    m = 4 / 3 * np.pi * 1000 * 0.1 * 0.08 * 0.12
    assert e.mass == pytest.approx(m)
    assert e.inertia[0, 0] == pytest.approx(m * (0.08**2 + 0.12**2) / 5)
    np.testing.assert_allclose(e.com, [0, 0, -0.12])


def test_geometric_bad_input():
    with pytest.raises(DataError, match="length"):
        truncated_cone(-1, 0.1, 0.1)
    with pytest.raises(DataError, match="positive area"):
        truncated_cone(1, 0.0, 0.0)
    with pytest.raises(DataError, match="density"):
        ellipsoid((0.1, 0.1, 0.1), density=0)
    with pytest.raises(DataError, match="semi_axes"):
        ellipsoid((0.1, 0.1))
