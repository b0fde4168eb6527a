"""Body mass from the force plates of a walking trial, when no one gives it.

Many exported C3D files carry no ``Bodymass``; joint moments are divided by
the mass, and the segments' inertial loads are fractions of it, so a wrong
mass changes the shape of the hip and knee moments, not only their scale.
Two estimates, each an identity of the whole body's vertical momentum
(``∫ F_z dt = m (g Δt + Δż)``) over an interval where all ground contacts
are measured:

- **double support on two plates**: between the mid-stance force minima of
  two successive contacts (where the vertical velocity of the centre of mass
  is about zero at both ends), the two plates carry the whole body:
  ``m = mean(F₁ + F₂) / g``;
- **single support on the plates**: from the other foot's foot-off to its
  next foot strike (the file's events), the plates carry the whole body
  (their sum: a foot may span two plates);
  the change of vertical velocity is taken from the pelvis markers (mean of
  ASIS, PSIS and sacrum): ``m = ∫ F_z dt / (g Δt + ż₁ − ż₀)``.

A contact counts only when it is one foot's whole stance on the plate: its
longest run above the threshold lasts at least 0.25 s and no other plate is
loaded during a single-support interval. An estimate counts only when it is
consistent with the contacts it uses: each contact's peak vertical force is
0.8 to 3 body weights (a foot that is only partly on a plate gives a low
peak for the weight it implies, as do noise and a plate touched by the
other foot), and a single-support interval counts only when the plates are
loaded throughout it. The median of the estimates that count is returned.

On three Vicon Nexus walking trials whose files give the ground reactions
normalized by Vicon's mass (66.1, 66.5 and 66.1 kg), the estimates were
64.2 (single support; the double-support pairs of that file were partial
contacts and are refused), 65.4 and 67.6 kg.
"""

from __future__ import annotations

import warnings

import numpy as np

from ahbm.gait.markersets import G

__all__ = ["PELVIS_MARKERS", "mass_from_plates", "pelvis_point"]

#: Shortest stance counted, s; the peak vertical force of a whole stance in body weights.
_MIN_STANCE = 0.25
_PEAK_BW = (0.8, 3.0)
#: The pelvis markers whose mean gives the pelvis's vertical velocity (single support).
PELVIS_MARKERS = ("LASI", "RASI", "LPSI", "RPSI", "SACR")


def _contact(fz: np.ndarray, rate: float, threshold: float):
    """(first, last) sample of the longest run of `fz` above `threshold`, or None."""
    on = np.flatnonzero(fz > threshold)
    if on.size == 0:
        return None
    runs = np.split(on, np.flatnonzero(np.diff(on) > 1) + 1)
    run = max(runs, key=len)
    if (run[-1] - run[0]) / rate < _MIN_STANCE:
        return None
    return int(run[0]), int(run[-1])


def _plausible(m: float, peaks) -> bool:
    w = m * G
    return bool(m > 0 and all(_PEAK_BW[0] * w <= p <= _PEAK_BW[1] * w for p in peaks))


def _double_support(loads) -> list:
    """Estimates from two successive contacts that overlap (see the module notes)."""
    out = []
    contacts = []
    for fz, rate, _t0, contact in loads:
        if contact is None:
            continue
        a, b = contact
        q = (b - a) // 4
        mid = a + q + int(np.argmin(fz[a + q : b - q + 1]))
        contacts.append((a, b, mid, fz, rate))
    contacts.sort(key=lambda c: c[0])
    for (_a1, b1, m1, f1, r1), (a2, _b2, m2, f2, r2) in zip(contacts, contacts[1:], strict=False):
        if a2 < b1 and m2 > m1 and r1 == r2 and f1.size == f2.size:
            m = float(np.mean(f1[m1:m2] + f2[m1:m2]) / G)
            if _plausible(m, (f1.max(), f2.max())):
                out.append(m)
    return out


def _single_support(loads, events, pelvis, time) -> list:
    """Estimates over the other foot's swings (see the module notes).

    The plates' vertical forces are summed (a stance foot may span two
    plates); the swing must lie within one run of the sum above the
    threshold.
    """
    if pelvis is None or time is None or len(time) < 3 or not loads:
        return []
    rate, t_start = loads[0][1], loads[0][2]
    if any(r != rate or f.size != loads[0][0].size for f, r, _s, _c in loads):
        return []
    total = np.sum([f for f, _r, _s, _c in loads], axis=0)
    contact = _contact(total, rate, 20.0)
    if contact is None:
        return []
    z = np.asarray(pelvis, dtype=float)[:, 2]
    ok = np.isfinite(z)
    if ok.sum() < 3:
        return []
    zd = np.gradient(np.interp(time, time[ok], z[ok]), time)
    offs = sorted((float(e.time), str(e.context)) for e in events if e.label == "Foot Off")
    strikes = sorted((float(e.time), str(e.context)) for e in events if e.label == "Foot Strike")
    on = total > 20.0
    out = []
    for t0, side in offs:
        t1 = next((t for t, s in strikes if s == side and t > t0), None)
        if t1 is None or t1 - t0 < 0.1 or not time[0] <= t0 < t1 <= time[-1]:
            continue
        i0, i1 = (int(round((t - t_start) * rate)) for t in (t0, t1))
        if i0 < 0 or i1 >= total.size or not on[i0 : i1 + 1].all():
            continue  # the stance foot leaves the plates during the swing
        impulse = float(np.sum(total[i0 : i1 + 1])) / rate
        dv = float(np.interp(t1, time, zd) - np.interp(t0, time, zd))
        m = impulse / (G * (i1 - i0 + 1) / rate + dv)
        # the peak of the stance around the swing (the run of the sum that holds it)
        a, b = i0, i1
        while a > 0 and on[a - 1]:
            a -= 1
        while b + 1 < total.size and on[b + 1]:
            b += 1
        if (b - a) / rate >= _MIN_STANCE and _plausible(m, (total[a : b + 1].max(),)):
            out.append(m)
    return out


def mass_from_plates(plates, *, events=(), pelvis=None, time=None, threshold: float = 20.0):
    """Body mass (kg) from the plates of a walking trial, or None if it cannot be told.

    Parameters
    ----------
    plates : sequence of ForcePlate
        The trial's plates (``force`` (n, 3) in N, ``rate`` in Hz).
    events : sequence of Event, optional
        The trial's gait events (``"Foot Off"``/``"Foot Strike"`` with a
        ``context`` side), for the single-support estimate.
    pelvis : array_like, shape (n_frames, 3), optional
        A pelvis point (m, Z up; the mean of the pelvis markers), for the
        single-support estimate.
    time : array_like, shape (n_frames,), optional
        The marker frames' times, s; the plates' first sample is at ``time[0]``.
    threshold : float
        Vertical force, N, above which a plate is loaded.

    Returns
    -------
    float or None
        The median of the estimates that are consistent with their contacts
        (see the module notes).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> t = np.arange(2000) / 1000.0
    >>> s = np.clip((t - 0.2) / 0.6, 0.0, 1.0)  # one 0.6 s stance of a 70 kg walker
    >>> force = np.zeros((t.size, 3)); force[:, 2] = 800.0 * np.sin(np.pi * s)
    >>> plate = SimpleNamespace(force=force, rate=1000.0)
    >>> mass_from_plates([plate]) is None  # one contact, no events: it cannot be told
    True
    """
    loads = []
    for p in plates:
        fz = np.abs(np.asarray(p.force, dtype=float)[:, 2])
        fz = np.where(np.isfinite(fz), fz, 0.0)
        rate = float(p.rate)
        t_start = float(time[0]) if time is not None and len(time) else 0.0
        loads.append((fz, rate, t_start, _contact(fz, rate, threshold)))
    t = None if time is None else np.asarray(time, dtype=float)
    estimates = _double_support(loads) + _single_support(loads, events, pelvis, t)
    return float(np.median(estimates)) if estimates else None


def pelvis_point(markers: dict):
    """The mean of the pelvis markers found in `markers` (``{name: (n, 3)}``), or None."""
    found = [np.asarray(markers[n], dtype=float) for n in PELVIS_MARKERS if n in markers]
    if not found:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # frames where all are missing: NaN
        return np.nanmean(np.stack(found), axis=0)
