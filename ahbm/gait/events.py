"""Stage 4 of the gait pipeline: foot strikes and foot offs (kinematic, refined by the plates)."""

from __future__ import annotations

import numpy as np

from ahbm.analysis.events import force_plate_events, zeni_events
from ahbm.errors import DataError
from ahbm.gait.frames import SEGMENTS, SegmentFrames
from ahbm.gait.markers import GaitMarkers
from ahbm.gait.markersets import SIDES
from ahbm.types import Event

__all__ = [
    "EVENT_SOURCES",
    "FOOT_INDEX",
    "event_problems",
    "file_gait_events",
    "gait_events",
    "select_gait_events",
]

#: Side -> index of its foot in :data:`~ahbm.gait.frames.SEGMENTS`.
FOOT_INDEX = {side: SEGMENTS.index(f"foot_{side}") for side, _ in SIDES}


def gait_events(
    markers: GaitMarkers, frames: SegmentFrames, *, assignment=None, threshold: float = 20.0
) -> list:
    """Foot strikes and foot offs of both feet.

    Parameters
    ----------
    markers : GaitMarkers
        Output of :func:`~ahbm.gait.gait_markers` (its gap-filled
        heel, toe and sacrum markers and its force plates are used).
    frames : SegmentFrames
        Gives the direction of progression.
    assignment : PlateAssignment, optional
        Output of :func:`~ahbm.gait.assign_plates`: a plate contact
        attributed to one foot replaces that foot's kinematic events within
        0.15 s.
    threshold : float
        Force plate contact threshold, N.

    Returns
    -------
    list of Event
        Sorted by time; ``label`` "Foot Strike" / "Foot Off", ``context``
        "Left" / "Right", ``description`` the source ("zeni (LHEE)",
        "force plate 0").

    Notes
    -----
    Kinematic events by Zeni et al. (2008) along the progression direction
    (also right on a treadmill), on the heel marker (the ankle marker when no
    heel is present) and the toe marker.

    Examples
    --------
    >>> from ahbm.gait import synthetic_walking_trial
    >>> from ahbm.gait import gait_markers, segment_frames, subject_parameters
    >>> trial, truth = synthetic_walking_trial()
    >>> mk = gait_markers(trial)
    >>> fr = segment_frames(mk.as_dict(), truth.params)
    >>> ev = gait_events(mk, fr)
    >>> sorted({e.label for e in ev})
    ['Foot Off', 'Foot Strike']
    """
    names = list(markers.names)
    filled, time = markers.filled, markers.time
    events = []
    for side, p in SIDES:
        hname = p + "HEE" if p + "HEE" in names else p + "ANK"
        st_, of_ = zeni_events(
            filled[:, names.index(hname)],
            filled[:, names.index(p + "TOE")],
            filled[:, names.index("SACR")],
            time=time,
            direction=frames.forward,
        )
        events += [Event("Foot Strike", float(x), side, f"zeni ({hname})") for x in st_]
        events += [Event("Foot Off", float(x), side, f"zeni ({p}TOE)") for x in of_]
    if assignment is None:
        return sorted(events, key=lambda x: x.time)
    return _merge_plate_events(events, markers.plates, assignment, time, threshold)


def _merge_plate_events(events, plates, assign, time, threshold):
    """Replace kinematic events by force plate contacts of the foot assigned to each plate."""
    out = list(events)
    side_of = {i: side for side, i in FOOT_INDEX.items()}
    for k, plate in enumerate(plates):
        fz = np.abs(np.asarray(plate.force, float)[:, 2])
        ts = float(time[0]) + np.arange(fz.size) / plate.rate
        st, of = force_plate_events(fz, time=ts, threshold=threshold)
        for s in st:
            ends = of[of > s]
            e = ends[0] if ends.size else time[-1]
            inside = (time >= s) & (time <= e)
            who = assign.plate_of[inside, k]
            unassigned = int((who < 0).sum())
            who = who[who >= 0]
            # one foot's contact only: a load that passes from one foot to the other
            # without unloading the plate (the next heel down before the last toe is off,
            # as on a split-belt treadmill when a foot crosses the belts' line), or whose
            # frames are mostly ambiguous, has no strike or off of its own
            if not who.size or np.unique(who).size > 1 or unassigned > 0.2 * inside.sum():
                continue
            side = side_of.get(int(who[0]))
            if side is None:
                continue
            new = [Event("Foot Strike", float(s), side, f"force plate {k}")]
            if ends.size:
                new.append(Event("Foot Off", float(e), side, f"force plate {k}"))
            for ev in new:
                out = [
                    x
                    for x in out
                    if not (
                        x.label == ev.label and x.context == side and abs(x.time - ev.time) <= 0.15
                    )
                ]
                out.append(ev)
    return _drop_conflicting_kinematic(sorted(out, key=lambda x: x.time))


def _drop_conflicting_kinematic(events, min_gap: float = 0.1) -> list:
    """Drop kinematic events that break a side's strike/off alternation next to plate events.

    A kinematic event within `min_gap` s of the side's previous event, or of the same kind
    as a neighbouring plate event (e.g. a Zeni "strike" just after the plate's foot off at
    the end of a trial), cannot be right; the plate event is kept.
    """
    out = list(events)
    for side, _ in SIDES:
        changed = True
        while changed:
            changed = False
            ev = [e for e in out if e.context == side]
            for a, b in zip(ev[:-1], ev[1:], strict=True):
                if a.label != b.label and b.time - a.time >= min_gap:
                    continue
                plate = [e for e in (a, b) if e.description.startswith("force plate")]
                kin = [e for e in (a, b) if not e.description.startswith("force plate")]
                if len(plate) == 1 and len(kin) == 1:
                    out.remove(kin[0])
                    changed = True
                    break
    return out


#: Event sources of :func:`select_gait_events` (``analyze_gait(events=...)``).
EVENT_SOURCES = ("auto", "file", "force_plates", "kinematic")


#: Short event labels of C3D headers and legacy files: side letter and event code.
_SHORT_LABELS = {
    side[0] + code: (side, kind)
    for side in ("Left", "Right")
    for kind, codes in (("foot strike", ("HS", "IC", "FS", "FC")), ("foot off", ("TO", "FO")))
    for code in codes
}


def file_gait_events(trial_events, time) -> list:
    """The trial's own foot strikes and foot offs (e.g. from the C3D EVENT group).

    Parameters
    ----------
    trial_events : sequence of Event
        ``trial.events``: "Foot Strike" / "Foot Off" with context "Left" /
        "Right" (any case), or the short labels of C3D header events without
        a context (``RHS``, ``LIC``, ``RFS`` strikes; ``LTO``, ``RFO`` offs);
        others are ignored.
    time : ndarray, shape (n_frames,)
        The trial's frame times, s (events outside them are dropped).

    Returns
    -------
    list of Event
        Sorted, ``description`` "file".

    Examples
    --------
    >>> ev = [Event("Foot Strike", 0.4, "left"), Event("Event", 0.5, "General"),
    ...       Event("RTO", 0.6, "")]
    >>> [(e.label, e.context) for e in file_gait_events(ev, np.linspace(0, 1, 11))]
    [('Foot Strike', 'Left'), ('Foot Off', 'Right')]
    """
    out = []
    t0, t1 = float(time[0]), float(time[-1])
    for e in trial_events or []:
        label = str(getattr(e, "label", "")).strip().lower()
        ctx = str(getattr(e, "context", "")).strip().capitalize()
        short = _SHORT_LABELS.get(label.upper()) if ctx in ("", "General") else None
        if short is not None:  # header events: "RHS", "LTO", "RIC", "LFO" ...
            ctx, label = short
        if ctx not in ("Left", "Right") or label not in ("foot strike", "foot off"):
            continue
        t = float(e.time)
        if t0 - 1e-9 <= t <= t1 + 1e-9:
            out.append(
                Event("Foot Strike" if label == "foot strike" else "Foot Off", t, ctx, "file")
            )
    return sorted(out, key=lambda x: x.time)


def event_problems(events) -> list:
    """Why a list of foot events cannot be a walking trial's events (empty when fine).

    Checks per side: at least one foot strike, strikes and offs alternate,
    no two events of one side closer than 0.1 s.

    Examples
    --------
    >>> event_problems([Event("Foot Strike", 0.0, "Left"), Event("Foot Strike", 0.05, "Left")])
    ['Left: two foot strikes in a row at 0.000 and 0.050 s', 'Right: no foot strike']
    """
    problems = []
    for side, _ in SIDES:
        ev = sorted((e.time, e.label) for e in events if e.context == side)
        if not any(lab == "Foot Strike" for _, lab in ev):
            problems.append(f"{side}: no foot strike")
            continue
        for (ta, la), (tb, lb) in zip(ev[:-1], ev[1:], strict=True):
            if la == lb:
                problems.append(f"{side}: two {la.lower()}s in a row at {ta:.3f} and {tb:.3f} s")
                break
            if tb - ta < 0.1:
                problems.append(f"{side}: {la} and {lb} only {tb - ta:.3f} s apart at {ta:.3f} s")
                break
    return problems


def _disagreements(file_events, plate_events, tolerance: float = 0.05) -> list:
    """Plate contacts (strike or off of one foot) that the file's events miss by > `tolerance` s."""
    out = []
    for e in plate_events:
        if not e.description.startswith("force plate"):
            continue
        same = [f.time for f in file_events if f.context == e.context and f.label == e.label]
        if not same or min(abs(t - e.time) for t in same) > tolerance:
            near = f"nearest at {min(same, key=lambda t: abs(t - e.time)):.3f} s" if same else (
                "none")  # fmt: skip
            out.append(
                f"{e.context} {e.label.lower()} of {e.description} at {e.time:.3f} s "
                f"disagrees with the file's ({near})"
            )
    return out


def select_gait_events(
    source, markers, frames, *, trial_events=(), assignment=None, threshold: float = 20.0
):
    """Foot events from the chosen source, and what was used.

    Parameters
    ----------
    source : {"auto", "file", "force_plates", "kinematic"}
        ``"file"``: the trial's own events (DataError when it has none or
        they fail :func:`event_problems`); ``"force_plates"``: kinematic
        events replaced by the plate contacts attributed to one foot;
        ``"kinematic"``: Zeni et al. only; ``"auto"``: the file's events when
        they pass :func:`event_problems` and agree within 0.05 s with every
        plate contact attributed to one foot, else the plates' (when a plate
        contact is attributed), else kinematic.
    markers, frames, assignment, threshold :
        As :func:`gait_events`.
    trial_events : sequence of Event
        ``trial.events``.

    Returns
    -------
    events : list of Event
    used : str
        ``"file"``, ``"force_plates"`` or ``"kinematic"``, with the reason
        when ``"auto"`` passed over the file's events.
    """
    if source not in EVENT_SOURCES:
        raise DataError(
            f"`events` must be one of {', '.join(map(repr, EVENT_SOURCES))}, got {source!r}"
        )
    plate_ev = None
    if assignment is not None and source != "kinematic":
        plate_ev = gait_events(markers, frames, assignment=assignment, threshold=threshold)
    if source in ("file", "auto"):
        ev = file_gait_events(trial_events, markers.time)
        problems = event_problems(ev) if ev else ["none in the file"]
        if not problems and source == "auto" and plate_ev is not None:
            problems = _disagreements(ev, plate_ev)
        if not problems:
            return ev, "file"
        if source == "file":
            raise DataError(
                f"{markers.source}: events='file' but the file's events cannot be used: "
                f"{'; '.join(problems)}; use events='auto', 'force_plates' or 'kinematic'"
            )
        why = "; ".join(problems)
    if source == "kinematic" or assignment is None:
        used = "kinematic"
        ev = gait_events(markers, frames, threshold=threshold)
    else:
        ev = plate_ev
        used = "force_plates" if any(e.description.startswith("force plate") for e in ev) else (
            "kinematic")  # fmt: skip
    if source == "auto":
        used = f"{used} (file events not used: {why})"
    return ev, used
