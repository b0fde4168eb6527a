"""Static calibration of the gait model (Plug-in Gait's static offsets).

:func:`static_calibration` measures, in a static standing trial, what the
dynamic markers cannot show: the true knee axis and knee centre (from a knee
alignment device, KAD, or a medial epicondyle marker), the true ankle centre
and axis (from a medial malleolus marker), and the heel-toe foot. From them it
derives, per side,

* the **thigh rotation** offset: the angle, about the HJC-KNE line, by which
  the THI wand marker lies out of the plane of HJC, KNE and the true knee
  centre (the chord function needs it in that plane);
* the **tibial torsion**: the angle of the knee axis from the ankle axis about
  the shank's long axis;
* the **shank rotation** offset: the angle, about the KJC-ANK line, of the TIB
  wand marker out of the plane of KJC, ANK and the true ankle centre, beyond
  the tibial torsion;
* the **static plantarflexion** and **rotation** offsets of the foot: the
  rotation from the uncorrected foot (ankle centre to toe) to the heel-toe
  foot, used for the dynamic foot when the dynamic trial has no heel marker.

:func:`~ahbm.gait.analyze_gait` applies them to the dynamic trial when
a static trial is given (``static=``); the offsets are stored in the result's
subject parameters and its processing record.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ahbm.errors import AhbmWarning, DataError
from ahbm.gait.frames import foot_offsets, signed_angle_about
from ahbm.gait.markersets import SIDES
from ahbm.gait.subject import SubjectParameters
from ahbm.kinematics.joint_centres import (
    chord_joint_centre,
    chord_offset_angle,
    hip_joint_centre_davis,
)
from ahbm.kinematics.markers import frame_from_landmarks
from ahbm.types import ResultRepr

__all__ = ["StaticCalibration", "static_calibration", "kad_knee_axis"]


@dataclass(frozen=True, repr=False)
class StaticCalibration(ResultRepr):
    """Output of :func:`static_calibration`.

    Attributes
    ----------
    subject : SubjectParameters
        The subject with ``thigh_rotation``, ``shank_rotation`` and
        ``tibial_torsion`` set from the static trial (where it shows them).
    foot_offset : dict
        ``{side: (3, 3)}`` rotation from the ankle-toe foot frame to the
        heel-toe one (:func:`~ahbm.gait.foot_offsets`).
    offsets : dict
        ``{"Left": {"thigh_rotation": rad, "shank_rotation": rad,
        "tibial_torsion": rad, "static_plantarflexion": rad,
        "static_rotation": rad}, "Right": {...}}``.
    sources : dict
        ``{"Left": {"knee": "KAD" | "medial epicondyle" | "none", "ankle":
        "medial malleolus" | "none"}, ...}``: what the static trial showed.
    """

    subject: SubjectParameters
    foot_offset: dict
    offsets: dict
    sources: dict


def kad_knee_axis(kax, kd1, kd2, *, side: str, pelvis_right):
    """Knee flexion axis and lateral knee point from the three markers of a knee alignment device.

    A knee alignment device (KAD) is a clamp whose hub sits on the lateral
    femoral epicondyle with three equal, mutually perpendicular arms: the
    axis arm (marker ``KAX``) along the knee flexion axis, pointing
    laterally, and two arms (``KD1``, ``KD2``) perpendicular to it. The
    hub is the corner of the cube the three arm tips span.

    Parameters
    ----------
    kax, kd1, kd2 : array_like, shape (n, 3)
        The KAD's markers (KAX, or the lateral knee marker KNE that some labs
        use for it, and the two arm markers KD1, KD2), m.
    side : {"Left", "Right"}
    pelvis_right : array_like, shape (n, 3)
        The pelvis's right axis (z), to tell medial from lateral.

    Returns
    -------
    axis : ndarray, shape (n, 3)
        Unit knee flexion axis pointing medially: from the KAX marker through
        the hub.
    point : ndarray, shape (n, 3)
        The hub (the cube's corner: the centroid of the three markers moved
        medially by ``L / sqrt(3)`` along the normal of their plane, ``L``
        the arm length, the markers' mean distance over ``sqrt(2)``), the
        virtual lateral knee marker of the static trial.

    Raises
    ------
    DataError
        The markers are collinear or coincide.

    Warns
    -----
    AhbmWarning
        The three distances between the markers differ by more than 20 %
        (the device is not a right-angled three-arm KAD, or a label is
        swapped with another marker).

    Examples
    --------
    >>> import numpy as np
    >>> hub = np.zeros((1, 3)); L = 0.08
    >>> kax = hub + [[0, 0, L]]  # right knee: lateral is +z here
    >>> kd1 = hub + L * np.array([[np.sqrt(0.5), np.sqrt(0.5), 0]])
    >>> kd2 = hub + L * np.array([[-np.sqrt(0.5), np.sqrt(0.5), 0]])
    >>> axis, point = kad_knee_axis(kax, kd1, kd2, side="Right", pelvis_right=[[0, 0, 1.0]])
    >>> (axis.round(12) + 0.0).tolist(), (point.round(12) + 0.0).tolist()
    ([[0.0, 0.0, -1.0]], [[0.0, 0.0, 0.0]])
    """
    kax, kd1, kd2 = (np.asarray(x, dtype=float) for x in (kax, kd1, kd2))
    n = np.cross(kd1 - kax, kd2 - kax)
    norm = np.linalg.norm(n, axis=-1, keepdims=True)
    if not np.all(norm > 1e-6):
        raise DataError(
            f"{side} knee alignment device: its three markers are collinear or coincide; "
            "check the KAX/KNE, KD1 and KD2 labels of the static trial"
        )
    n = n / norm
    d = np.stack(
        [np.linalg.norm(a - b, axis=-1) for a, b in ((kax, kd1), (kax, kd2), (kd1, kd2))], -1
    )
    spread = (d.max(axis=-1) - d.min(axis=-1)) / d.mean(axis=-1)
    if np.nanmax(spread) > 0.2:
        warnings.warn(
            f"{side} knee alignment device: the distances between its markers differ by up to "
            f"{100 * np.nanmax(spread):.0f} % ({1000 * np.nanmin(d):.0f}-"
            f"{1000 * np.nanmax(d):.0f} mm); a KAD's three arms are equal and at right angles, "
            "so the hub and knee axis found from them are doubtful (check the KAX, KD1, KD2 "
            "labels)",
            AhbmWarning,
            stacklevel=3,
        )
    s = 1.0 if side == "Right" else -1.0
    lateral = s * np.asarray(pelvis_right, dtype=float)
    n = np.where((np.sum(n * lateral, -1) > 0)[..., None], -n, n)  # n now points medially
    arm = d.mean(axis=-1, keepdims=True) / np.sqrt(2.0)
    hub = (kax + kd1 + kd2) / 3.0 + n * arm / np.sqrt(3.0)
    axis = hub - kax
    return axis / np.linalg.norm(axis, axis=-1, keepdims=True), hub


def _mean(points):
    p = np.asarray(points, dtype=float)
    ok = np.isfinite(p).all(axis=-1)
    if not ok.any():
        return None
    return p[ok].mean(axis=0)[None, :]


def static_calibration(static_mk: dict, subject: SubjectParameters, *, warn: bool = True, keep=()):
    """Plug-in Gait's static offsets from a static standing trial.

    Parameters
    ----------
    static_mk : dict
        Canonical markers of the static trial ``{name: (n_frames, 3)}``, m,
        Z-up (:func:`~ahbm.gait.markers.static_markers`); the mean
        position of each marker over its valid frames is used. Used when
        present: KAD markers (``?KD1``, ``?KD2`` with ``?KAX`` or ``?KNE``),
        medial epicondyles (``?KNM``), medial malleoli (``?ANM``), heels
        (``?HEE``).
    subject : SubjectParameters
        Widths, leg lengths, marker radius; its torsion and wand rotations
        are kept where the static trial does not show them.
    warn : bool
        Warn when a side has neither a KAD nor medial markers (the offsets
        of that side then stay as given).
    keep : sequence of str
        Names among ``"tibial_torsion"``, ``"thigh_rotation"``,
        ``"shank_rotation"`` whose given values are kept instead of measured
        (:func:`~ahbm.gait.analyze_gait` keeps a torsion given in its
        settings).

    Returns
    -------
    StaticCalibration

    Notes
    -----
    Per side, with ``s = +1`` right and ``-1`` left:

    1. Knee: with a KAD, its hub (:func:`kad_knee_axis`) is the lateral knee
       point and the knee centre follows from the chord function with the
       hub, the hip centre and the KAX marker as the wand (``knee_width / 2 +
       marker_radius`` from the hub, in the plane of the three); with a medial
       epicondyle marker, the centre is the mid-epicondyle point and the axis
       runs from KNE to KNM.
    2. ``thigh_rotation = -s·β`` with β the chord's offset angle of THI at
       the true knee centre (:func:`~ahbm.kinematics.joint_centres.chord_offset_angle`:
       about the KJC→HJC line, from KNE to THI): the dynamic trial's chord
       takes THI out of the plane by ``-s·thigh_rotation``.
    3. Ankle: with a medial malleolus marker the centre is the mid-malleolar
       point and the axis runs from ANK to ANM. ``tibial_torsion = s·φ`` with
       φ the angle from the ankle axis to the knee axis about the shank's long
       axis (AJC→KJC).
    4. ``shank_rotation = tibial_torsion - s·β`` with β the chord's offset
       angle of TIB at the true ankle centre (about the AJC→KJC line, from
       ANK to TIB), so that the dynamic chord's ``s·(tibial_torsion -
       shank_rotation)`` gives it back. With a KAD and no medial malleolus,
       the ankle centre is the chord's with the KAX marker as the wand and
       the offset angle ``s·tibial_torsion`` (the torsion as given or read,
       0 by default).
    5. Foot offsets as :func:`~ahbm.gait.foot_offsets`, with the
       calibrated knee and ankle centres; reported as the static
       plantarflexion (about the foot's z axis: the ankle-toe line toes down
       of the heel-toe line positive) and rotation (about its y axis: the
       ankle-toe line turned medially, toe-in, positive).

    Examples
    --------
    >>> cal = static_calibration(static_mk, subject)  # doctest: +SKIP
    >>> cal.offsets["Left"]["tibial_torsion"]  # doctest: +SKIP
    0.31
    """
    mk = {k: m for k, v in static_mk.items() if (m := _mean(v)) is not None}
    for need in ("LASI", "RASI", "SACR"):
        if need not in mk:
            raise DataError(f"static trial: marker {need} is never visible; it is needed")
    mid = 0.5 * (mk["LASI"] + mk["RASI"])
    T = frame_from_landmarks(mid, mk["RASI"], 2 * mid - mk["SACR"], axes="zx")
    Rp = T[..., :3, :3]
    thr, shr, tt = (dict(getattr(subject, k)) for k in ("thigh_rotation", "shank_rotation",
                                                          "tibial_torsion"))  # fmt: skip
    sources, missing = {}, []
    r = subject.marker_radius
    for side, p in SIDES:
        s = 1.0 if side == "Right" else -1.0
        src = {"knee": "none", "ankle": "none"}
        h_local = hip_joint_centre_davis(
            leg_length=subject.leg_length[side],
            inter_asis_distance=subject.inter_asis_distance,
            side=side.lower(),
            marker_radius=r,
            asis_trochanter_distance=subject.asis_trochanter_distance.get(side),
        )
        hjc = np.einsum("nij,j->ni", Rp, h_local) + mid
        kne = mk.get(p + "KNE")
        kjc = knee_axis = None
        kad = [mk.get(p + k) for k in ("KD1", "KD2")]
        kax = mk.get(p + "KAX", kne)
        if kax is not None and all(x is not None for x in kad):
            _, point = kad_knee_axis(kax, *kad, side=side, pelvis_right=Rp[..., :, 2])
            # Plug-in Gait's chord from the hub, with the axis arm's marker as the wand
            kjc = chord_joint_centre(hjc, point, kax, subject.knee_width[side], marker_radius=r)
            knee_axis = (kjc - point) / np.linalg.norm(kjc - point, axis=-1, keepdims=True)
            kne = point if kne is None else kne  # the dynamic trial turns THI about its KNE
            src["knee"] = "KAD"
        elif kne is not None and p + "KNM" in mk:
            kjc = 0.5 * (kne + mk[p + "KNM"])
            knee_axis = (mk[p + "KNM"] - kne) / np.linalg.norm(mk[p + "KNM"] - kne)
            src["knee"] = "medial epicondyle"
        if kjc is not None and p + "THI" in mk and "thigh_rotation" not in keep:
            beta = chord_offset_angle(hjc, kne, mk[p + "THI"], kjc)
            thr[side] = float(-s * beta[0])
        if kjc is None:  # the dynamic construction with the given offsets
            kjc = chord_joint_centre(
                hjc, kne, mk[p + "THI"], subject.knee_width[side], marker_radius=r,
                offset_angle=-s * thr.get(side, 0.0),
            )  # fmt: skip
        ank = mk.get(p + "ANK")
        if ank is not None and p + "ANM" in mk:
            ajc = 0.5 * (ank + mk[p + "ANM"])
            ankle_axis = mk[p + "ANM"] - ank
            src["ankle"] = "medial malleolus"
            if knee_axis is not None and "tibial_torsion" not in keep:
                phi = signed_angle_about(ankle_axis, knee_axis, kjc - ajc)
                tt[side] = float(s * phi[0])
            if p + "TIB" in mk and "shank_rotation" not in keep:
                beta = chord_offset_angle(kjc, ank, mk[p + "TIB"], ajc)
                shr[side] = float(tt[side] - s * beta[0])
        elif ank is not None and src["knee"] == "KAD" and p + "TIB" in mk:
            # Plug-in Gait with a KAD and no medial malleolus: the ankle centre from the
            # KAX marker (in the knee's plane) as the wand, out of the plane by the tibial
            # torsion, then TIB's rotation measured there
            ajc = chord_joint_centre(
                kjc, ank, kax, subject.ankle_width[side], marker_radius=r,
                offset_angle=s * tt.get(side, 0.0),
            )  # fmt: skip
            src["ankle"] = "KAD and the tibial torsion"
            if "shank_rotation" not in keep:
                beta = chord_offset_angle(kjc, ank, mk[p + "TIB"], ajc)
                shr[side] = float(tt[side] - s * beta[0])
        if src["knee"] == "none" and src["ankle"] == "none":
            missing.append(side)
        sources[side] = src
    cal_subject = subject.replace(thigh_rotation=thr, shank_rotation=shr, tibial_torsion=tt)
    full = dict(static_mk)
    for side, p in SIDES:  # the KAD's hub stands for a lateral knee marker it replaced
        if p + "KNE" not in full and all(p + k in full for k in ("KAX", "KD1", "KD2")):
            mid = 0.5 * (full["LASI"] + full["RASI"])
            right = full["RASI"] - mid
            full[p + "KNE"] = kad_knee_axis(
                full[p + "KAX"], full[p + "KD1"], full[p + "KD2"], side=side, pelvis_right=right
            )[1]
    offsets_R = foot_offsets(full, cal_subject)
    offsets = {}
    for side, _ in SIDES:
        s = 1.0 if side == "Right" else -1.0
        R = offsets_R.get(side)
        pf = rot = 0.0
        if R is not None:  # heel-toe x axis seen from the ankle-toe foot frame
            x = R[:, 0]
            pf = float(np.arctan2(x[1], x[0]))  # ankle-toe line toes down of heel-toe: +
            rot = float(s * np.arctan2(x[2], np.hypot(x[0], x[1])))  # ankle-toe toe-in: +
        offsets[side] = {
            "thigh_rotation": thr[side],
            "shank_rotation": shr[side],
            "tibial_torsion": tt[side],
            "static_plantarflexion": pf,
            "static_rotation": rot,
        }
    cal_subject = cal_subject.replace(
        static_plantarflexion={k: v["static_plantarflexion"] for k, v in offsets.items()},
        static_rotation={k: v["static_rotation"] for k, v in offsets.items()},
        foot_offsets_from="static trial" if offsets_R else "none",
    )
    if warn and missing:
        warnings.warn(
            f"static trial: no knee alignment device (KD1, KD2 with KAX or KNE) and no "
            f"medial knee or ankle markers (KNM, ANM) on the {' and '.join(missing)} side(s); "
            "the thigh/shank rotation and tibial torsion stay as given (0 by default)",
            AhbmWarning,
            stacklevel=2,
        )
    return StaticCalibration(cal_subject, offsets_R, offsets, sources)
