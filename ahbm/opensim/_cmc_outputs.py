"""The files of a CMC run, named and laid out as OpenSim's CMCTool writes them (internal).

:func:`output_paths` checks every output before the computation (no output may
be an input, names from the setup cannot leave the results folder, the folder
is created and tested); :func:`write_outputs` writes them atomically.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ahbm._internal.files import atomic_path
from ahbm.opensim._rra_outputs import _ACTUATION, _ACTUATION_TEXT, _KINEMATICS, _UNITS, _sto
from ahbm.opensim._tool_outputs import (
    _STORAGE,
    _check_out,
    _loads_inputs,
    _named_output,
    _writable_folder,
)
from ahbm.opensim.coordinates import _rotational

_STO = (
    "Actuation_force", "Actuation_speed", "Actuation_power", "Kinematics_q", "Kinematics_u",
    "Kinematics_dudt", "controls", "states", "pErr",
)  # fmt: skip


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
    if setup.constraints_file is not None:
        inputs.append(("constraints", setup.constraints_file))
    if output_dir is not None:
        folder = _writable_folder(Path(output_dir), argname="output_dir", create=True)
        folder_arg = "output_dir"
    else:
        folder_arg = f"<results_directory> of CMCTool setup '{setup.path}'"
        folder = _writable_folder(setup.results_directory, argname=folder_arg, create=True)
    tool = [(setup.name, f"the name of the <CMCTool> in '{setup.path}'")]
    out = {}
    for key in _STO:
        p = _named_output(folder, tool, f"_{key}.sto")
        out[key] = _check_out(p, inputs, _STORAGE, f"{key} output in {folder_arg}")
    p = _named_output(folder, tool, "_controls.xml")
    out["controls_xml"] = _check_out(p, inputs, (".xml",), f"output in {folder_arg}")
    return out


def _controls_xml(path, model_name, names, node_t, nodes, limits, steps) -> Path:
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
            f"\t\t\t\t<use_steps>{'true' if steps[j] else 'false'}</use_steps>",
            "\t\t\t\t<x_nodes>",
        ]
        for t, v in zip(ts, nodes[:, j], strict=True):
            lines.append(
                f"\t\t\t\t\t<ControlLinearNode>\n\t\t\t\t\t\t<t>{t}</t>\n"
                f"\t\t\t\t\t\t<value>{float(v)!r}</value>\n\t\t\t\t\t</ControlLinearNode>"
            )
        lines += ["\t\t\t\t</x_nodes>", "\t\t\t\t<min_nodes />", "\t\t\t\t<max_nodes />",
                  "\t\t\t</ControlLinear>"]  # fmt: skip
    lines += ["\t\t</objects>", "\t\t<groups />", "\t</ControlSet>", "</OpenSimDocument>", ""]
    with atomic_path(path) as tmp:
        tmp.write_text("\n".join(lines), encoding="utf-8")
    return path


def _speeds(model, out, acts, nm):
    """Actuator speeds as OpenSim's Actuation reports them: a muscle's lengthening speed
    (its power is then ``-force × speed``), an ideal actuator's as in RRA."""
    from ahbm.kinematics.forward import forward_kinematics
    from ahbm.opensim._actuation import _speed

    kin = forward_kinematics(model, out.q, out.u)
    cols = []
    if nm:
        from ahbm.muscles.paths import lengthening_speeds

        cols.append(lengthening_speeds(model, out.q, out.u, muscles=out.muscle_names, kin=kin))
    if acts:
        cols.append(np.stack([_speed(model, a, out.q, out.u, kin) for a in acts], axis=1))
    return np.concatenate(cols, axis=1)


def write_outputs(setup, paths, model, out, acts, tasks, osim_coords, limits, nm) -> list:
    """Write every file of the run; returns the paths in writing order."""
    names = out.actuator_names
    time = out.time
    rot = _rotational(model)
    coords = [c for c in osim_coords if c in out.coordinate_names]
    coords += [c for c in out.coordinate_names if c not in coords]
    idx = [out.coordinate_names.index(c) for c in coords]
    angles = [c for c in coords if rot.get(c, True)]
    speeds = _speeds(model, out, acts, nm)
    sign = np.ones(speeds.shape[1])
    sign[:nm] = -1.0  # a muscle delivers -force × lengthening speed
    written = []
    actuation = {
        "Actuation_force": out.forces,
        "Actuation_speed": speeds,
        "Actuation_power": sign * out.forces * speeds,
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
    joint_of = {}
    for i, b in enumerate(model.bodies):
        v0, nv = int(model.v_index[i]), int(model.joint_nv[i])
        for c in model.coordinate_names[v0 : v0 + nv]:
            joint_of[c] = b.joint.name
    labels, cols = [], []
    for c, k in zip(coords, idx, strict=True):
        labels += [f"/jointset/{joint_of[c]}/{c}/value", f"/jointset/{joint_of[c]}/{c}/speed"]
        cols += [out.q[:, k], out.u[:, k]]
    for j, m in enumerate(out.muscle_names):
        labels += [f"/forceset/{m}/activation", f"/forceset/{m}/fiber_length"]
        cols += [out.activations[:, j], out.fiber_lengths[:, j]]
    written.append(_sto(paths["states"], time, np.stack(cols, 1), labels, "states", ""))
    written.append(
        _sto(
            paths["pErr"],
            out.error_time,
            out.position_errors,
            [t.name for t in tasks],
            "PositionErrors",
            "",
        )  # fmt: skip
    )
    steps = [j < nm for j in range(len(names))]
    written.append(
        _controls_xml(
            paths["controls_xml"],
            model.name,
            names,
            out.node_time,
            out.node_controls,
            limits,
            steps,
        )  # fmt: skip
    )
    return written
