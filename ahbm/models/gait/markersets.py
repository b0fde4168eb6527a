"""Marker sets of the gait model: the Plug-in Gait names and mappings of other sets."""

from __future__ import annotations

from typing import Any

__all__ = ["PLUG_IN_GAIT_MARKERS", "MARKER_SETS", "SIDES", "G"]

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
