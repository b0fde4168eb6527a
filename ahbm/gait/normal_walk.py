"""The demo's normal walk: published joint angles, rolling feet, forces through a pivot.

:func:`normal_walk_motion` drives the demo's lower-extremity model
(:func:`ahbm.gait.synthetic_walking_trial` with ``walk="normal"``) with the
mean joint-angle curves of free-speed walking stored in
:mod:`ahbm.gait.normative` (Schwartz et al. 2008), and
:func:`normal_walk_loads` gives its feet the ground reactions that walk
needs:

* **Timing**: foot off at 59.5 % of the cycle, double support over the first
  and the last 9.5 % of each stance (Schwartz et al. 2008 give 10 %, 50 % and
  59 % for opposite foot off, opposite foot contact and foot off), the cycle
  time set by the caller (1.1 s in the demo).
* **Joint angles**: the published mean curves as Fourier series of six
  harmonics, passed through a smooth low-pass of the harmonics (gain
  ``1 / (1 + (k / 3.5)^8)`` for harmonic ``k``: little is left above 3 Hz,
  which the pipeline's 6 Hz marker filter would take from the
  accelerations). The curves stay within 0.2-1.1 deg of the published mean at
  the pelvis and hip, 2.9 deg at the knee and 5.5 deg at the ankle (at most
  61 % of the published SD). Knee ab-adduction and rotation (not in the
  stored band) are small smooth patterns.
* **Centre of pressure**: on each foot's heel-toe marker line, at the
  fraction ``sin(pi/2 · s)`` of it at the fraction ``s`` of stance: from the
  heel at foot strike to the toe marker at foot off.
* **Pelvis height and speed**: kinematic. Over one stride, the pelvis moves
  so that the loaded feet roll without slipping: with minus the
  load-weighted mean velocity of the material points under the centres of
  pressure (its mean forward part is the walking speed; the vertical part is
  kept to four harmonics and lifted so that the contact points are on the
  floor).
* **Ground reactions**: each foot carries its share of the vertical force the
  model's root needs (shares changing as raised cosines over double support),
  and its horizontal force points, with the vertical one, at a pivot 0.22 m
  above the hip centres' midpoint (moved horizontally so that the horizontal
  forces have zero mean over the stride): the lines of action of both feet
  cross above the pelvis, as the "virtual pivot point" of human walking.
  The pelvis's horizontal motion is what these forces give it (Newton's law
  with the legs' own motion, integrated in the frequency domain and kept to
  four harmonics); the horizontal force the root needs beyond the feet's (at
  most about 0.17 body weights, in double support) is left to the
  unmodelled upper body, like the root's moment. The joint moments do not
  depend on it: they are the feet's loads carried up the legs.

The resulting vertical ground reaction has two humps (about 1.1 body
weights at 10 % and 48 % of the cycle, 0.85 at mid-stance), the ankle
plantarflexor moment peaks near 1.5 N·m/kg at 48 %, the hip moment stays
within about -0.8 to +0.4 N·m/kg and the knee moment below 0.6 N·m/kg
(``tests/gait/test_demo_walk.py``).

References
----------
Schwartz, M. H., Rozumalski, A. & Trost, J. P. (2008). The effect of walking
speed on the gait of typically developing children. Journal of Biomechanics
41(8), 1639-1650.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from scipy.interpolate import CubicSpline

from ahbm.dynamics.inverse import rnea
from ahbm.gait.normative import normative_fourier
from ahbm.kinematics.forward import forward_kinematics
from ahbm.kinematics.jcs import lab_reference_frame
from ahbm.kinematics.rotations import euler_rates_to_omega, euler_to_matrix, matrix_to_quat

__all__ = [
    "NORMAL_STANCE",
    "NORMAL_DOUBLE_SUPPORT",
    "normal_walk_loads",
    "normal_walk_motion",
    "normal_weights",
]

#: Stance fraction of the cycle (foot off).
NORMAL_STANCE = 0.595
#: Double-support fraction after each foot strike (and before each foot off).
NORMAL_DOUBLE_SUPPORT = 0.095

_HARMONICS = 6  # harmonics of the joint-angle curves
_TAPER = 3.5  # cutoff harmonic of their smooth low-pass
_TRANSLATION_HARMONICS = 4  # harmonics of the pelvis translation
_TRANSLATION_TAPER = 3.0  # cutoff harmonic of the horizontal motion's low-pass
_PIVOT_HEIGHT = 0.22  # m above the hip centres' midpoint
_GRID = 240  # samples of the stride for the pelvis translation

_NORMATIVE = {
    "hip_flex": ("HipAngles", 0),
    "hip_add": ("HipAngles", 1),
    "hip_rot": ("HipAngles", 2),
    "knee_flex": ("KneeAngles", 0),
    "ankle_dorsi": ("AnkleAngles", 0),
    "pelvis_tilt": ("PelvisAngles", 0),
    "pelvis_obl": ("PelvisAngles", 1),
    "pelvis_rot": ("PelvisAngles", 2),
}
# knee ab-adduction and rotation (deg at fractions of the cycle): small smooth patterns
_KNOTS = {
    "knee_var": ([0, 0.3, 0.7], [1, 3, -1]),
    "knee_rot": ([0, 0.3, 0.7], [-2, 4, 0]),
}


def _taper(harmonics, cutoff):
    """Gains of a smooth low-pass over the harmonics: 1 / (1 + (k / cutoff)^8)."""
    k = np.arange(harmonics + 1)
    return 1.0 / (1.0 + (k / cutoff) ** 8)


@cache
def _coefficients(name):
    """Fourier coefficients (complex, rad) of a joint-angle pattern of the cycle."""
    if name in _NORMATIVE:
        c = normative_fourier(*_NORMATIVE[name], harmonics=_HARMONICS)
        return c * _taper(_HARMONICS, _TAPER)
    x, y = _KNOTS[name]
    vals = CubicSpline(np.r_[x, 1.0], np.r_[y, y[0]], bc_type="periodic")(
        np.linspace(0, 1, 256, endpoint=False)
    )
    return np.fft.rfft(vals)[:5] / 256 * (np.pi / 180.0)


def _series(coef, phase, stride):
    """Value, first and second time derivative of a Fourier series at `phase`."""
    k = np.arange(coef.size)
    e = np.exp(2j * np.pi * np.outer(phase, k))
    c = coef * np.where(k == 0, 1.0, 2.0)
    w = 2j * np.pi * k / stride
    return (e @ c).real, (e @ (c * w)).real, (e @ (c * w**2)).real


def normal_weights(t, stride):
    """Each foot's share of the vertical force and its phase: ``{"Right": (w, phase), ...}``."""
    out = {}
    ds, stance = NORMAL_DOUBLE_SUPPORT, NORMAL_STANCE
    for side, offset in (("Right", 0.0), ("Left", 0.5)):
        ph = (t / stride + offset) % 1.0
        wgt = np.zeros(t.size)
        wgt[(ph >= ds) & (ph < stance - ds)] = 1.0
        up = ph < ds
        wgt[up] = 0.5 - 0.5 * np.cos(np.pi * ph[up] / ds)
        down = (ph >= stance - ds) & (ph < stance)
        wgt[down] = 0.5 + 0.5 * np.cos(np.pi * (ph[down] - (stance - ds)) / ds)
        out[side] = (wgt, ph)
    return out


def _angles(model, t, stride, translation=None):
    """q, qd, qdd of the model's joints and pelvis (right foot strike at t = 0)."""
    n = t.size
    q = np.zeros((n, model.nq))
    qd = np.zeros((n, model.nv))
    qdd = np.zeros((n, model.nv))
    ph_r = (t / stride) % 1.0
    if translation is not None:
        speed, tc = translation
        for k in range(3):
            q[:, k], qd[:, k], qdd[:, k] = _series(tc[k], ph_r, stride)
        q[:, 0] += speed * t
        qd[:, 0] += speed
    # pelvis orientation relative to the ISB lab reference: tilt, obliquity and rotation
    # with the right side's signs (pelvis_angles = (-a, -b, c) of "ZXY")
    pel = [
        _series(_coefficients(k), ph_r, stride) for k in ("pelvis_tilt", "pelvis_obl", "pelvis_rot")
    ]
    a = np.stack([-pel[0][0], -pel[1][0], pel[2][0]], -1)
    ad = np.stack([-pel[0][1], -pel[1][1], pel[2][1]], -1)
    add = np.stack([-pel[0][2], -pel[1][2], pel[2][2]], -1)
    q[:, 3:7] = matrix_to_quat(lab_reference_frame() @ euler_to_matrix(a, "ZXY"))
    qd[:, 3:6] = euler_rates_to_omega(a, ad, "ZXY", frame="local")
    h = 1e-5
    wp = euler_rates_to_omega(a + h * ad, ad + h * add, "ZXY", frame="local")
    wm = euler_rates_to_omega(a - h * ad, ad - h * add, "ZXY", frame="local")
    qdd[:, 3:6] = (wp - wm) / (2 * h)
    for side, offset, s in (("r", 0.0, 1.0), ("l", 0.5, -1.0)):
        ph = (ph_r + offset) % 1.0
        joints = {
            "thigh": (("hip_flex", 1.0), ("hip_add", s), ("hip_rot", s)),
            "shank": (("knee_flex", -1.0), ("knee_var", s), ("knee_rot", s)),
            "foot": (("ankle_dorsi", 1.0),),
        }
        for body, comps in joints.items():
            b = model.body_index(f"{body}_{side}")
            qi, vi = model.q_index[b], model.v_index[b]
            for k, (name, sign) in enumerate(comps):
                v0, v1, v2 = _series(_coefficients(name), ph, stride)
                q[:, qi + k], qd[:, vi + k], qdd[:, vi + k] = sign * v0, sign * v1, sign * v2
    return q, qd, qdd


def _rolling_point(model, T, side, u):
    """Lab position of the foot's point at fraction `u` of its heel-toe marker line."""
    p = side[0]
    b = model.body_index(f"foot_{p.lower()}")
    heel = np.asarray(model.bodies[b].markers[p + "HEE"], float)
    toe = np.asarray(model.bodies[b].markers[p + "TOE"], float)
    local = heel + u[:, None] * (toe - heel)
    return np.einsum("nij,nj->ni", T[:, b, :3, :3], local) + T[:, b, :3, 3]


def _cop_fraction(ph):
    """Where the centre of pressure is on the heel-toe line at cycle phase `ph`."""
    return np.sin(0.5 * np.pi * np.clip(ph / NORMAL_STANCE, 0.0, 1.0))


def _foot_forces(model, T, wts, fz, offset):
    """Each foot's force and centre of pressure: its share of `fz`, pointing at the pivot."""
    hips = [model.body_index(f"thigh_{p}") for p in "rl"]
    pivot = 0.5 * (T[:, hips[0], :3, 3] + T[:, hips[1], :3, 3]) + offset
    pivot[:, 2] += _PIVOT_HEIGHT
    out = {}
    for side in ("Right", "Left"):
        wgt, ph = wts[side]
        cop = _rolling_point(model, T, side, _cop_fraction(ph))
        cop[:, 2] = 0.0
        F = np.empty((T.shape[0], 3))
        F[:, 2] = wgt * fz
        F[:, :2] = F[:, 2:3] * (pivot[:, :2] - cop[:, :2]) / (pivot[:, 2:3] - cop[:, 2:3])
        out[side] = (F, cop)
    return out, pivot


def _integral(values, stride, harmonics, order, cutoff=None):
    """Fourier coefficients (n_axes, harmonics + 1) of the `order`-fold integral of samples."""
    c = np.fft.rfft(values - values.mean(axis=0), axis=0)[: harmonics + 1] / values.shape[0]
    iw = 2j * np.pi * np.arange(c.shape[0]) / stride
    out = np.zeros_like(c)
    out[1:] = c[1:] / iw[1:, None] ** order
    if cutoff is not None:
        out *= _taper(harmonics, cutoff)[:, None]
    return out.T


def _translation(model, radius, stride):
    """Mean speed, Fourier coefficients (3, n) of the pelvis position, and the pivot offset."""
    n = _GRID
    t = np.arange(n) * (stride / n)
    h = 1e-4 * stride
    wts = normal_weights(t, stride)
    T = {
        d: forward_kinematics(model, _angles(model, t + d, stride)[0]).transforms
        for d in (-h, 0.0, h)
    }
    vel = np.zeros((n, 3))
    height = np.zeros(n)
    for side in ("Right", "Left"):
        wgt, ph = wts[side]
        u = _cop_fraction(ph)
        v = (_rolling_point(model, T[h], side, u) - _rolling_point(model, T[-h], side, u)) / (2 * h)
        vel -= wgt[:, None] * v
        height += wgt * _rolling_point(model, T[0.0], side, u)[:, 2]
    speed = float(vel[:, 0].mean())
    H = _TRANSLATION_HARMONICS
    tc = np.zeros((3, H + 1), complex)
    tc[2] = _integral(vel[:, 2:3], stride, H, 1)[0]
    tc[2, 0] = radius - float(np.mean(height + _series(tc[2], t / stride, stride)[0]))
    # the root force with this vertical motion and no horizontal acceleration
    q, qd, qdd = _angles(model, t, stride, (speed, tc))
    f0 = rnea(model, q, qd, qdd)[:, 0:3]
    qdd[:, 0] += 1.0
    mass = float(rnea(model, q, qd, qdd)[0, 0] - f0[0, 0])
    T0 = forward_kinematics(model, q).transforms
    feet, pivot = _foot_forces(model, T0, wts, f0[:, 2], np.zeros(3))
    fh = feet["Right"][0][:, :2] + feet["Left"][0][:, :2]
    # move the pivot so that the mean horizontal force is the legs' mean need
    per_m = (wts["Right"][0] + wts["Left"][0]) * f0[:, 2] / pivot[:, 2]
    offset = np.zeros(3)
    offset[:2] = (f0[:, :2] - fh).mean(axis=0) / per_m.mean()
    feet, _ = _foot_forces(model, T0, wts, f0[:, 2], offset)
    acc = (feet["Right"][0][:, :2] + feet["Left"][0][:, :2] - f0[:, :2]) / mass
    tc[:2] = _integral(acc, stride, H, 2, _TRANSLATION_TAPER)
    return speed, tc, offset


def normal_walk_motion(model, t, stride, radius):
    """q, qd, qdd (model coordinates) of the demo model's normal walk at times `t`.

    Parameters
    ----------
    model : Model
        The demo's lower-extremity model.
    t : ndarray
        Times, s (the right foot strikes at t = 0, stride, ...).
    stride : float
        Cycle time, s.
    radius : float
        Marker radius, m (the feet's contact points lie that high).

    Returns
    -------
    q, qd, qdd : ndarray
        And the pivot offset (3,), m, for :func:`normal_walk_loads`.
    """
    speed, tc, offset = _translation(model, float(radius), float(stride))
    q, qd, qdd = _angles(model, t, stride, (speed, tc))
    return q, qd, qdd, offset


def normal_walk_loads(model, q, qd, qdd, T, t, stride, offset):
    """Feet loads of the normal walk (see the module docstring).

    Returns
    -------
    f_ext : ndarray, shape (n, n_bodies, 6)
        Spatial forces (moment about the lab origin, force) on the feet.
    cops, forces, loaded : dict
        ``"Right"/"Left"`` -> centre of pressure (n, 3), force (n, 3), carries
        load (n,) bool.
    """
    n = q.shape[0]
    wts = normal_weights(t, stride)
    f_total = rnea(model, q, qd, qdd)[:, 0:3]
    feet, _ = _foot_forces(model, T, wts, f_total[:, 2], offset)
    f_ext = np.zeros((n, model.n_bodies, 6))
    cops, forces, loaded = {}, {}, {}
    for side, p in (("Right", "r"), ("Left", "l")):
        F, cop = feet[side]
        b = model.body_index(f"foot_{p}")
        f_ext[:, b, :3] = np.cross(cop, F)
        f_ext[:, b, 3:] = F
        cops[side], forces[side], loaded[side] = cop, F, wts[side][0] > 0
    return f_ext, cops, forces, loaded
