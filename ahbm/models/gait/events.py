"""Stage 4 of the gait pipeline: foot strikes and foot offs (kinematic, refined by the plates)."""

from __future__ import annotations

import numpy as np

from ahbm.analysis.events import force_plate_events, zeni_events
from ahbm.models.gait.frames import SEGMENTS, SegmentFrames
from ahbm.models.gait.markers import GaitMarkers
from ahbm.models.gait.markersets import SIDES
from ahbm.types import Event

__all__ = ["gait_events", "FOOT_INDEX"]

#: Side -> index of its foot in :data:`~ahbm.models.gait.frames.SEGMENTS`.
FOOT_INDEX = {side: SEGMENTS.index(f"foot_{side}") for side, _ in SIDES}


def gait_events(
    markers: GaitMarkers, frames: SegmentFrames, *, assignment=None, threshold: float = 20.0
) -> list:
    """Foot strikes and foot offs of both feet.

    Parameters
    ----------
    markers : GaitMarkers
        Output of :func:`~ahbm.models.gait.gait_markers` (its gap-filled
        heel, toe and sacrum markers and its force plates are used).
    frames : SegmentFrames
        Gives the direction of progression.
    assignment : PlateAssignment, optional
        Output of :func:`~ahbm.models.gait.assign_plates`: a plate contact
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
    >>> from ahbm.models import synthetic_walking_trial
    >>> from ahbm.models.gait import gait_markers, segment_frames, subject_parameters
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
            who = who[who >= 0]
            if not who.size:
                continue
            side = side_of.get(int(np.bincount(who).argmax()))
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
    return sorted(out, key=lambda x: x.time)
