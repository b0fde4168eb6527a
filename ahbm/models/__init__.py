"""Example models built from the other modules: pendulums, the two-joint arm,
the head-neck sled model, the 15-segment whole body, HeiMan, Winter's sagittal
model. The lower-extremity gait model and its pipeline are :mod:`ahbm.gait`.

- :mod:`ahbm.models.pendulums`: the teaching pendulum, the 3-D double
  pendulum and the Euler triple pendulum.
- :mod:`ahbm.models.arm`: the two-joint arm with six muscles.
- :mod:`ahbm.models.fifteen_segment` (:func:`human15`) and
  :mod:`ahbm.models.whole_body`: the 15-segment whole body and its impact model.
- :mod:`ahbm.models.heiman`: the HeiMan-like whole body.
- :mod:`ahbm.models.santos`: Chung's 55-DOF Denavit–Hartenberg Santos skeleton.
- :mod:`ahbm.models.head_neck` and :mod:`ahbm.models.airbag`: the head-neck
  sled model and the airbag test.
- :mod:`ahbm.models.sagittal`: Winter's 2-D sagittal inverse dynamics.
- :mod:`ahbm.models.nonholonomic`: a disk rolling without slip and a knife
  edge (skate), with velocity-level constraints.

Model builders take the subject as ``mass=``, ``height=`` (kg, m) and gravity
as ``gravity=`` (a vector in the world frame, m/s²).
"""

from ahbm._internal.lazy import lazy_package

__getattr__, __dir__, __all__ = lazy_package(
    __name__,
    [
        "pendulums",
        "arm",
        "fifteen_segment",
        "whole_body",
        "heiman",
        "heiman_contact",
        "santos",
        "head_neck",
        "airbag",
        "sagittal",
        "nonholonomic",
    ],
)
