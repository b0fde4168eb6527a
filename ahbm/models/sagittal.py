"""Winter's two-dimensional sagittal-plane inverse dynamics of one leg (teaching model).

Markers in the sagittal plane (shoulder, hip, knee, ankle, heel, toe), a 2-D
ground reaction and the body mass give joint angles, moments, forces and
powers per kg, segment by segment from the foot up (Winter 2009, ch. 5).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from ahbm._internal.validation import as_float_array, sample_rate
from ahbm.analysis.derivatives import central_difference
from ahbm.analysis.filters import butter_filtfilt
from ahbm.bsp.tables import segment_parameters
from ahbm.errors import AhbmWarning, DataError
from ahbm.types import ResultRepr

__all__ = ["SagittalResult", "SAGITTAL_MARKERS", "sagittal_inverse_dynamics"]

#: Marker order of :func:`sagittal_inverse_dynamics` (Winter 2009, Table A.1 set).
SAGITTAL_MARKERS = ("shoulder", "hip", "knee", "ankle", "heel", "toe")

# BSP table rows used per segment: (table segment, proximal marker, distal marker)
_SAG_SEGMENTS = (("thigh", "hip", "knee"), ("shank", "knee", "ankle"), ("foot", "ankle", "toe"))


@dataclass(frozen=True, repr=False)
class SagittalResult(ResultRepr):
    """Output of :func:`sagittal_inverse_dynamics` (joint order hip, knee, ankle).

    Attributes
    ----------
    time : ndarray, shape (n_frames,)
        s.
    angles : ndarray, shape (n_frames, 3)
        Hip flexion, knee flexion, ankle dorsiflexion, rad.
    angular_velocity : ndarray, shape (n_frames, 3)
        Time derivatives of `angles`, rad/s.
    moment : ndarray, shape (n_frames, 3)
        Internal joint moments per kg body mass, N m/kg: hip extensor, knee
        extensor, ankle plantarflexor positive.
    force : ndarray, shape (n_frames, 3, 2)
        Force of the proximal on the distal segment at each joint per kg, N/kg
        (X forward, Y up).
    power : ndarray, shape (n_frames, 3)
        Joint powers per kg, W/kg (generation positive).
    segment_angles : ndarray, shape (n_frames, 4)
        Trunk, thigh, leg and foot angles, rad, counterclockwise from +X.
    settings : dict
        Cutoff, BSP table, mass.
    """

    time: np.ndarray
    angles: np.ndarray
    angular_velocity: np.ndarray
    moment: np.ndarray
    force: np.ndarray
    power: np.ndarray
    segment_angles: np.ndarray
    settings: dict = field(default_factory=dict)


def _cross2(r, f):
    return r[..., 0] * f[..., 1] - r[..., 1] * f[..., 0]


def _filter_fill(x, rate, cutoff, name):
    """Low-pass each valid stretch, then interpolate the gaps linearly (no extrapolation)."""
    flat = x.reshape(x.shape[0], -1)
    ok = np.isfinite(flat)
    if ok.all():
        out = butter_filtfilt(flat, rate=rate, cutoff=cutoff)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", AhbmWarning)
            out = butter_filtfilt(flat, rate=rate, cutoff=cutoff, nan_policy="segments")
        idx = np.arange(flat.shape[0])
        for j in range(flat.shape[1]):
            good = np.isfinite(out[:, j])
            if good.sum() < 2:
                raise DataError(f"`{name}` channel {j} has fewer than 2 valid samples")
            out[:, j] = np.interp(idx, idx[good], out[good, j], left=np.nan, right=np.nan)
    return out.reshape(x.shape)


def sagittal_inverse_dynamics(
    markers_2d, grf_2d, *, mass, rate=None, time=None, cutoff=6.0, bsp="dempster"
):
    """Winter's 2-D sagittal-plane inverse dynamics of one leg (teaching model).

    Parameters
    ----------
    markers_2d : array_like, shape (n_frames, 6, 2), or dict
        Shoulder, greater trochanter (hip), lateral femoral epicondyle (knee),
        lateral malleolus (ankle), heel, fifth metatarsal head (toe), in this
        order (:data:`SAGITTAL_MARKERS`; a dict with these keys is accepted),
        m, lab X forward, Y up, subject seen from the right (walking +X). NaN
        marks missing samples.
    grf_2d : array_like, shape (n_frames, 3)
        Ground reaction on the foot at the frame times: ``Fx``, ``Fy`` (N) and
        ``Mz``, the moment of the ground reaction about the lab origin (N m,
        counterclockwise positive: ``Mz = x_cop Fy − y_cop Fx + T_free``).
        Zero during swing.
    mass : float
        Body mass, kg.
    rate : float, optional
        Frame rate, Hz. Give exactly one of `rate` and `time`.
    time : array_like, shape (n_frames,), optional
        Uniformly spaced frame times, s.
    cutoff : float, optional
        Low-pass cutoff of the markers, Hz (zero-lag 4th-order Butterworth,
        Winter's corrected cutoff; default 6 Hz).
    bsp : {"dempster"}, optional
        Segment parameter table: Dempster (1955) as tabulated by Winter (2009,
        Table 4.1) -- the table Winter's model uses.

    Returns
    -------
    SagittalResult
        Angles, angular velocities, moments, forces and powers of hip, knee
        and ankle, moments/forces/powers per kg body mass.

    Raises
    ------
    DataError
        Bad shapes, non-uniform time, a marker with fewer than two valid
        samples, unknown `bsp`, non-positive mass.

    Notes
    -----
    Processing: each marker coordinate is filtered over its valid samples
    only (each stretch between gaps separately) and the gaps are then filled
    by linear interpolation of the *filtered* signal; gaps at the start or end
    stay NaN (no extrapolation), and so do the results there. The ground
    reaction is used as given (filter it beforehand if needed).

    Segments: thigh hip-knee, leg knee-ankle, foot ankle-toe (Dempster masses,
    COM fractions and sagittal radii of gyration). Segment angles are
    counterclockwise from +X; hip flexion ``θ_thigh − θ_trunk + π``, knee
    flexion ``θ_thigh − θ_leg``, ankle dorsiflexion ``θ_foot − θ_leg − π/2``
    with the trunk from hip to shoulder and the foot along the heel-toe line.
    For each segment from the foot up (Winter 2009, §5.2):
    ``F_p = m (a − g) − F_d``, ``M_p = I α − M_d − r_p × F_p − r_d × F_d``
    about the COM, with ``F_d, M_d`` the load on the segment at its distal end
    (the ground reaction for the foot, the reaction of the distal segment
    otherwise). Clinical signs: hip ``−M``, knee ``+M``, ankle ``−M``.

    Examples
    --------
    >>> import numpy as np
    >>> t = np.arange(50) / 50.0
    >>> pose = np.array([[0, 1.4], [0, 0.9], [0, 0.5], [0, 0.08], [-0.05, 0], [0.15, 0]])
    >>> mk = np.tile(pose, (50, 1, 1))
    >>> grf = np.tile([0.0, 700.0, 700.0 * 0.02], (50, 1))
    >>> r = sagittal_inverse_dynamics(mk, grf, mass=70.0, time=t)
    >>> r.angles[0].round(6).tolist()
    [0.0, 0.0, 0.0]
    """
    if not isinstance(markers_2d, dict):
        markers_2d = as_float_array(markers_2d, "markers_2d", allow_nan=True)
    if time is not None:
        n = np.size(time)
    else:
        first = markers_2d.get(SAGITTAL_MARKERS[0]) if isinstance(markers_2d, dict) else markers_2d
        n = np.shape(first)[0] if np.ndim(first) else 0
    rate, t0 = sample_rate(n, rate=rate, time=time)
    time = t0 + np.arange(n) / rate
    if n < 8:
        raise DataError(f"Need at least 8 frames, got {n}")
    if isinstance(markers_2d, dict):
        missing = [k for k in SAGITTAL_MARKERS if k not in markers_2d]
        if missing:
            raise DataError(f"`markers_2d` lacks markers {missing}; needed: {SAGITTAL_MARKERS}")
        mk = np.stack(
            [
                as_float_array(markers_2d[k], f"markers_2d[{k!r}]", allow_nan=True)
                for k in SAGITTAL_MARKERS
            ],
            axis=1,
        )
    else:
        mk = as_float_array(markers_2d, "markers_2d", allow_nan=True)
    if mk.shape != (n, 6, 2):
        raise DataError(f"Expected `markers_2d` to have shape ({n}, 6, 2), got {mk.shape}")
    grf = as_float_array(grf_2d, "grf_2d")
    if grf.shape != (n, 3):
        raise DataError(f"Expected `grf_2d` to have shape ({n}, 3) (Fx, Fy, Mz), got {grf.shape}")
    try:
        body = float(mass)
    except (TypeError, ValueError) as err:
        raise DataError(f"`mass` must be a number in kg, got {mass!r}") from err
    if not (np.isfinite(body) and body > 0):
        raise DataError(f"`mass` must be a positive body mass in kg, got {mass!r}")
    if str(bsp).lower() not in ("dempster", "dempster_winter"):
        raise DataError(f"Unknown `bsp` {bsp!r}; Winter's model uses 'dempster'")

    p = _filter_fill(mk, rate, cutoff, "markers_2d")
    sh, hip, knee, ank, heel, toe = (p[:, i] for i in range(6))
    lengths = {
        "thigh": np.nanmedian(np.linalg.norm(knee - hip, axis=-1)),
        "shank": np.nanmedian(np.linalg.norm(ank - knee, axis=-1)),
        "foot": np.nanmedian(np.linalg.norm(toe - ank, axis=-1)),
    }
    bsp_par = segment_parameters("dempster_winter", mass=body, height=1.75, segment_lengths=lengths)

    def ang(v):
        a = np.arctan2(v[:, 1], v[:, 0])
        ok = np.isfinite(a)
        a[ok] = np.unwrap(a[ok])  # NaN frames (unfillable ends) stay NaN
        return a

    th_trunk, th_thigh, th_leg = ang(sh - hip), ang(knee - hip), ang(ank - knee)
    th_foot = ang(toe - heel)
    seg_angles = np.stack([th_trunk, th_thigh, th_leg, th_foot], axis=1)
    angles = np.stack(
        [th_thigh - th_trunk + np.pi, th_thigh - th_leg, th_foot - th_leg - np.pi / 2], axis=1
    )
    angles = (angles + np.pi) % (2 * np.pi) - np.pi
    omega_j = central_difference(angles, time=time)
    g = np.array([0.0, -9.81])
    joints = {"hip": hip, "knee": knee, "ankle": ank, "toe": toe}
    seg_theta = {"thigh": th_thigh, "shank": th_leg, "foot": ang(toe - ank)}
    # load on the current segment at its distal end (ground reaction for the foot)
    Fd = grf[:, :2].copy()
    Md_origin = grf[:, 2].copy()  # moment about the lab origin of the distal load
    force = np.empty((n, 3, 2))
    moment = np.empty((n, 3))
    omega_seg = {}
    for k, (name, prox, dist) in zip((2, 1, 0), reversed(_SAG_SEGMENTS), strict=True):
        par = bsp_par[f"{name}_r"]
        P, D = joints[prox], joints[dist]
        frac = np.linalg.norm(par.com) / par.length
        c = P + frac * (D - P)
        I = par.inertia[1, 1]
        acc = central_difference(c, time=time, order=2)
        wz = central_difference(seg_theta[name], time=time)
        az = central_difference(seg_theta[name], time=time, order=2)
        omega_seg[name] = wz
        Fp = par.mass * (acc - g) - Fd
        # distal load moment about the COM: M_origin - c x F
        Md_c = Md_origin - _cross2(c, Fd)
        Mp = I * az - Md_c - _cross2(P - c, Fp)
        force[:, k] = Fp
        moment[:, k] = Mp
        # reaction on the next (proximal) segment: -Fp, -Mp at P, as a moment about the origin
        Fd = -Fp
        Md_origin = -Mp + _cross2(P, -Fp)
    clinical = moment * np.array([-1.0, 1.0, -1.0])
    wrel = np.stack(
        [
            omega_seg["thigh"] - central_difference(th_trunk, time=time),
            omega_seg["shank"] - omega_seg["thigh"],
            omega_seg["foot"] - omega_seg["shank"],
        ],
        axis=1,
    )
    power = moment * wrel
    return SagittalResult(
        time=time,
        angles=angles,
        angular_velocity=omega_j,
        moment=clinical / body,
        force=force / body,
        power=power / body,
        segment_angles=seg_angles,
        settings={"cutoff_hz": float(cutoff), "bsp": "dempster_winter", "mass_kg": body},
    )
