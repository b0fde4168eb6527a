"""The private engine shared by ahbm's packages (not public API).

Everything the kinematics, dynamics and later packages share below their
public functions lives here and is imported openly by them:

* the compiled multibody kernels ``jit_rnea``, ``jit_crba``, ``jit_aba``,
  ``jit_derivatives`` and ``jit_derivatives_block`` (on the helpers of
  ``jit_common``), the node plan they run on (``node_plan``), their facade
  (``dispatch``: the wrappers the public functions call, single states, RNEA
  derivatives) and their compilation ahead of use (``compilation``);
  ``jit_constrained``: the compiled constraint
  rows, Cholesky KKT solve and coordinate rates of the single-state
  constrained right-hand side of ``simulate``; ``jit_points``: the point
  kinematics of one body in one state (world point, point velocity and bias
  acceleration, point Jacobian columns), the single coding of those formulas,
  called by ``jit_constrained`` and, through compiled frame loops, by ``state``;
* ``arrays``: the layout conventions (batch first in the public API, batch
  last inside per-body loops, ``_bl`` names), the one cross product and
  batch-last rotations of vectors (numpy only); ``checks``: the validation
  and flattening of a batch of states (``prepare``);
* ``jit_text``, ``jit_xml``: compiled readers of number blocks and XML;
* ``state``: the kinematic state (``Kinematics``, public as
  ``ahbm.kinematics.Kinematics``) and the batch-last point kinematics and
  Jacobians derived from it (computed by ``jit_points``) for
  ``ahbm.kinematics``, the marker IK, the force elements and the constraints.

docs/design.md's rule (checked by tests/test_layers.py): no private name crosses
a package boundary except from this engine and from ``ahbm._internal``.
"""
