"""A planar two-joint arm (shoulder and elbow flexion) with six Hill-type muscles.

The six muscles of OpenSim's "arm26" teaching model, with the architecture of Holzbaur,
Murray & Delp (2005, Table 2): the long, lateral and medial heads of triceps, the long
and short heads of biceps and brachialis. The paths are straight lines between points
authored here (no wrapping surfaces), placed so that the moment arms (1-6 cm) and the
normalized fiber lengths (about 0.6-1.4 over the range of motion) are physiological.
Segment masses, centre-of-mass positions and radii of gyration are de Leva's (1996)
values for a 75 kg male; forearm and hand form one rigid body.

The arm moves in the sagittal plane of the world (x anterior, y up, z lateral): both
joints rotate about z, at q = 0 the arm hangs down, positive angles are flexion.

References
----------
Holzbaur KRS, Murray WM, Delp SL (2005) A model of the upper extremity for simulating
musculoskeletal surgery and analyzing neuromuscular control. Ann Biomed Eng 33:829-840.

de Leva P (1996) Adjustments to Zatsiorsky-Seluyanov's segment inertia parameters.
J Biomech 29:1223-1230.
"""

from __future__ import annotations

import numpy as np

from ahbm._internal.validation import as_choice
from ahbm.kinematics.tree import Model
from ahbm.muscles import Muscle, PathPoint

__all__ = ["ARM_MUSCLES", "arm_model"]

_BODY_MASS = 75.0
_UPPER_ARM_LENGTH = 0.29  # shoulder to elbow, m
_FOREARM_LENGTH = 0.26  # elbow to wrist, m
_HAND_LENGTH = 0.09  # wrist to the 3rd metacarpal head, m

#: Muscle architecture (Holzbaur et al. 2005, Table 2): F0 (N), optimal fiber length (m),
#: tendon slack length (m), pennation at optimal fiber length (rad).
ARM_MUSCLES = {
    "TRIlong": (798.52, 0.134, 0.143, 0.20943951),
    "TRIlat": (624.3, 0.1138, 0.098, 0.15707963),
    "TRImed": (624.3, 0.1138, 0.0908, 0.15707963),
    "BIClong": (624.3, 0.1157, 0.2723, 0.0),
    "BICshort": (435.56, 0.1321, 0.1923, 0.0),
    "BRA": (987.26, 0.0858, 0.0535, 0.0),
}

# Path points (body, location in the body frame, m). Humerus frame at the shoulder,
# forearm frame at the elbow, both with y along the segment towards the proximal joint.
# Insertions give elbow moment arms of 2-4.5 cm; each origin sits where the normalized
# fiber length is 1 at shoulder 0.4 rad, elbow 0.9 rad (rigid tendon).
_PATHS = {
    "TRIlong": (("ground", (-0.03, -0.039, 0.0)), ("forearm", (-0.022, 0.015, 0.0))),
    "TRIlat": (("humerus", (-0.02, -0.088, 0.0)), ("forearm", (-0.022, 0.015, 0.0))),
    "TRImed": (("humerus", (-0.015, -0.095, 0.0)), ("forearm", (-0.022, 0.015, 0.0))),
    "BIClong": (("ground", (0.005, 0.091, 0.0)), ("forearm", (0.015, -0.045, 0.0))),
    "BICshort": (("ground", (0.04, 0.037, 0.0)), ("forearm", (0.015, -0.045, 0.0))),
    "BRA": (("humerus", (0.02, -0.165, 0.0)), ("forearm", (0.01, -0.035, 0.0))),
}


def _segment(mass_fraction, length, com_fraction, gyration_fraction):
    """Mass (kg), COM distance from the proximal joint (m), central moment (kg m²)."""
    m = mass_fraction * _BODY_MASS
    return m, com_fraction * length, m * (gyration_fraction * length) ** 2


def arm_model(*, muscle_model: str = "DeGrooteFregly2016Muscle") -> Model:
    """The two-joint arm with six muscles (see the module notes).

    Parameters
    ----------
    muscle_model : {"DeGrooteFregly2016Muscle", "Thelen2003Muscle"}
        OpenSim class name stored in each :class:`~ahbm.muscles.Muscle` (selects the
        curve set's parameter defaults).

    Returns
    -------
    Model
        Bodies ``humerus`` (joint ``shoulder``) and ``forearm`` (joint ``elbow``),
        gravity ``(0, -9.81, 0)``, ``model.muscles`` the six muscles in the order of
        :data:`ARM_MUSCLES`.

    Raises
    ------
    DataError
        `muscle_model` is not one of the two class names.

    Examples
    --------
    >>> m = arm_model()
    >>> m.nq, [mu.name for mu in m.muscles][:2]
    (2, ['TRIlong', 'TRIlat'])
    """
    muscle_model = as_choice(
        muscle_model, "muscle_model", ("DeGrooteFregly2016Muscle", "Thelen2003Muscle")
    )
    m = Model("arm", gravity=(0.0, -9.81, 0.0))
    # de Leva (1996), male: mass fraction, COM from the proximal joint, sagittal r_gyr
    mu, cu, iu = _segment(0.0271, _UPPER_ARM_LENGTH, 0.5772, 0.285)
    mf, cf, i_f = _segment(0.0162, _FOREARM_LENGTH, 0.4574, 0.276)
    mh, ch, ih = _segment(0.0061, _HAND_LENGTH, 0.7900, 0.628)
    ch = _FOREARM_LENGTH + ch
    m_fh = mf + mh
    c_fh = (mf * cf + mh * ch) / m_fh
    i_fh = i_f + mf * (cf - c_fh) ** 2 + ih + mh * (ch - c_fh) ** 2
    z = {"type": "revolute", "axis": [0.0, 0.0, 1.0]}
    m.add_body("humerus", "ground", dict(z, name="shoulder"), mass=mu, com=(0.0, -cu, 0.0),
               inertia=np.diag([iu, 0.1 * iu, iu]))  # fmt: skip
    m.add_body("forearm", "humerus", dict(z, name="elbow"),
               position=(0.0, -_UPPER_ARM_LENGTH, 0.0), mass=m_fh, com=(0.0, -c_fh, 0.0),
               inertia=np.diag([i_fh, 0.1 * i_fh, i_fh]))  # fmt: skip
    muscles = []
    for name, (f0, lopt, lts, pen) in ARM_MUSCLES.items():
        points = tuple(
            PathPoint(f"{name}-P{k + 1}", body, loc) for k, (body, loc) in enumerate(_PATHS[name])
        )
        muscles.append(
            Muscle(
                name,
                points,
                model=muscle_model,
                max_isometric_force=f0,
                optimal_fiber_length=lopt,
                tendon_slack_length=lts,
                pennation_angle=pen,
                deactivation_time_constant=0.06 if muscle_model.startswith("DeGroote") else 0.05,
            )  # fmt: skip
        )
    m.muscles = muscles
    return m
