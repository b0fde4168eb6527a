"""Body-segment parameters: regression tables (Dempster, de Leva, Dumas, ...),
geometric segment models, and scaling of a model's inertial parameters.
"""

from ahbm.bsp.geometric import ellipsoid, elliptical_cylinder, elliptical_frustum, truncated_cone
from ahbm.bsp.scaling import (
    SEGMENT_ALIASES,
    Measurement,
    SegmentScales,
    measurement_scale_factors,
    scale_inertia,
    scale_model,
    scale_segments,
    segment_scale_factors,
)
from ahbm.bsp.tables import (
    TABLES,
    BSPTable,
    SegmentData,
    SegmentParameters,
    compare_tables,
    get_table,
    parameters_to_dataframe,
    segment_parameters,
)

__all__ = [
    "SEGMENT_ALIASES",
    "Measurement",
    "SegmentScales",
    "measurement_scale_factors",
    "scale_inertia",
    "scale_model",
    "scale_segments",
    "segment_scale_factors",
    "TABLES",
    "BSPTable",
    "SegmentData",
    "SegmentParameters",
    "compare_tables",
    "ellipsoid",
    "elliptical_cylinder",
    "elliptical_frustum",
    "get_table",
    "parameters_to_dataframe",
    "segment_parameters",
    "truncated_cone",
]
