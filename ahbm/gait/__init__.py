"""The gait pipeline of the seven-segment lower-extremity model (Plug-in Gait marker set).

Pelvis, thighs, shanks and feet, six joints, the Conventional Gait Model
(Vicon Plug-in Gait, after Davis et al. 1991 and Vaughan, Davis & O'Connor's
*Dynamics of Human Gait*) marker set, joint centres by the Davis hip
regression and the chord function, Grood-Suntay joint angles with clinical
signs, segment-by-segment Newton-Euler inverse dynamics with the ground
reaction assigned to the foot on each plate, gait events, cycles and
spatiotemporal parameters: :func:`analyze_gait` turns a walking trial into a
:class:`GaitResult` and :func:`save_gait_result` stores it with the trial in an
ahbm HDF5 file. :func:`lower_extremity_model` builds the same model as a
multibody :class:`~ahbm.kinematics.tree.Model` (used by the synthetic demo).

Stages
------
Each stage is a plain function that can be called alone; :func:`analyze_gait`
composes them, with the processing options in one :class:`GaitSettings`:

1. :func:`gait_markers` (markers.py): canonical marker names, gap filling,
   low-pass filter, Z-up lab frame -> :class:`GaitMarkers`.
2. :func:`subject_parameters` (subject.py) -> :class:`SubjectParameters`.
3. :func:`segment_frames` (frames.py): joint centres, segment frames,
   direction of progression -> :class:`SegmentFrames`.
4. :func:`joint_angles` (angles.py): clinical angles, rad.
   With a static trial, :func:`static_calibration` (calibration.py): thigh
   and shank wand rotations, tibial torsion (knee alignment device or medial
   markers) and foot offsets, applied to the dynamic trial.
5. :func:`assign_plates` (plate zero offsets removed, loads under no foot
   ignored), :func:`select_gait_events` (the file's, the plates' or kinematic
   events) (kinetics.py, events.py).
6. :func:`joint_kinetics` (kinetics.py) -> :class:`GaitKinetics`.
7. :func:`gait_cycles` (cycles.py); :func:`gait_energetics` (energetics.py)
   -> :class:`GaitEnergetics`; :func:`check_cycles` and treadmill handling
   (checks.py); :class:`GaitResult` and :func:`save_gait_result` (result.py);
   :func:`analyze_gait_files` for many trials (batch.py).
8. Gait pattern scores against a normative reference: :func:`gait_profile_score`
   (GPS, GVS, Movement Analysis Profile; scores.py) and
   :func:`gait_deviation_index` (GDI, GDI*; gdi.py).

Every angle inside the result objects is in radians; degrees appear only in
the report, the figures and the text summary, which say so.

Segment frames (ISB axes, both sides, as :mod:`ahbm.kinematics.jcs`)
--------------------------------------------------------------------
* pelvis: origin mid-ASIS; z from LASI to RASI; x anterior in the plane of the
  ASISs and the sacrum (SACR, or the mid-PSIS point); y up.
* thigh: origin knee centre (KJC); y from KJC to the hip centre (HJC); z along
  the knee flexion axis (KJC to KNE on the right, KNE to KJC on the left).
* shank: origin ankle centre (AJC); y from AJC to KJC; z along the ankle axis
  (AJC and ANK); knee angles use it rotated about y by the tibial torsion,
  which also turns TIB about the KJC-ANK line before the ankle chord.
* foot: origin AJC; x from the heel to the toe marker when heel markers are
  available (dynamic trial, else a constant offset measured in the static
  trial), otherwise from AJC to TOE (the uncorrected Plug-in Gait foot, whose
  ankle angle then carries the foot's pitch as an offset); z in the plane of x
  and the shank's ankle axis; y up.

Joint centres: HJC by Davis et al. (1991) in the pelvis frame (Plug-in Gait
form, :func:`ahbm.kinematics.joint_centres.hip_joint_centre_davis`); KJC from HJC, KNE,
THI and the knee width and AJC from KJC, ANK, TIB and the ankle width by the
chord function (:func:`ahbm.kinematics.joint_centres.chord_joint_centre`).

Segment inertial parameters: de Leva (1996) (``bsp="de_leva"``, male by
default): masses and radii of gyration, thigh and shank COM fractions from the
proximal joint centre with the measured HJC-KJC and KJC-AJC lengths; the foot
COM halfway between AJC and TOE (Dempster's and Plug-in Gait's definition)
with the de Leva foot radii scaled by the AJC-TOE length. Vaughan's (1992)
regressions are not available; ``bsp="dempster_winter"`` is not offered
because Dempster gives no longitudinal radius of gyration.

References
----------
Davis, R.B. et al. (1991) Hum. Mov. Sci. 10:575-587. Vaughan, C.L., Davis, B.L.
& O'Connor, J.C. (1992) *Dynamics of Human Gait*. Vicon (2010) *Plug-in Gait
product guide*. de Leva, P. (1996) J. Biomech. 29:1223-1230. Grood, E.S. &
Suntay, W.J. (1983) J. Biomech. Eng. 105:136-144. AHBM report §4.4 and §5.1.
"""

from ahbm._internal.lazy import lazy_package

__getattr__, __dir__, __all__ = lazy_package(
    __name__,
    [
        "pipeline",
        "settings",
        "result",
        "markers",
        "markersets",
        "subject",
        "body_mass",
        "frames",
        "angles",
        "calibration",
        "kinetics",
        "events",
        "cycles",
        "checks",
        "energetics",
        "file_outputs",
        "model",
        "batch",
        "report",
        "demo",
        "scores",
        "gdi",
        "normative",
    ],
)
