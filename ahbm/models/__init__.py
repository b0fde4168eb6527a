"""Example models built from the other modules: pendulums, the lower
extremity gait model, the head-neck sled model, the 15-segment whole body.
"""

__all__: list[str] = []
