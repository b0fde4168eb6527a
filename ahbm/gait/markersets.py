"""Marker sets of the gait model: the Plug-in Gait names and mappings of other sets."""

from __future__ import annotations

from typing import Any

__all__ = [
    "PLUG_IN_GAIT_MARKERS",
    "MARKER_SETS",
    "SIDES",
    "G",
    "ALIASES",
    "STATIC_ALIASES",
    "STATIC_MARKERS",
    "MARKER_SET_TITLES",
    "detect_marker_set",
    "marker_set_requirements",
]

G = 9.81
SIDES = (("Left", "L"), ("Right", "R"))

#: Required Plug-in Gait lower-body markers (SACR may be replaced by LPSI + RPSI).
PLUG_IN_GAIT_MARKERS = (
    "LASI",
    "RASI",
    "SACR",
    "LTHI",
    "LKNE",
    "LTIB",
    "LANK",
    "LTOE",
    "RTHI",
    "RKNE",
    "RTIB",
    "RANK",
    "RTOE",
)
OPTIONAL_MARKERS = ("LPSI", "RPSI", "LHEE", "RHEE", "LKNM", "RKNM", "LANM", "RANM")
#: Markers used only in a static trial: the knee alignment device (KAD) and medial markers.
STATIC_MARKERS = ("LKAX", "LKD1", "LKD2", "RKAX", "RKD1", "RKD2", "LKNM", "RKNM", "LANM", "RANM")
#: Other labels of the same landmarks, tried when the canonical label is absent (the
#: side letter comes first): Helen Hayes / Vicon legacy labels for the dynamic trial.
ALIASES = {"SACR": ("VSAC", "SACRUM"), "TIB": ("SHA", "SHN"), "THI": ("THA",)}
#: Aliases tried in a static trial only (medial malleolus and epicondyle labels).
STATIC_ALIASES = {"ANM": ("MMA", "MAK", "MED", "MMAL"), "KNM": ("MKNE", "KNEM", "MEPI")}

#: Marker-name mappings for other marker sets: ``{"map": {canonical: label or
#: [labels averaged]}, "clusters": {canonical: [cluster labels]}}``. A canonical
#: marker listed in "clusters" and missing from the dynamic trial is rebuilt from
#: its cluster using the static trial (calibrated anatomical landmark).
MARKER_SETS: dict[str, dict[str, Any]] = {
    "plug_in_gait": {"map": {}, "clusters": {}},
    # OpenSim's gait2354 walking example (subject01_walk.trc / subject01_static.trc)
    "opensim": {
        "map": {
            "LASI": "L.ASIS",
            "RASI": "R.ASIS",
            "SACR": "V.Sacral",
            "LTHI": "L.Thigh.Upper",
            "RTHI": "R.Thigh.Upper",
            "LKNE": "L.Knee.Lat",
            "RKNE": "R.Knee.Lat",
            "LKNM": "L.Knee.Med",
            "RKNM": "R.Knee.Med",
            "LTIB": "L.Shank.Upper",
            "RTIB": "R.Shank.Upper",
            "LANK": "L.Ankle.Lat",
            "RANK": "R.Ankle.Lat",
            "LANM": "L.Ankle.Med",
            "RANM": "R.Ankle.Med",
            "LHEE": "L.Heel",
            "RHEE": "R.Heel",
            "LTOE": ["L.Toe.Lat", "L.Toe.Med"],
            "RTOE": ["R.Toe.Lat", "R.Toe.Med"],
        },
        "clusters": {
            "LKNE": ["L.Thigh.Upper", "L.Thigh.Front", "L.Thigh.Rear"],
            "RKNE": ["R.Thigh.Upper", "R.Thigh.Front", "R.Thigh.Rear"],
            "LANK": ["L.Shank.Upper", "L.Shank.Front", "L.Shank.Rear"],
            "RANK": ["R.Shank.Upper", "R.Shank.Front", "R.Shank.Rear"],
            "LKNM": ["L.Thigh.Upper", "L.Thigh.Front", "L.Thigh.Rear"],
            "RKNM": ["R.Thigh.Upper", "R.Thigh.Front", "R.Thigh.Rear"],
            "LANM": ["L.Shank.Upper", "L.Shank.Front", "L.Shank.Rear"],
            "RANM": ["R.Shank.Upper", "R.Shank.Front", "R.Shank.Rear"],
        },
    },
}


#: What each named marker set is, for messages.
MARKER_SET_TITLES = {
    "plug_in_gait": "Vicon Plug-in Gait lower body",
    "opensim": "OpenSim's gait2354 walking example, subject01_walk.trc",
}


def _core(label: str) -> str:
    return label[label.rindex(":") + 1 :] if ":" in label else label


def detect_marker_set(labels, *, min_share: float = 0.8):
    """Name of the marker set in :data:`MARKER_SETS` whose labels a trial has, or None.

    Parameters
    ----------
    labels : sequence of str
        The trial's marker labels (``Name:`` prefixes ignored).
    min_share : float
        Share of a set's labels that must be present (default 0.8); the
        labels that only a static trial holds (rebuilt from clusters) are not
        counted.

    Returns
    -------
    str or None
        The set with the largest share at or above `min_share`
        (``"plug_in_gait"`` for its required markers).

    Examples
    --------
    >>> detect_marker_set(["R.ASIS", "L.ASIS", "V.Sacral", "L.Thigh.Upper", "R.Thigh.Upper",
    ...                    "L.Shank.Upper", "R.Shank.Upper", "L.Heel", "R.Heel", "L.Toe.Lat",
    ...                    "L.Toe.Med", "R.Toe.Lat", "R.Toe.Med"])
    'opensim'
    >>> detect_marker_set(["LASI", "RASI"]) is None
    True
    """
    have = {_core(str(lab)) for lab in labels}
    best, share_best = None, 0.0
    for name, ms in MARKER_SETS.items():
        wanted = set()
        if not ms["map"]:
            wanted = set(PLUG_IN_GAIT_MARKERS)
        for canon, target in ms["map"].items():
            if canon in ms["clusters"]:
                continue  # only a static trial has it
            wanted |= {target} if isinstance(target, str) else set(target)
        share = len(wanted & have) / len(wanted) if wanted else 0.0
        if share >= min_share and share > share_best:
            best, share_best = name, share
    return best


def marker_set_requirements(marker_set) -> str:
    """What a marker set needs, in words (for error messages).

    Examples
    --------
    >>> "static trial" in marker_set_requirements("opensim")
    True
    """
    base = (
        "Plug-in Gait lower-body markers LASI, RASI, SACR (or LPSI and RPSI), and per side "
        "THI, KNE, TIB, ANK, TOE (HEE optional; legacy labels VSAC, SHA accepted)"
    )
    if isinstance(marker_set, str) and marker_set in MARKER_SETS:
        ms = MARKER_SETS[marker_set]
        if ms["clusters"]:
            labels = sorted({v if isinstance(v, str) else "+".join(v) for v in ms["map"].values()})
            rebuilt = ", ".join(sorted(ms["clusters"]))
            return (
                f"marker set {marker_set!r}: the labels {', '.join(labels)} and a static trial "
                f"(`static=`, CLI --static), which it needs to rebuild {rebuilt} from their "
                "clusters"
            )
    return base
