"""The private engine shared by ahbm's packages (not public API).

Everything the kinematics, dynamics and later packages share below their
public functions lives here and is imported openly by them: the compiled
multibody kernels and the node plan they run on (``kernels``), and the batch
kinematic primitives (layout conventions, joint transforms, motion/force
cross products, transforms between frames). DESIGN.md's rule: no private
name crosses a package boundary except from this engine and from
``ahbm._validation`` / ``ahbm._files``.
"""
