"""The tables of the analyses of ``ahbm analyze`` (internal; see :mod:`ahbm.opensim.analyze_tool`).

Each ``*_tables(spec, ctx, rows)`` returns ``{key: OpenSimTable}`` with OpenSim
4.6's titles, header comments, column labels and units; ``ctx`` holds the
states of the run (``model``, ``kin`` with accelerations, ``q``, ``qd``,
``qdd``, ``time``, the .osim orders ``bodies`` and ``coords``, ``rot``,
``index``, the muscle state ``muscles``) and ``rows`` the frames recorded.
"""

from __future__ import annotations

import numpy as np

from ahbm.io.opensim_table import OpenSimTable

_UNITS = "Units are S.I. units (second, meters, Newtons, ...)"
_DEGREES = (
    "If the header above contains a line with 'inDegrees', this indicates whether rotational "
    "values are in degrees (yes) or radians (no)."
)
_MUSCLES = (
    "This analysis gathers basic information about muscles during a simulation (e.g., forces, "
    "tendon lengths, moment arms, etc)."
)

#: MuscleAnalysis outputs (file key -> what), in the order ahbm writes them.
MUSCLE_OUTPUTS = (
    "Length", "TendonLength", "FiberLength", "NormalizedFiberLength", "PennationAngle",
    "FiberVelocity", "NormFiberVelocity", "PennationAngularVelocity", "TendonForce",
    "FiberForce", "ActiveFiberForce", "PassiveFiberForce", "ActiveFiberForceAlongTendon",
    "PassiveFiberForceAlongTendon", "FiberActivePower", "FiberPassivePower", "TendonPower",
    "MuscleActuatorPower",
)  # fmt: skip


def _table(ctx, rows, values, labels, name, comments, in_degrees=False) -> OpenSimTable:
    return OpenSimTable.from_arrays(
        ctx["time"][rows],
        np.asarray(values)[rows],
        labels,
        name=name,
        in_degrees=bool(in_degrees),
        comments=list(comments),
    )


def kinematics_tables(spec, ctx, rows) -> dict:
    """Kinematics: ``q``, ``u``, ``dudt`` in the CoordinateSet order."""
    cols = [ctx["index"][c] for c in ctx["coords"]]
    scale = np.array(
        [
            180.0 / np.pi if spec.in_degrees and ctx["rot"].get(c, True) else 1.0
            for c in ctx["coords"]
        ]
    )
    comments = ["", _UNITS, _DEGREES, ""]
    out = {}
    for key, title, x in (("q", "Coordinates", ctx["q"]), ("u", "Speeds", ctx["qd"]),
                          ("dudt", "Accelerations", ctx["qdd"])):  # fmt: skip
        out[key] = _table(ctx, rows, x[:, cols] * scale, ctx["coords"], title, comments,
                          spec.in_degrees)  # fmt: skip
    return out


def _body_comments(model_name, local) -> list:
    frame = "body-local" if local else "ground"
    return [
        "",
        "This file contains the kinematics (positions and orientations,",
        "velocities and angular velocities, or accelerations and angular accelerations)",
        f"of the centers of mass of the body segments in model {model_name}.",
        "",
        "Body segment orientations are described using body-fixed X-Y-Z Euler angles.",
        "",
        f"Angular velocities and accelerations are expressed in the {frame} frame.",
        "",
        "Units are S.I. units (seconds, meters, Newtons, ...)",
        _DEGREES,
        "",
    ]


def _com_kinematics(model, kin, b):
    """World position, velocity, acceleration of body b's center of mass; ω, ω̇ in body axes."""
    c = np.asarray(model.bodies[b].com, dtype=float)
    R = kin.rotations[:, b]
    w, v = kin.velocities[:, b, :3], kin.velocities[:, b, 3:]
    dw, a = kin.accelerations[:, b, :3], kin.accelerations[:, b, 3:]
    pos = kin.positions[:, b] + R @ c
    vel_b = v + np.cross(w, c)
    acc_b = a + np.cross(dw, c) + np.cross(w, vel_b)  # spatial to classical, body axes
    return R, pos, vel_b, acc_b, w, dw


def body_kinematics_tables(spec, ctx, rows) -> dict:
    """BodyKinematics: ``pos`` (ground), ``vel`` and ``acc`` (ground or body-local)."""
    from ahbm.kinematics.rotations import matrix_to_euler

    model, kin = ctx["model"], ctx["kin"]
    words = [b for b in spec.bodies]
    everything = any(w.lower() == "all" for w in words)
    names = list(ctx["bodies"]) if everything else [w for w in words if w != "center_of_mass"]
    com = everything or "center_of_mass" in words
    known = {b.name: i for i, b in enumerate(model.bodies)}
    missing = [n for n in names if n not in known]
    if missing:
        from ahbm.errors import DataError

        raise DataError(
            f"BodyKinematics '{spec.name}': <bodies> names bodies the model does not have: "
            f"{missing}"
        )
    deg = 180.0 / np.pi if spec.in_degrees else 1.0
    cols = {"pos": [], "vel": [], "acc": []}
    labels = []
    masses = np.array([b.mass for b in model.bodies])
    for name in names:
        R, pos, vel_b, acc_b, w, dw = _com_kinematics(model, kin, known[name])
        labels += [f"{name}_{s}" for s in ("X", "Y", "Z", "Ox", "Oy", "Oz")]
        ang = matrix_to_euler(R, "XYZ", warn=False) * deg
        cols["pos"] += [pos, ang]
        if spec.local:
            cols["vel"] += [vel_b, w * deg]
            cols["acc"] += [acc_b, dw * deg]
        else:
            cols["vel"] += [np.einsum("nij,nj->ni", R, vel_b), np.einsum("nij,nj->ni", R, w) * deg]
            cols["acc"] += [np.einsum("nij,nj->ni", R, acc_b), np.einsum("nij,nj->ni", R, dw) * deg]
    if com:
        labels += [f"center_of_mass_{s}" for s in ("X", "Y", "Z")]
        tot = {"pos": 0.0, "vel": 0.0, "acc": 0.0}
        for i in range(len(model.bodies)):
            R, pos, vel_b, acc_b, _, _ = _com_kinematics(model, kin, i)
            tot["pos"] = tot["pos"] + masses[i] * pos
            tot["vel"] = tot["vel"] + masses[i] * np.einsum("nij,nj->ni", R, vel_b)
            tot["acc"] = tot["acc"] + masses[i] * np.einsum("nij,nj->ni", R, acc_b)
        for key in cols:
            cols[key].append(tot[key] / masses.sum())
    comments = _body_comments(model.name, spec.local)
    titles = {"pos": "Positions", "vel": "Velocities", "acc": "Accelerations"}
    return {
        key: _table(
            ctx, rows, np.concatenate(v, axis=1), labels, titles[key], comments, spec.in_degrees
        )  # fmt: skip
        for key, v in cols.items()
    }


def point_kinematics_tables(spec, ctx, rows) -> dict:
    """PointKinematics: the point's position, velocity, acceleration in a body's frame."""
    from ahbm.errors import DataError
    from ahbm.kinematics.forward import point_acceleration, point_position, point_velocity

    model, kin = ctx["model"], ctx["kin"]
    n = ctx["time"].shape[0]
    known = {b.name: i for i, b in enumerate(model.bodies)}
    for what, name in (("body_name", spec.body), ("relative_to_body_name", spec.relative_to)):
        if name not in known and name.lower() not in ("ground", "none"):
            raise DataError(
                f"PointKinematics '{spec.name}': <{what}> '{name}' is not a body of the model"
            )
    p = np.asarray(spec.point, dtype=float)
    if spec.body in known:
        b = known[spec.body]
        pos = point_position(model, None, b, p, kin=kin)
        vel = point_velocity(model, None, None, b, p, kin=kin)
        acc = point_acceleration(model, None, None, None, b, p, kin=kin)
    else:  # a point of the ground
        pos, vel, acc = np.broadcast_to(p, (n, 3)), np.zeros((n, 3)), np.zeros((n, 3))
    if spec.relative_to in known:
        r = known[spec.relative_to]
        R, o = kin.rotations[:, r], kin.positions[:, r]
        pos = np.einsum("nji,nj->ni", R, pos - o)
        vel = np.einsum("nji,nj->ni", R, vel)
        acc = np.einsum("nji,nj->ni", R, acc)
    labels = ["state_0", "state_1", "state_2"]  # OpenSim 4.6's labels of these files
    titles = {"pos": "PointPosition", "vel": "PointVelocity", "acc": "PointAcceleration"}
    values = {"pos": pos, "vel": vel, "acc": acc}
    return {k: _table(ctx, rows, values[k], labels, titles[k], ["No description."])
            for k in titles}  # fmt: skip


def muscle_tables(spec, ctx, rows, *, coordinates) -> dict:
    """MuscleAnalysis: the muscles' lengths, state, powers, moment arms and moments."""
    from ahbm.errors import DataError

    mus = ctx["muscles"]
    names = list(mus["names"])
    if any(w.lower() == "all" for w in spec.muscles):
        chosen = names
    else:
        missing = [m for m in spec.muscles if m not in names]
        if missing:
            raise DataError(
                f"MuscleAnalysis '{spec.name}': <muscle_list> names muscles the model does not "
                f"have (or that apply no force): {missing}"
            )
        chosen = list(spec.muscles)
    k = [names.index(m) for m in chosen]
    st = mus["state"]
    lmt, vmt = mus["length"][:, k], mus["speed"][:, k]
    f = {fld: getattr(st, fld)[:, k] for fld in (
        "tendon_force", "fiber_force", "active_fiber_force", "passive_fiber_force",
        "fiber_length", "tendon_length", "fiber_velocity", "normalized_fiber_length",
        "normalized_fiber_velocity", "pennation_angle")}  # fmt: skip
    phi, lm, vm = f["pennation_angle"], f["fiber_length"], f["fiber_velocity"]
    # OpenSim's Millard powers: the damping force goes with the active power, the
    # elastic (conservative) passive force alone makes the passive power
    prm = mus["params"]
    damping = (prm.max_isometric_force[k] * prm.fiber_damping[k]) * f["normalized_fiber_velocity"]
    elastic = f["passive_fiber_force"] - damping
    dphi = -(vm / lm) * np.tan(phi)
    vt = vmt - (vm * np.cos(phi) - lm * np.sin(phi) * dphi)
    values = {
        "Length": lmt, "TendonLength": f["tendon_length"], "FiberLength": lm,
        "NormalizedFiberLength": f["normalized_fiber_length"], "PennationAngle": phi,
        "FiberVelocity": vm, "NormFiberVelocity": f["normalized_fiber_velocity"],
        "PennationAngularVelocity": dphi, "TendonForce": f["tendon_force"],
        "FiberForce": f["fiber_force"], "ActiveFiberForce": f["active_fiber_force"],
        "PassiveFiberForce": f["passive_fiber_force"],
        "ActiveFiberForceAlongTendon": f["active_fiber_force"] * np.cos(phi),
        "PassiveFiberForceAlongTendon": f["passive_fiber_force"] * np.cos(phi),
        "FiberActivePower": -(f["active_fiber_force"] + damping) * vm,
        "FiberPassivePower": -elastic * vm,
        "TendonPower": -f["tendon_force"] * vt,
        "MuscleActuatorPower": -f["tendon_force"] * vmt,
    }  # fmt: skip
    comments = ["", _MUSCLES, _UNITS, _DEGREES, ""]
    out = {key: _table(ctx, rows, values[key], chosen, key, comments) for key in MUSCLE_OUTPUTS}
    if spec.compute_moments:
        arms = mus["arms"][:, k]
        for c in coordinates:
            r = arms[:, :, ctx["index"][c]]
            out[f"MomentArm_{c}"] = _table(ctx, rows, r, chosen, f"MomentArm_{c}", comments)
            out[f"Moment_{c}"] = _table(ctx, rows, r * f["tendon_force"], chosen, f"Moment_{c}",
                                        comments)  # fmt: skip
    return out


def _actuation_comments() -> list:
    return [
        "",
        "Actuation: the forces (N or N·m), speeds (m/s or rad/s) and powers (W) of the "
        "model's actuators.",
        "A muscle's speed is its path's lengthening speed and its power -force × speed; "
        "another actuator's power is force × speed.",
        _UNITS,
        _DEGREES,
        "",
    ]


def actuation_tables(spec, ctx, rows) -> dict:
    """Actuation: ``force``, ``speed``, ``power`` of every actuator (``ctx["actuators"]``).

    ``ctx["actuators"]`` is a list of ``(name, force, speed, sign)`` with arrays
    ``(n,)`` over all the run's frames; the power is ``sign × force × speed``
    (−1 for muscles, whose speed is the lengthening speed, +1 otherwise).
    """
    acts = ctx["actuators"]
    n = ctx["time"].shape[0]
    labels = [a[0] for a in acts]
    force = np.column_stack([a[1] for a in acts]) if acts else np.zeros((n, 0))
    speed = np.column_stack([a[2] for a in acts]) if acts else np.zeros((n, 0))
    sign = np.array([a[3] for a in acts], dtype=float)
    values = {"force": force, "speed": speed, "power": sign * force * speed}
    titles = {"force": "ActuatorForces", "speed": "ActuatorSpeeds", "power": "ActuatorPowers"}
    return {k: _table(ctx, rows, values[k], labels, titles[k], _actuation_comments())
            for k in titles}  # fmt: skip
