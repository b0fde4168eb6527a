"""The external-load columns of OpenSim's static-optimization force file (internal).

OpenSim's StaticOptimization reports the forces of every force of the model
(a ``ForceReporter``), and AnalyzeTool adds the ``<ExternalLoads>`` to the model:
after the actuators, each ``ExternalForce`` records (``getRecordValues``) its force
in ground (``<body>_<name>_Fx..Fz``), its point of application in the applied body
(``_px..pz``, when it has a point identifier) and its torque in ground
(``_Tx..Tz``), interpolated at the row's time as it applies them.
"""

from __future__ import annotations

import numpy as np

from ahbm.kinematics import forward_kinematics
from ahbm.opensim.external_loads import _frame_pose, _identifier_columns, _time_function
from ahbm.opensim.setup_files import ExternalLoads
from ahbm.opensim.storage import read_mot


def external_force_records(model, loads: ExternalLoads | None, q, time):
    """OpenSim's record labels and values of the external forces, ``(labels, (n, k))``."""
    time = np.asarray(time, dtype=float)
    if loads is None or not loads.forces or loads.datafile is None:
        return [], np.zeros((time.size, 0))
    data = read_mot(loads.datafile, angle_columns=[])
    labels, columns, plan = [], [], []
    for spec in loads.forces:
        slots = {}
        for what, identifier, word in (
            ("F", spec.force_identifier, "force"),
            ("p", spec.point_identifier if spec.force_identifier else "", "point"),
            ("T", spec.torque_identifier, "torque"),
        ):
            if identifier:
                slots[what] = len(columns)
                columns += _identifier_columns(data, identifier, word, spec.name)
                labels += [f"{spec.applied_to_body}_{spec.name}_{what}{a}" for a in "xyz"]
        plan.append((spec, slots))
    position = {c: k for k, c in enumerate(data.columns)}
    y = np.asarray(data.values, dtype=float)[:, [position[c] for c in columns]]
    values = _time_function(data.time, y, time)
    kin = forward_kinematics(model, np.asarray(q, dtype=float))
    out = np.empty((time.size, len(labels)))
    for spec, slots in plan:
        R_f, _ = _frame_pose(model, kin, spec.force_expressed_in_body, "force_expressed_in_body")
        for what, k in slots.items():
            v = values[:, k : k + 3]
            if what == "p":  # to the applied body: p_B = R_Bᵀ (o_P + R_P p − o_B)
                R_p, o_p = _frame_pose(
                    model, kin, spec.point_expressed_in_body, "point_expressed_in_body"
                )
                if R_p is not None:
                    v = o_p + np.einsum("nij,nj->ni", R_p, v)
                R_b, o_b = _frame_pose(model, kin, spec.applied_to_body, "applied_to_body")
                if R_b is not None:
                    v = np.einsum("nji,nj->ni", R_b, v - o_b)
            elif R_f is not None:
                v = np.einsum("nij,nj->ni", R_f, v)
            out[:, k : k + 3] = v
    return labels, out
