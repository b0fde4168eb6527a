"""The files of an RRA run, named and laid out as OpenSim's RRATool writes them (internal).

:func:`output_paths` checks every output before the computation (the policy of
every tool: no output may be an input, names from the setup cannot leave the
results folder, the folder is created and tested); :func:`write_outputs` writes
them atomically.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ahbm._internal.files import atomic_path
from ahbm.errors import ModelError
from ahbm.io.opensim_table import OpenSimTable
from ahbm.opensim._tool_outputs import (
    _STORAGE,
    _check_out,
    _loads_inputs,
    _named_output,
    _writable_folder,
)
from ahbm.opensim.coordinates import _rotational
from ahbm.opensim.storage import write_mot

_STO = (
    "Actuation_force", "Actuation_speed", "Actuation_power", "Kinematics_q", "Kinematics_u",
    "Kinematics_dudt", "controls", "states", "pErr",
)  # fmt: skip
_ACTUATION = {
    "Actuation_force": "ActuatorForces",
    "Actuation_speed": "ActuatorSpeeds",
    "Actuation_power": "ActuatorPowers",
}
_KINEMATICS = {
    "Kinematics_q": "Coordinates",
    "Kinematics_u": "Speeds",
    "Kinematics_dudt": "Accelerations",
}
_ACTUATION_TEXT = (
    "This file contains either the forces, speeds, or powers developed\n"
    "by the actuators of a model during a simulation.\n\n"
    "An actuator force is a generalized force, meaning that it can be either a force (N) or "
    "a torque (Nm).\n\n"
    "An actuator speed is the rate at which an actuator shortens. Depending on the actuator,\n"
    "a speed can be either a translational speed (m/s) or an angular speed (deg/s or rad/s).\n\n"
    "An actuator power (Watts) is the rate at which an actuator does work.  Positive power "
    "means\nthat the actuator is delivering energy to the model; negative power means that "
    "the actuator\nis absorbing energy from the model.\n"
)
_UNITS = (
    "Units are S.I. units (second, meters, Newtons, ...)\nIf the header above contains a line "
    "with 'inDegrees', this indicates whether rotational values are in degrees (yes) or "
    "radians (no).\n"
)


def output_paths(setup, output_dir) -> dict:
    """Checked output paths {key: Path}, the results folder created (before computing)."""
    inputs = [
        ("setup", setup.path),
        ("model", setup.model_file),
        ("desired kinematics", setup.desired_kinematics_file),
        ("task set", setup.task_set_file),
        *_loads_inputs(setup.external_loads),
        *(("actuator (force set)", f) for f in setup.force_set_files),
    ]
    if output_dir is not None:
        folder = _writable_folder(Path(output_dir), argname="output_dir", create=True)
        folder_arg = "output_dir"
    else:
        folder_arg = f"<results_directory> of RRATool setup '{setup.path}'"
        folder = _writable_folder(setup.results_directory, argname=folder_arg, create=True)
    tool = [(setup.name, f"the name of the <RRATool> in '{setup.path}'")]
    out = {}
    for key in _STO:
        p = _named_output(folder, tool, f"_{key}.sto")
        out[key] = _check_out(p, inputs, _STORAGE, f"{key} output in {folder_arg}")
    for key, suffix in (("controls_xml", "_controls.xml"), ("avg", "_avgResiduals.txt")):
        p = _named_output(folder, tool, suffix)
        out[key] = _check_out(p, inputs, (Path(suffix).suffix,), f"output in {folder_arg}")
    if setup.adjust_com:
        target = setup.output_model_file
        if output_dir is not None:
            target = folder / target.name
        _writable_folder(target.parent, argname="<output_model_file>", create=True)
        out["model"] = _check_out(target, inputs, (".osim",), "<output_model_file>")
    return out


def _sto(path, time, values, labels, name, comment, *, angles=()):
    table = OpenSimTable.from_arrays(time, values, list(labels), name=name, comments=[comment])
    write_mot(table, path, in_degrees=bool(angles), angle_columns=list(angles))
    return path


def _controls_xml(path, model_name, names, node_t, nodes, limits) -> Path:
    lo, hi = limits
    lines = [
        '<?xml version="1.0" encoding="UTF-8" ?>',
        '<OpenSimDocument Version="40600">',
        f'\t<ControlSet name="{model_name}">',
        "\t\t<objects>",
    ]
    ts = [repr(float(t)) for t in node_t]
    for j, n in enumerate(names):
        lines += [
            f'\t\t\t<ControlLinear name="{n}.excitation">',
            "\t\t\t\t<is_model_control>true</is_model_control>",
            "\t\t\t\t<extrapolate>true</extrapolate>",
            f"\t\t\t\t<default_min>{lo[j]:g}</default_min>",
            f"\t\t\t\t<default_max>{hi[j]:g}</default_max>",
            "\t\t\t\t<filter_on>false</filter_on>",
            "\t\t\t\t<use_steps>false</use_steps>",
            "\t\t\t\t<x_nodes>",
        ]
        for t, v in zip(ts, nodes[:, j], strict=True):
            lines.append(
                f"\t\t\t\t\t<ControlLinearNode>\n\t\t\t\t\t\t<t>{t}</t>\n"
                f"\t\t\t\t\t\t<value>{float(v)!r}</value>\n\t\t\t\t\t</ControlLinearNode>"
            )
        lines += [
            "\t\t\t\t</x_nodes>",
            "\t\t\t\t<min_nodes />",
            "\t\t\t\t<max_nodes />",
            "\t\t\t</ControlLinear>",
        ]
    lines += ["\t\t</objects>", "\t\t<groups />", "\t</ControlSet>", "</OpenSimDocument>", ""]
    with atomic_path(path) as tmp:
        tmp.write_text("\n".join(lines), encoding="utf-8")
    return path


def _text(path, text: str) -> Path:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return path


def write_outputs(setup, paths, model, out, res, speeds, tasks, osim_coords, acts) -> list:
    """Write every file of the run; returns the paths in writing order."""
    names = out.actuator_names
    time = out.time
    rot = _rotational(model)
    coords = [c for c in osim_coords if c in out.coordinate_names]
    coords += [c for c in out.coordinate_names if c not in coords]
    idx = [out.coordinate_names.index(c) for c in coords]
    angles = [c for c in coords if rot.get(c, True)]
    written = []
    actuation = {
        "Actuation_force": out.forces,
        "Actuation_speed": speeds,
        "Actuation_power": out.forces * speeds,
    }
    for key, values in actuation.items():
        written.append(
            _sto(paths[key], time, values, names, _ACTUATION[key], _ACTUATION_TEXT + "\n" + _UNITS)
        )
    for key, values in (("Kinematics_q", out.q), ("Kinematics_u", out.u),
                        ("Kinematics_dudt", out.udot)):  # fmt: skip
        written.append(
            _sto(paths[key], time, values[:, idx], coords, _KINEMATICS[key], _UNITS, angles=angles)
        )
    written.append(_sto(paths["controls"], time, out.controls, names, "controls", ""))
    # the states: /jointset/<joint>/<coordinate>/value and /speed, in radians
    joint_of = {}
    for i, b in enumerate(model.bodies):
        v0, nv = int(model.v_index[i]), int(model.joint_nv[i])
        for c in model.coordinate_names[v0 : v0 + nv]:
            joint_of[c] = b.joint.name
    labels, cols = [], []
    for c, k in zip(coords, idx, strict=True):
        labels += [f"/jointset/{joint_of[c]}/{c}/value", f"/jointset/{joint_of[c]}/{c}/speed"]
        cols += [out.q[:, k], out.u[:, k]]
    written.append(_sto(paths["states"], time, np.stack(cols, 1), labels, "states", ""))
    written.append(
        _sto(
            paths["pErr"], time, res.position_errors, [t.name for t in tasks], "PositionErrors", ""
        )  # fmt: skip
    )
    lo = np.array([a.min_control for a in acts])
    hi = np.array([a.max_control for a in acts])
    lo = np.where(np.isneginf(lo), -10000.0, lo)
    hi = np.where(np.isposinf(hi), 10000.0, hi)
    written.append(
        _controls_xml(
            paths["controls_xml"], model.name, names, res.node_time, res.node_controls, (lo, hi)
        )  # fmt: skip
    )
    avg = out.average_residuals
    text = "Average Residuals:\n\n" + "".join(f"{k} average = {avg[k]:g}\n" for k in avg)
    written.append(_text(paths["avg"], text))
    if "model" in paths and out.com_adjustment is not None:
        adj = out.com_adjustment
        written.append(
            _text(paths["model"], adjusted_osim_text(setup.model_file, adj.body, adj.com_after))
        )
    return written


def adjusted_osim_text(model_file, body: str, com) -> str:
    """The text of `model_file` with the ``<mass_center>`` of Body `body` replaced."""
    text = Path(model_file).read_text(encoding="utf-8")
    m = re.search(r'<Body\s+name\s*=\s*"' + re.escape(body) + r'"\s*>', text)
    if m is None:
        raise ModelError(f"model '{model_file}' has no <Body name=\"{body}\"> element")
    end = text.find("</Body>", m.end())
    sub = re.compile(r"(<mass_center>)([^<]*)(</mass_center>)")
    hit = sub.search(text, m.end(), end if end >= 0 else len(text))
    value = " ".join(repr(float(v)) for v in com)
    if hit is None:  # OpenSim's default (0 0 0) was implied: write the element
        close = text.find(">", m.start()) + 1
        return text[:close] + f"\n\t\t\t\t\t<mass_center>{value}</mass_center>" + text[close:]
    return text[: hit.start(2)] + value + text[hit.end(2) :]
