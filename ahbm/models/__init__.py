"""Example models built from the other modules: pendulums, the lower
extremity gait model, the head-neck sled model, the 15-segment whole body.
"""

from ahbm.models.human15 import HUMAN15_PARAMETERS, human15
from ahbm.models.pendulums import double_pendulum_3d, triple_pendulum_euler

__all__: list[str] = [
    "HUMAN15_PARAMETERS",
    "double_pendulum_3d",
    "human15",
    "triple_pendulum_euler",
]
