"""Geometric segment models of uniform density (Hanavan-like).

For users who measure their subject: a segment is a solid whose mass,
centre of mass and inertia follow from its dimensions and density.
Segment frame as in :mod:`ahbm.bsp.tables`: origin at the proximal end
(centre of the proximal face, or the top pole of an ellipsoid), z along the
long axis pointing proximally, so the solid occupies ``-length <= z <= 0``;
x and y are the axes of the elliptical cross-sections.
"""

from __future__ import annotations

import numpy as np
from numpy.polynomial import Polynomial

from ahbm._internal.validation import as_float_array, as_nonnegative_float, as_positive_float
from ahbm.bsp.tables import SegmentParameters
from ahbm.errors import DataError

__all__ = ["elliptical_frustum", "truncated_cone", "elliptical_cylinder", "ellipsoid"]


def _positive(name, value):
    return as_positive_float(value, name)


def elliptical_frustum(length, proximal_axes, distal_axes, *, density=1000.0, name="segment"):
    """Solid whose elliptical cross-section tapers linearly (truncated elliptical cone).

    Parameters
    ----------
    length : float
        Distance between the end faces, m.
    proximal_axes, distal_axes : (float, float)
        Semi-axes (along x, along y) of the proximal and distal faces, m
        (zero allowed at one end: a cone).
    density : float, optional
        Uniform density, kg/m^3 (default 1000).
    name : str, optional
        Name stored in the result.

    Returns
    -------
    SegmentParameters
        Mass (kg), COM (m, on the z axis, negative) and inertia about the COM
        (kg m^2, diagonal) in the segment frame.

    Notes
    -----
    With semi-axes ``a(s), b(s)`` linear in the depth ``s = -z``, the
    cross-section has area ``pi a b`` and second moments ``pi a^3 b / 4``
    (about y) and ``pi a b^3 / 4`` (about x), so
    ``m = rho int pi a b ds``, ``I_zz = rho int pi a b (a^2 + b^2)/4 ds``,
    ``I_xx(origin) = rho int pi a b (b^2/4 + s^2) ds``, and the parallel-axis
    theorem moves ``I_xx, I_yy`` to the COM. The polynomial integrals are
    evaluated exactly.

    Examples
    --------
    >>> p = elliptical_frustum(0.4, (0.08, 0.06), (0.05, 0.04), density=1050)
    >>> round(p.mass, 3)
    4.354
    """
    h = _positive("length", length)
    rho = _positive("density", density)
    pa = as_float_array(proximal_axes, "proximal_axes")
    da = as_float_array(distal_axes, "distal_axes")
    if pa.shape != (2,) or da.shape != (2,):
        raise DataError("`proximal_axes` and `distal_axes` must be pairs of lengths in m")
    a0, b0 = (float(v) for v in pa)
    a1, b1 = (float(v) for v in da)
    vals = np.array([a0, b0, a1, b1])
    if not np.all(np.isfinite(vals)) or np.any(vals < 0) or (a0 * b0 == 0 and a1 * b1 == 0):
        raise DataError(
            f"Semi-axes must be >= 0 and one face must have positive area, got "
            f"{proximal_axes!r}, {distal_axes!r}"
        )
    a = Polynomial([a0, (a1 - a0) / h])
    b = Polynomial([b0, (b1 - b0) / h])
    s = Polynomial([0.0, 1.0])

    def integral(p):
        q = p.integ()
        return float(q(h) - q(0.0))

    area = np.pi * a * b
    m = rho * integral(area)
    depth = rho * integral(area * s) / m
    izz = rho * integral(area * (a**2 + b**2) / 4)
    ixx = rho * integral(area * (b**2 / 4 + s**2)) - m * depth**2
    iyy = rho * integral(area * (a**2 / 4 + s**2)) - m * depth**2
    return SegmentParameters(
        name,
        m,
        h,
        np.array([0.0, 0.0, -depth]),
        np.diag([ixx, iyy, izz]),
        "proximal face",
        "distal face",
    )


def truncated_cone(length, proximal_radius, distal_radius, *, density=1000.0, name="segment"):
    """Frustum of a right circular cone (Hanavan's limb segments).

    Parameters
    ----------
    length : float
        m.
    proximal_radius, distal_radius : float
        Radii of the end faces, m.
    density : float, optional
        kg/m^3.
    name : str, optional
        Name stored in the result.

    Returns
    -------
    SegmentParameters
        See :func:`elliptical_frustum`.

    Notes
    -----
    ``m = rho pi h (R^2 + R r + r^2) / 3``; COM depth from the face of radius
    ``R``: ``h (R^2 + 2 R r + 3 r^2) / (4 (R^2 + R r + r^2))``;
    ``I_zz = 3 m (R^5 - r^5) / (10 (R^3 - r^3))``.

    Examples
    --------
    >>> round(truncated_cone(0.4, 0.07, 0.05).mass, 3)
    4.566
    """
    proximal_radius = as_nonnegative_float(proximal_radius, "proximal_radius", unit="m")
    distal_radius = as_nonnegative_float(distal_radius, "distal_radius", unit="m")
    return elliptical_frustum(
        length,
        (proximal_radius, proximal_radius),
        (distal_radius, distal_radius),
        density=density,
        name=name,
    )


def elliptical_cylinder(length, semi_axis_x, semi_axis_y, *, density=1000.0, name="segment"):
    """Elliptical cylinder (Hanavan's trunk segments).

    Parameters
    ----------
    length : float
        m.
    semi_axis_x, semi_axis_y : float
        Semi-axes of the cross-section along x and y, m.
    density : float, optional
        kg/m^3.
    name : str, optional
        Name stored in the result.

    Returns
    -------
    SegmentParameters
        COM at ``(0, 0, -length/2)``; ``I_xx = m (b^2/4 + h^2/12)``,
        ``I_yy = m (a^2/4 + h^2/12)``, ``I_zz = m (a^2 + b^2)/4``.

    Examples
    --------
    >>> round(elliptical_cylinder(0.5, 0.15, 0.1).mass, 2)
    23.56
    """
    semi_axis_x = as_positive_float(semi_axis_x, "semi_axis_x", unit="m")
    semi_axis_y = as_positive_float(semi_axis_y, "semi_axis_y", unit="m")
    return elliptical_frustum(
        length,
        (semi_axis_x, semi_axis_y),
        (semi_axis_x, semi_axis_y),
        density=density,
        name=name,
    )


def ellipsoid(semi_axes, *, density=1000.0, name="segment"):
    """Solid ellipsoid (Hanavan's head).

    Parameters
    ----------
    semi_axes : (float, float, float)
        Semi-axes ``a, b, c`` along x, y, z, m.
    density : float, optional
        kg/m^3.
    name : str, optional
        Name stored in the result.

    Returns
    -------
    SegmentParameters
        Origin at the upper pole, COM at ``(0, 0, -c)``, length ``2 c``,
        ``m = 4/3 pi rho a b c``, ``I_xx = m (b^2 + c^2)/5`` and cyclic.

    Examples
    --------
    >>> round(ellipsoid((0.1, 0.08, 0.12)).mass, 3)
    4.021
    """
    axes = as_float_array(semi_axes, "semi_axes")
    if axes.shape != (3,):
        raise DataError(f"`semi_axes` must be three lengths in m, got {semi_axes!r}")
    a, b, c = (float(v) for v in axes)
    for k, v in zip("abc", (a, b, c), strict=True):
        _positive(f"semi_axes[{k}]", v)
    rho = _positive("density", density)
    m = 4.0 / 3.0 * np.pi * rho * a * b * c
    inertia = np.diag([b * b + c * c, a * a + c * c, a * a + b * b]) * m / 5.0
    return SegmentParameters(
        name, m, 2 * c, np.array([0.0, 0.0, -c]), inertia, "upper pole", "lower pole"
    )
