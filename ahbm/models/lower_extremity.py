"""The seven-segment lower-extremity gait model: re-exports of :mod:`ahbm.models.gait`.

The pipeline moved to the package :mod:`ahbm.models.gait` (one module per
stage); this module keeps the names that ``from ahbm.models.lower_extremity
import ...`` found in ahbm 0.1.
"""

from __future__ import annotations

from ahbm.models.gait import (
    MARKER_SETS,
    PLUG_IN_GAIT_MARKERS,
    GaitResult,
    GaitSettings,
    SubjectParameters,
    analyze_gait,
    lower_extremity_model,
    save_gait_result,
    subject_parameters,
)

__all__ = [
    "PLUG_IN_GAIT_MARKERS",
    "MARKER_SETS",
    "SubjectParameters",
    "GaitResult",
    "GaitSettings",
    "subject_parameters",
    "analyze_gait",
    "save_gait_result",
    "lower_extremity_model",
]
