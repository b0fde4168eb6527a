"""The actuators of an AnalyzeTool run and their forces, speeds and powers (internal).

:func:`actuator_records` lists every actuator the Actuation analysis reports, in
OpenSim's order (the model's ForceSet order, then the actuators of the setup's
``<force_set_files>``; only those with ``replace_force_set``), each with its force
and speed along the frames. Without controls (ahbm analyze reads no controls file)
an actuator other than a muscle applies no force; its speed is still reported, as
OpenSim defines it: a CoordinateActuator's coordinate speed, a TorqueActuator's
``(ω_A − ω_B)·axis`` (axis in ground when ``torque_is_global``, else in body A)
and a PointActuator's point speed ``|v|`` in ground.
"""

from __future__ import annotations

import numpy as np

from ahbm.errors import ModelError
from ahbm.opensim.so_setup import (
    CoordinateActuatorSpec,
    PointActuatorSpec,
    TorqueActuatorSpec,
)
from ahbm.opensim.so_tool import _body_of, _model_actuators

__all__ = ["actuator_records"]


def _model_order(model, muscle_names) -> list:
    """The model's actuators in ForceSet order: muscle names and CoordinateActuatorSpecs."""
    coordinate = {a.name: a for a in _model_actuators(model)}
    try:
        items = list(model.section("opensim"))
    except (KeyError, ModelError):
        items = []
    forces = [i for i in items if getattr(i, "kind", None) == "force"]
    if not forces:  # a model without OpenSim's description: its muscles
        return list(muscle_names)
    out = []
    for item in forces:
        name, kind = str(item.get("name", "")), str(item.get("type", ""))
        if name in muscle_names:
            out.append(name)
        elif name in coordinate:
            out.append(coordinate[name])
        elif kind.endswith("Actuator") and kind != "CoordinateActuator":
            disabled = str(item.get("isDisabled", "false")).lower() in ("true", "1")
            applies = str(item.get("appliesForce", "true")).lower() not in ("false", "0")
            if applies and not disabled:
                raise ModelError(
                    f"model '{model.name}': the Actuation analysis does not implement the "
                    f"model's {kind} '{name}'; remove it from the model or the analysis"
                )
    return out


def _speed(model, a, q, qd, kin) -> np.ndarray:
    """The speed OpenSim reports for a non-muscle actuator, (n,)."""
    from ahbm.kinematics.forward import point_velocity

    n = q.shape[0]
    if isinstance(a, CoordinateActuatorSpec):
        names = list(model.coordinate_names)
        if a.coordinate not in names or model.nq != model.nv:
            raise ModelError(
                f"CoordinateActuator '{a.name}' acts on coordinate '{a.coordinate}', which "
                f"model '{model.name}' does not have; coordinates: {names}"
            )
        return qd[:, names.index(a.coordinate)].copy()
    if isinstance(a, PointActuatorSpec):
        b = _body_of(model, a.body, a)
        if b is None:
            return np.zeros(n)
        point = np.asarray(a.point, dtype=float)
        if a.point_is_global:  # the body's material point at that ground position
            R, o = kin.rotations[:, b], kin.positions[:, b]
            point = np.einsum("nji,nj->ni", R, point - o)
            w, vo = kin.velocities[:, b, :3], kin.velocities[:, b, 3:]
            v = np.einsum("nij,nj->ni", R, vo + np.cross(w, point))
        else:
            v = point_velocity(model, None, None, b, point, kin=kin)
        return np.linalg.norm(v, axis=1)
    if isinstance(a, TorqueActuatorSpec):
        ba, bb = _body_of(model, a.body_a, a), _body_of(model, a.body_b, a)
        axis = np.asarray(a.axis, dtype=float)
        axis = axis / np.linalg.norm(axis)
        if a.torque_is_global or ba is None:
            axis = np.broadcast_to(axis, (n, 3))
        else:
            axis = kin.rotations[:, ba] @ axis
        w = np.zeros((n, 3))
        for body, sign in ((ba, 1.0), (bb, -1.0)):
            if body is not None:  # body angular velocity in ground
                w += sign * np.einsum("nij,nj->ni", kin.rotations[:, body],
                                      kin.velocities[:, body, :3])  # fmt: skip
        return np.einsum("ni,ni->n", w, axis)
    raise ModelError(f"the Actuation analysis does not implement actuator {a!r}")


def actuator_records(model, muscles: dict, file_actuators, q, qd, kin, *, replace: bool) -> list:
    """``(name, force, speed, sign)`` of every actuator, in OpenSim's order.

    Parameters
    ----------
    model : Model
    muscles : dict
        The muscle state of the run: ``names``, ``tendon_force`` and ``speed``
        (lengthening speed), ``(n, n_muscles)``.
    file_actuators : sequence
        Actuator specs read from the setup's ``<force_set_files>``.
    q, qd : ndarray, (n, nq)
    kin : Kinematics
        With velocities.
    replace : bool
        ``replace_force_set``: the model's own actuators are left out.

    Returns
    -------
    list of tuple
        ``sign`` is −1 for muscles (power ``−force × lengthening speed``), +1 otherwise.
    """
    n = q.shape[0]
    names = list(muscles["names"])
    own = [] if replace else _model_order(model, names)
    out = []
    for a in [*own, *file_actuators]:
        if isinstance(a, str):
            k = names.index(a)
            out.append((a, muscles["tendon_force"][:, k], muscles["speed"][:, k], -1.0))
        else:
            out.append((a.name, np.zeros(n), _speed(model, a, q, qd, kin), 1.0))
    seen = set()
    for name, *_ in out:
        if name in seen:
            raise ModelError(
                f"two actuators are named '{name}' (the model's and a force-set file's); "
                "rename one"
            )
        seen.add(name)
    return out
