"""Example models built from the other modules: pendulums, the two-joint arm,
the head-neck sled model, the 15-segment whole body, HeiMan, Winter's sagittal
model. The lower-extremity gait model and its pipeline are :mod:`ahbm.gait`.
"""

from ahbm.models.airbag import HeadLoad, airbag_force, airbag_test, estimate_head_load
from ahbm.models.arm import ARM_MUSCLES, arm_model
from ahbm.models.head_neck import (
    HEAD_NECK_JOINTS,
    HEAD_NECK_PARAMETERS,
    BaseAcceleration,
    exponential_spring,
    head_neck_model,
    intervertebral_elements,
    sled_forces,
    sled_pulse,
    sled_test,
)
from ahbm.models.heiman import HEIMAN_WIDTHS, heiman_model
from ahbm.models.human15 import HUMAN15_PARAMETERS, human15
from ahbm.models.pendulum import pendulum_torque, single_pendulum
from ahbm.models.pendulums import double_pendulum_3d, triple_pendulum_euler
from ahbm.models.sagittal import SAGITTAL_MARKERS, SagittalResult, sagittal_inverse_dynamics
from ahbm.models.whole_body import (
    JOINT_PROPERTIES,
    chest_impact,
    half_sine,
    joint_elements,
    whole_body_model,
)

__all__: list[str] = [
    # two-joint arm with six muscles (arm.py)
    "ARM_MUSCLES",
    "arm_model",
    "HUMAN15_PARAMETERS",
    "double_pendulum_3d",
    "human15",
    "triple_pendulum_euler",
    # Winter's 2-D sagittal model (sagittal.py)
    "SAGITTAL_MARKERS",
    "SagittalResult",
    "sagittal_inverse_dynamics",
    # example models of AHBM chapter 5 (whole_body, head_neck, airbag, heiman, pendulum)
    "BaseAcceleration",
    "HEAD_NECK_JOINTS",
    "HEAD_NECK_PARAMETERS",
    "HEIMAN_WIDTHS",
    "HeadLoad",
    "JOINT_PROPERTIES",
    "airbag_force",
    "airbag_test",
    "chest_impact",
    "estimate_head_load",
    "exponential_spring",
    "half_sine",
    "head_neck_model",
    "heiman_model",
    "intervertebral_elements",
    "joint_elements",
    "pendulum_torque",
    "single_pendulum",
    "sled_forces",
    "sled_pulse",
    "sled_test",
    "whole_body_model",
]
