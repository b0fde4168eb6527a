"""Example models built from the other modules: pendulums, the lower
extremity gait model, the head-neck sled model, the 15-segment whole body.
"""

from ahbm.models.gait_demo import run_gait_demo, synthetic_walking_trial
from ahbm.models.human15 import HUMAN15_PARAMETERS, human15
from ahbm.models.lower_extremity import (
    MARKER_SETS,
    GaitResult,
    SubjectParameters,
    analyze_gait,
    lower_extremity_model,
    save_gait_result,
    subject_parameters,
)
from ahbm.models.pendulums import double_pendulum_3d, triple_pendulum_euler

__all__: list[str] = [
    "HUMAN15_PARAMETERS",
    "double_pendulum_3d",
    "human15",
    "triple_pendulum_euler",
    # lower-extremity gait model (lower_extremity.py, gait_demo.py)
    "GaitResult",
    "MARKER_SETS",
    "SubjectParameters",
    "analyze_gait",
    "lower_extremity_model",
    "run_gait_demo",
    "save_gait_result",
    "subject_parameters",
    "synthetic_walking_trial",
]
