"""Gait events (foot strike, foot off) from force plates and from kinematics.

This module sits below :mod:`ahbm.io` in the import order, so it does not
import the ``Trial`` class: :func:`detect_gait_events` accepts any object
with the attributes of :class:`ahbm.io.trial.Trial` and returns
:class:`ahbm.types.Event` objects (the one event class of ahbm, also
``ahbm.io.Event``).
"""

from __future__ import annotations

import re
import warnings

import numpy as np

from ahbm._internal.validation import (
    as_float_array,
    as_nonnegative_float,
    as_positive_float,
    sample_rate,
)
from ahbm.analysis._common import check_rate, nan_runs
from ahbm.errors import AhbmWarning, DataError
from ahbm.types import Event

__all__ = [
    "HEEL_NAMES",
    "TOE_NAMES",
    "SACRUM_NAMES",
    "PSIS_NAMES",
    "force_plate_events",
    "zeni_events",
    "detect_gait_events",
]

FOOT_STRIKE = "Foot Strike"
FOOT_OFF = "Foot Off"


def _labels(value, name: str) -> tuple:
    """One marker label or a sequence of labels, as a tuple of str."""
    labels = (value,) if isinstance(value, str) else value
    if not isinstance(labels, (tuple, list)) or not all(isinstance(x, str) for x in labels):
        raise DataError(
            f"Expected `{name}` to be a marker label or a list of labels, got {value!r}"
        )
    return tuple(labels)


def force_plate_events(
    fz,
    *,
    rate=None,
    time=None,
    threshold: float = 20.0,
    hysteresis: float = 10.0,
    min_contact: float = 0.1,
    min_gap: float = 0.05,
):
    """Foot strikes and foot offs from a vertical force signal.

    Parameters
    ----------
    fz : array_like, shape (n_samples,)
        Vertical force magnitude, N (use ``abs`` if the plate reports it
        negative). NaN samples count as unloaded.
    rate : float, optional
        Sample rate, Hz (sample 0 at time 0). Give exactly one of `rate` and
        `time`.
    time : array_like, shape (n_samples,), optional
        Sample times, s (uniform), e.g. ``trial.time``.
    threshold : float, optional
        Contact starts when the force rises above this, N (default 20).
    hysteresis : float, optional
        Contact ends when the force falls below ``threshold - hysteresis``
        (default 10 N below), so noise around the threshold cannot toggle it.
    min_contact : float, optional
        Contacts shorter than this are discarded, s (default 0.1).
    min_gap : float, optional
        Unloaded intervals shorter than this inside a contact are bridged, s
        (default 0.05).

    Returns
    -------
    strikes, offs : ndarray
        Times (s) of the threshold crossings, linearly interpolated between
        samples. A contact already present at the first sample has no
        strike, one still present at the last sample has no off. An empty
        `fz` has no events (two empty arrays).

    Examples
    --------
    >>> import numpy as np
    >>> f = np.r_[np.zeros(10), np.full(30, 600.0), np.zeros(10)]
    >>> s, o = force_plate_events(f, rate=100.0)
    >>> s.round(3).tolist(), o.round(3).tolist()
    ([0.09], [0.4])
    """
    f = as_float_array(fz, "fz", allow_nan=True).ravel()
    fs, t0 = sample_rate(f.size, rate=rate, time=time)
    threshold = as_nonnegative_float(threshold, "threshold", unit="N")
    hysteresis = as_nonnegative_float(hysteresis, "hysteresis", unit="N")
    min_contact = as_nonnegative_float(min_contact, "min_contact", unit="s")
    min_gap = as_nonnegative_float(min_gap, "min_gap", unit="s")
    if f.size == 0:
        return np.array([]), np.array([])
    f = np.where(np.isfinite(f), f, 0.0)
    on, off = threshold, threshold - hysteresis
    if hysteresis < 0 or off < 0:
        raise DataError(
            f"Need 0 <= hysteresis <= threshold, got threshold={threshold}, hysteresis={hysteresis}"
        )
    code = np.where(f > on, 1, np.where(f < off, 0, -1))
    # hysteresis: samples between the two thresholds keep the previous state
    idx = np.where(code >= 0, np.arange(f.size), 0)
    idx = np.maximum.accumulate(idx)
    state = np.where(code[idx] >= 0, code[idx], 0).astype(bool)
    if code[0] < 0:
        first_def = np.argmax(code >= 0) if (code >= 0).any() else f.size
        state[:first_def] = False
    runs = nan_runs(state)
    merged: list[list[int]] = []
    for a, b in runs:
        if merged and (a - merged[-1][1]) / fs < min_gap:
            merged[-1][1] = b
        else:
            merged.append([a, b])
    strikes, offs = [], []
    for a, b in merged:
        if (b - a) / fs < min_contact:
            continue
        if a > 0:
            f0, f1 = f[a - 1], f[a]
            w = (on - f0) / (f1 - f0) if f1 != f0 else 1.0
            strikes.append(t0 + (a - 1 + np.clip(w, 0, 1)) / fs)
        if b < f.size:
            f0, f1 = f[b - 1], f[b]
            w = (f0 - off) / (f0 - f1) if f1 != f0 else 0.0
            offs.append(t0 + (b - 1 + np.clip(w, 0, 1)) / fs)
    return np.array(strikes), np.array(offs)


def _interp_nan(y):
    ok = np.isfinite(y)
    if ok.sum() < 2:
        return y, ~ok
    x = np.arange(y.size)
    return np.interp(x, x[ok], y[ok]), ~ok


def _peaks(y, distance, t0, rate):
    """Peak times with parabolic sub-sample refinement; peaks on filled samples dropped."""
    from scipy import signal

    yf, filled = _interp_nan(y)
    if np.isnan(yf).any():
        return np.array([])
    idx, _ = signal.find_peaks(yf, distance=max(int(distance), 1))
    idx = idx[~filled[idx]]
    idx = idx[(idx > 0) & (idx < yf.size - 1)]
    a, b, c = yf[idx - 1], yf[idx], yf[idx + 1]
    den = a - 2 * b + c
    with np.errstate(invalid="ignore", divide="ignore"):
        delta = np.where(den != 0, 0.5 * (a - c) / den, 0.0)
    return t0 + (idx + np.clip(delta, -0.5, 0.5)) / rate


_MIN_TRAVEL = 0.5  # m of sacrum travel below which a trial counts as treadmill walking


def zeni_events(
    heel,
    toe,
    sacrum,
    *,
    rate=None,
    time=None,
    direction=None,
    min_interval: float = 0.5,
    up=(0.0, 0.0, 1.0),
):
    """Foot strikes and foot offs of one foot from marker kinematics (Zeni et al. 2008).

    Parameters
    ----------
    heel, toe, sacrum : array_like, shape (n_frames, 3)
        Heel, toe and sacrum (or mid-PSIS) trajectories, m; NaN where missing.
    rate : float, optional
        Frame rate, Hz (frame 0 at time 0). Give exactly one of `rate` and
        `time`.
    time : array_like, shape (n_frames,), optional
        Frame times, s (uniform), e.g. ``trial.time``.
    direction : array_like, shape (3,), optional
        Walking direction; default: horizontal direction of the sacrum's
        displacement over the trial or, when the sacrum travels less than
        0.5 m (treadmill), the mean horizontal heel-to-toe direction.
    min_interval : float, optional
        Minimum time between two events of the same kind, s (default 0.5).
    up : array_like, shape (3,), optional
        Vertical lab axis (default +Z): the walking direction found from the
        data is made horizontal with it (e.g. ``(0, 1, 0)`` for an OpenSim
        Y-up trial).

    Returns
    -------
    strikes, offs : ndarray
        Event times, s, refined between frames by a parabola through the
        extremum and its neighbours.

    Notes
    -----
    With ``d`` the walking direction, foot strike is a maximum of
    ``(heel - sacrum) . d`` (heel furthest ahead of the pelvis) and foot off
    a minimum of ``(toe - sacrum) . d`` (toe furthest behind). Extrema that
    fall on missing samples are discarded (Zeni, Richards & Higginson 2008,
    Gait Posture 27:710-714).

    Examples
    --------
    >>> import numpy as np
    >>> t = np.arange(0, 3, 0.01)
    >>> sac = np.stack([1.2 * t, 0 * t, 0.9 + 0 * t], 1)
    >>> heel = sac + np.stack([0.3 * np.cos(2 * np.pi * t), 0 * t, -0.9 + 0 * t], 1)
    >>> s, o = zeni_events(heel, heel, sac, rate=100.0)
    >>> s.round(2).tolist()
    [1.0, 2.0]
    """
    h = as_float_array(heel, "heel", allow_nan=True)
    if h.ndim != 2 or h.shape[1] != 3:
        raise DataError(f"Expected `heel` to have shape (n_frames, 3), got {h.shape}")
    fs, t0 = sample_rate(h.shape[0], rate=rate, time=time)
    min_interval = as_positive_float(min_interval, "min_interval", unit="s")
    to = as_float_array(toe, "toe", allow_nan=True)
    s = as_float_array(sacrum, "sacrum", allow_nan=True)
    for name, a in (("heel", h), ("toe", to), ("sacrum", s)):
        if a.ndim != 2 or a.shape[1] != 3 or a.shape[0] != h.shape[0]:
            raise DataError(f"Expected `{name}` to have shape ({h.shape[0]}, 3), got {a.shape}")
    u = as_float_array(up, "up").ravel()
    if u.shape != (3,) or not np.linalg.norm(u) > 0:
        raise DataError(f"Expected `up` to be a non-zero 3-vector, got {up!r}")
    u = u / np.linalg.norm(u)
    if direction is None:
        ok = np.flatnonzero(np.isfinite(s).all(axis=1))
        if ok.size < 2:
            raise DataError("The sacrum marker has fewer than 2 valid frames")
        d = s[ok[-1]] - s[ok[0]]
        d = d - (d @ u) * u
        if np.linalg.norm(d) < _MIN_TRAVEL:
            # treadmill (or walking on the spot): the feet point forwards
            ft = to - h
            ft = ft[np.isfinite(ft).all(axis=1)]
            d = ft.mean(axis=0) if ft.size else np.zeros(3)
            d = d - (d @ u) * u
            if np.linalg.norm(d) < 1e-6:
                raise DataError(
                    "Cannot infer the walking direction: the sacrum does not travel and the "
                    "heel and toe markers coincide; pass `direction`"
                )
    else:
        d = as_float_array(direction, "direction").ravel()
        if d.shape != (3,) or not np.linalg.norm(d) > 0:
            raise DataError(f"Expected `direction` to be a non-zero 3-vector, got {direction!r}")
    d = d / np.linalg.norm(d)
    dist = min_interval * fs
    strikes = _peaks((h - s) @ d, dist, t0, fs)
    offs = _peaks(-((to - s) @ d), dist, t0, fs)
    return strikes, offs


_SIDES = (("Left", "L"), ("Right", "R"))
_SIDE_WORDS = {"l": "Left", "left": "Left", "r": "Right", "right": "Right"}
_SEP = re.compile(r"[\s._\-]+")
#: Landmark names tried by default (after or before the side: LHEE, L.Heel, Heel_L ...).
HEEL_NAMES = ("HEE", "Heel", "Calcaneus", "ANK", "Ankle.Lat", "Ankle")
TOE_NAMES = ("TOE", "Toe.Tip", "Toe", "Toe.Lat", "MT2", "Toe.Med")
SACRUM_NAMES = ("SACR", "V.Sacral", "VSAC", "Sacrum", "Sacral")
PSIS_NAMES = ("PSI", "PSIS")
_FORMS = "'LHEE', 'L.Heel', 'L_Heel', 'Left.Heel', 'Heel_L', each also with a 'Name:' prefix"


def _norm(text: str) -> str:
    """Case- and separator-free form of a label or landmark name: 'L.Toe.Tip' -> 'ltoetip'."""
    return _SEP.sub("", text).lower()


def _sided(label: str):
    """``(side, landmark)`` read from a label without its ``Name:`` prefix, or None.

    The side is a leading or trailing ``L``/``R``/``Left``/``Right`` token
    (``L.Heel``, ``l_heel``, ``Heel_R``) or a capital ``L``/``R`` (or the
    word) glued to a capitalized landmark (``LHEE``, ``RToe``, ``LeftHeel``).
    """
    core = label[label.rindex(":") + 1 :] if ":" in label else label
    tokens = [t for t in _SEP.split(core) if t]
    if len(tokens) >= 2 and tokens[0].lower() in _SIDE_WORDS:
        return _SIDE_WORDS[tokens[0].lower()], "".join(tokens[1:])
    if len(tokens) >= 2 and tokens[-1].lower() in _SIDE_WORDS:
        return _SIDE_WORDS[tokens[-1].lower()], "".join(tokens[:-1])
    m = re.match(r"(Left|Right|LEFT|RIGHT|L|R)(?=[A-Z0-9])(.+)$", core)
    if m:
        return _SIDE_WORDS[m.group(1).lower()], m.group(2)
    return None


def _landmarks(names, what: str) -> tuple:
    """Normalized landmark names from `names` (sided entries such as 'R.Heel' give 'heel')."""
    out = []
    for n in _labels(names, what):
        sided = _sided(n)
        key = _norm(sided[1] if sided else n)
        if key and key not in out:
            out.append(key)
    return tuple(out)


def _sided_spec(value, what: str):
    """`heel`/`toe` argument: a ``{"Left": ..., "Right": ...}`` dict or landmark names."""
    if isinstance(value, dict):
        if set(value) - {"Left", "Right"}:
            raise DataError(f"`{what}` dict keys must be 'Left' and 'Right', got {sorted(value)}")
        for side, labs in value.items():
            _labels(labs, f"{what}[{side!r}]")
        return dict(value)
    return _labels(value, what)


def _valid_share(trial, label) -> float:
    m = _marker(trial, label)
    return float(np.isfinite(m).all(axis=1).mean()) if m is not None and m.size else 0.0


def _resolve(trial, side, spec, what: str, *, required: bool):
    """``(trajectory, label)`` of a sided marker, or ``(None, None)`` when not `required`.

    `spec` is a ``{"Left": label(s), "Right": label(s)}`` dict (exact labels)
    or a sequence of landmark names tried in order; for each name the trial
    labels naming it on this side (any separator or case, with or without a
    ``Name:`` prefix; unprefixed labels first) are candidates, and the first
    one visible in at least half of the frames is used.
    """
    labels = list(trial.point_labels)
    if isinstance(spec, dict):
        given = spec.get(side)
        if given is None:
            raise DataError(f"`{what}` has no entry for the {side} side; give {{'{side}': label}}")
        cands = [[x] for x in _labels(given, f"{what}[{side!r}]")]
        for lab in (c[0] for c in cands):
            if lab not in labels:
                raise DataError(
                    f"`{what}`: label {lab!r} ({side}) is not in the trial; trial markers: "
                    f"{', '.join(labels)}"
                )
    else:
        readings = [(lab, _sided(lab)) for lab in labels]
        cands = []
        for key in _landmarks(spec, what):
            found = [lab for lab, r in readings if r and r[0] == side and _norm(r[1]) == key]
            bare = [lab for lab in found if ":" not in lab]
            cands += [bare] if bare else []
            prefixed = [lab for lab in found if ":" in lab]
            cands += [prefixed] if prefixed else []
    seen = []
    for group in cands:
        ok = [lab for lab in group if _valid_share(trial, lab) >= 0.5]
        if len(ok) > 1:
            raise DataError(
                f"{what} marker of the {side} side: several labels fit ({', '.join(ok)}); "
                f"pass {what}={{'Left': label, 'Right': label}} to choose"
            )
        if ok:
            return _marker(trial, ok[0]), ok[0]
        seen += [f"{lab} ({100 * _valid_share(trial, lab):.0f} % of frames)" for lab in group]
    if not required:
        return None, None
    looked = (
        ", ".join(map(repr, _labels(spec.get(side), what)))
        if isinstance(spec, dict)
        else f"{side} labels of {', '.join(map(repr, _labels(spec, what)))} ({_FORMS})"
    )
    found = f"; found only {', '.join(seen)}" if seen else ""
    raise DataError(
        f"Kinematic events need a {what} marker for the {side} side visible in at least half "
        f"of the frames: looked for {looked}{found}. Trial markers: {', '.join(labels)}. Pass "
        f"{what}={{'Left': label, 'Right': label}} to name them"
    )


def _marker(trial, label):
    labels = list(trial.point_labels)
    if label not in labels:
        return None
    return np.asarray(trial.points[:, labels.index(label), :], float)


def _unsided(trial, names, what: str):
    """``(trajectory, label)`` of the first marker matching one of `names` (any prefix)."""
    labels = list(trial.point_labels)
    for n in _labels(names, what):
        if n in labels and _valid_share(trial, n) >= 0.5:
            return _marker(trial, n), n
        key = _norm(n)
        for lab in labels:
            core = lab[lab.rindex(":") + 1 :] if ":" in lab else lab
            if _norm(core) == key and _valid_share(trial, lab) >= 0.5:
                return _marker(trial, lab), lab
    return None, None


def _pelvis(trial, markers):
    sac, _ = _unsided(trial, markers["sacrum"], "sacrum")
    if sac is not None:
        return sac
    psis = [_resolve(trial, side, markers["psis"], "psis", required=False)[0] for side, _ in _SIDES]
    if any(p is None for p in psis):
        raise DataError(
            f"Kinematic events need a sacrum marker (one of {', '.join(markers['sacrum'])}, "
            f"any 'Name:' prefix) or both PSIS markers (left and right labels of "
            f"{', '.join(_labels(markers['psis'], 'psis'))}); trial markers: "
            f"{', '.join(trial.point_labels)}"
        )
    return 0.5 * (psis[0] + psis[1])


def _kinematic(trial, markers, t0, up):
    sac = _pelvis(trial, markers)
    out = []
    for side, _ in _SIDES:
        heel, hname = _resolve(trial, side, markers["heel"], "heel", required=True)
        toe, tname = _resolve(trial, side, markers["toe"], "toe", required=True)
        frames = t0 + np.arange(heel.shape[0]) / trial.point_rate
        st, of = zeni_events(heel, toe, sac, time=frames, up=up)
        out += [Event(FOOT_STRIKE, float(t), side, f"zeni ({hname})") for t in st]
        out += [Event(FOOT_OFF, float(t), side, f"zeni ({tname})") for t in of]
    return out


def _horizontal(up):
    """(2, 3) orthonormal horizontal axes for the vertical `up` (x, y for +z)."""
    u = np.asarray(up, float)
    k = int(np.argmax(np.abs(u)))
    a = np.eye(3)[(k + 1) % 3]
    b = np.cross(u, a)
    if k == 2:  # keep (x, y) for a Z-up lab
        a, b = np.eye(3)[0], np.eye(3)[1]
    return np.stack([a, b])


def _up_axis(trial, markers):
    """Lab axis (signed unit vector) along which the pelvis sits above the heels; +z if unknown."""
    try:
        sac = _pelvis(trial, markers)
    except DataError:
        return np.array([0.0, 0.0, 1.0])
    heels = [
        _resolve(trial, side, markers["heel"], "heel", required=False)[0] for side, _ in _SIDES
    ]
    heels = [h for h in heels if h is not None]
    if not heels:
        return np.array([0.0, 0.0, 1.0])
    d = np.nanmean(np.concatenate([sac - h for h in heels]), axis=0)
    if not np.isfinite(d).all():
        return np.array([0.0, 0.0, 1.0])
    k = int(np.argmax(np.abs(d)))
    up = np.zeros(3)
    up[k] = np.sign(d[k])
    return up


def _force_plates(trial, markers, t0, options, up):
    out = []
    tm = t0 + np.arange(trial.n_frames) / trial.point_rate
    H = _horizontal(up)
    feet = {}
    for side, _ in _SIDES:
        heel = _resolve(trial, side, markers["heel"], "heel", required=False)[0]
        toe = _resolve(trial, side, markers["toe"], "toe", required=False)[0]
        feet[side] = tuple(None if m is None else m @ H.T for m in (heel, toe))
    for k, plate in enumerate(trial.force_plates):
        force = np.asarray(plate.force, float)
        if force.ndim != 2 or force.shape[1] != 3:
            raise DataError(f"force_plates[{k}].force must be (n_samples, 3), got {force.shape}")
        ts = t0 + np.arange(force.shape[0]) / plate.rate
        st, of = force_plate_events(np.abs(force @ up), time=ts, **options)
        for s in st:
            ends = of[of > s]
            e = ends[0] if ends.size else tm[-1]
            side = _assign_side(plate, feet, tm, s, e, t0, H)
            if side is None:
                warnings.warn(
                    f"force plate {k}: contact at {s:.3f} s could not be assigned to a foot "
                    "(heel markers missing); skipped",
                    AhbmWarning,
                    stacklevel=3,
                )
                continue
            out.append(Event(FOOT_STRIKE, float(s), side, f"force plate {k}"))
            if ends.size:
                out.append(Event(FOOT_OFF, float(e), side, f"force plate {k}"))
    return out


def _assign_side(plate, feet, tm, s, e, t0, H):
    """Side whose foot stays closest (horizontally) to the centre of pressure.

    The foot point is the midpoint of the heel and toe markers (the heel alone
    when there is no toe marker), given in the horizontal axes `H`. Its
    horizontal distance to the COP is averaged over the middle half of the
    contact: the stance foot stays near the COP throughout, while the
    swinging foot passes it only briefly (at mid-stance, with a narrow step
    width, the swinging heel can be the nearer one at that single instant).
    """
    cop = np.asarray(plate.cop, float)
    origin = np.asarray(plate.origin, float)
    times = np.linspace(s + 0.25 * (e - s), e - 0.25 * (e - s), 21)
    target = np.full((times.size, 2), np.nan)
    if cop.ndim == 2 and cop.shape[0] > 0 and cop.shape[1] == 3:
        idx = np.clip(np.round((times - t0) * plate.rate).astype(int), 0, cop.shape[0] - 1)
        target = cop[idx] @ H.T
    if not np.isfinite(target).all(axis=1).any():
        if origin.shape != (3,) or not np.isfinite(origin).all():
            return None
        target = np.broadcast_to(origin @ H.T, (times.size, 2))
    best, side_best = np.inf, None
    for side, (heel, toe) in feet.items():
        if heel is None:
            continue
        foot = heel if toe is None else 0.5 * (heel + toe)
        pos = np.stack(
            [np.interp(times, tm, foot[:, c], left=np.nan, right=np.nan) for c in range(2)], 1
        )
        dist = np.hypot(*(pos - target).T)
        if not np.isfinite(dist).any():
            continue
        d = float(np.nanmean(dist))
        if d < best:
            best, side_best = d, side
    return side_best


def detect_gait_events(
    trial,
    *,
    method: str = "auto",
    sacrum=SACRUM_NAMES,
    psis=PSIS_NAMES,
    heel=HEEL_NAMES,
    toe=TOE_NAMES,
    up="auto",
    threshold: float = 20.0,
    hysteresis: float = 10.0,
    min_contact: float = 0.1,
    min_gap: float = 0.05,
    tolerance: float = 0.1,
):
    """Foot strikes and foot offs of a walking trial.

    Parameters
    ----------
    trial : Trial-like
        Object with ``points`` (n_frames, n_points, 3) in m, ``point_labels``,
        ``point_rate``, ``first_frame`` and ``force_plates`` (objects with
        ``force`` (n, 3), ``cop`` (n, 3), ``origin`` and ``rate``), e.g.
        :class:`ahbm.io.trial.Trial`.
    method : {"auto", "force_plate", "kinematic"}
        ``"force_plate"``: threshold crossings of the vertical force of each
        plate, assigned to the foot (heel-toe midpoint) that stays nearest the
        centre of pressure over the middle half of the contact.
        ``"kinematic"``: Zeni's method for both feet.
        ``"auto"`` (default): kinematic events, with those that have a
        force-plate event of the same kind and side within `tolerance`
        replaced by the force-plate event.
    sacrum : str or sequence of str
        Sacrum labels tried in order, with or without a ``Name:`` prefix and
        in any case or separator (default :data:`SACRUM_NAMES`: Plug-in Gait
        ``SACR``, OpenSim's ``V.Sacral``, legacy ``VSAC`` ...).
    psis : sequence of str
        PSIS landmark names, used on each side when no sacrum marker is
        found (the two averaged); sided entries such as ``"LPSI"`` stand for
        their landmark (``PSI``).
    heel, toe : sequence of str or dict
        Landmark names tried in order on each side (default
        :data:`HEEL_NAMES`: heel, else ankle marker, as Zeni et al. allow;
        :data:`TOE_NAMES`). A label names a landmark on a side when the side
        ``L``/``R``/``Left``/``Right`` comes before or after it, with or
        without separator and ``Name:`` prefix: ``LHEE``, ``L.Heel``,
        ``l_heel``, ``Heel_L``, ``Pat01:LHEE`` are all the left ``HEE`` /
        ``Heel``. Sided entries (``"R.Heel"``) stand for their landmark. The
        first candidate visible in at least half of the frames is used
        (unprefixed labels before prefixed ones; two labels that fit equally
        are an error). A dict ``{"Left": label, "Right": label}`` names the
        exact labels instead.
    up : "auto" or array_like, shape (3,)
        Vertical lab axis. ``"auto"`` (default): the coordinate axis along
        which the pelvis sits above the heels (+Z when they are not found);
        the plates' vertical force and the horizontal distances use it, and
        Zeni's walking direction is made horizontal with it.
    threshold, hysteresis, min_contact, min_gap : float
        Force-plate detection settings (see :func:`force_plate_events`).
    tolerance : float, optional
        Matching window for ``"auto"``, s.

    Returns
    -------
    list of Event
        Sorted by time; ``description`` says which method produced each.

    Raises
    ------
    DataError
        Missing markers (the message lists the labels looked for and those
        found), ambiguous labels, missing rate, unknown method, no force
        plates for ``"force_plate"``.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> import numpy as np
    >>> t = np.arange(0, 3, 0.01)
    >>> sac = np.stack([1.2 * t, 0 * t, 0.9 + 0 * t], 1)
    >>> off = lambda ph: np.stack([0.3 * np.cos(2 * np.pi * t + ph), 0 * t, -0.9 + 0 * t], 1)
    >>> pts = np.stack([sac, sac + off(0), sac + off(0), sac + off(np.pi), sac + off(np.pi)], 1)
    >>> tr = SimpleNamespace(points=pts, point_labels=["SACR", "LHEE", "LTOE", "RHEE", "RTOE"],
    ...                      point_rate=100.0, first_frame=1, force_plates=[], n_frames=300)
    >>> [e.context for e in detect_gait_events(tr, method="kinematic")][:2]
    ['Left', 'Right']
    """
    for attr in ("points", "point_labels", "point_rate"):
        if not hasattr(trial, attr):
            raise DataError(f"`trial` has no attribute {attr!r}; pass an ahbm Trial")
    rate = check_rate(trial.point_rate, "trial.point_rate")
    t0 = (int(getattr(trial, "first_frame", 1)) - 1) / rate
    if not hasattr(trial, "n_frames"):
        raise DataError("`trial` has no `n_frames`; pass an ahbm Trial")
    pts = as_float_array(trial.points, "trial.points", allow_nan=True)
    if pts.ndim != 3 or pts.shape[2] != 3:
        raise DataError(f"Expected `trial.points` to have shape (n, m, 3), got {pts.shape}")
    markers = {
        "sacrum": _labels(sacrum, "sacrum"),
        "psis": _labels(psis, "psis"),
        "heel": _sided_spec(heel, "heel"),
        "toe": _sided_spec(toe, "toe"),
    }
    if isinstance(up, str):
        if up != "auto":
            raise DataError(f"`up` must be 'auto' or a 3-vector, got {up!r}")
        up = _up_axis(trial, markers)
    else:
        up = as_float_array(up, "up").ravel()
        if up.shape != (3,) or not np.linalg.norm(up) > 0:
            raise DataError(f"Expected `up` to be a non-zero 3-vector, got {up!r}")
        up = up / np.linalg.norm(up)
    threshold = as_nonnegative_float(threshold, "threshold", unit="N")
    hysteresis = as_nonnegative_float(hysteresis, "hysteresis", unit="N")
    min_contact = as_nonnegative_float(min_contact, "min_contact", unit="s")
    min_gap = as_nonnegative_float(min_gap, "min_gap", unit="s")
    tolerance = as_nonnegative_float(tolerance, "tolerance", unit="s")
    options = dict(
        threshold=threshold, hysteresis=hysteresis, min_contact=min_contact, min_gap=min_gap
    )
    plates = list(getattr(trial, "force_plates", []) or [])
    if method == "kinematic":
        events = _kinematic(trial, markers, t0, up)
    elif method == "force_plate":
        if not plates:
            raise DataError("method='force_plate' but the trial has no force plates")
        events = _force_plates(trial, markers, t0, options, up)
    elif method == "auto":
        events = _kinematic(trial, markers, t0, up)
        fp = _force_plates(trial, markers, t0, options, up) if plates else []
        for f in fp:
            close = [
                i
                for i, e in enumerate(events)
                if e.label == f.label
                and e.context == f.context
                and abs(e.time - f.time) <= tolerance
            ]
            for i in sorted(close, reverse=True):
                del events[i]
            events.append(f)
    else:
        raise DataError(f"Unknown `method` {method!r}; use 'auto', 'force_plate' or 'kinematic'")
    return sorted(events, key=lambda e: e.time)
