"""ForwardTool setups and control sets for the tests of ``ahbm forward``."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def write_controls_xml(path: Path, names, times, values, *, extrapolate=True, steps=False) -> Path:
    """An OpenSim ControlSet of ControlLinear controls ``<name>.excitation``."""
    objs = []
    for j, name in enumerate(names):
        nodes = "".join(
            f"<ControlLinearNode><t>{float(t)!r}</t><value>{float(v)!r}</value></ControlLinearNode>"
            for t, v in zip(times, values[:, j], strict=True)
        )
        objs.append(
            f'<ControlLinear name="{name}.excitation"><is_model_control>true</is_model_control>'
            f"<extrapolate>{str(extrapolate).lower()}</extrapolate>"
            f"<use_steps>{str(steps).lower()}</use_steps><x_nodes>{nodes}</x_nodes>"
            "</ControlLinear>"
        )
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8" ?>\n<OpenSimDocument Version="40600">'
        f'<ControlSet name="Control Set"><objects>{"".join(objs)}</objects><groups />'
        "</ControlSet></OpenSimDocument>\n"
    )
    return path


def write_forward_setup(path: Path, model, *, controls=None, states=None, t0=0.0, t1=0.05,
                        tol=1e-7, results="Results", equilibrium=False, extra="",
                        force_set=(), replace=False, controller=None) -> Path:  # fmt: skip
    """A ForwardTool setup (absolute paths)."""
    if controller is None and controls is not None:
        controller = (
            '<ControlSetController name="ctrl">'
            f"<controls_file>{controls}</controls_file></ControlSetController>"
        )
    path.write_text(
        f"""<?xml version="1.0" encoding="UTF-8" ?>
<OpenSimDocument Version="40600">
<ForwardTool name="fwd">
<model_file>{model}</model_file>
<replace_force_set>{str(replace).lower()}</replace_force_set>
<force_set_files>{" ".join(str(f) for f in force_set)}</force_set_files>
<results_directory>{results}</results_directory>
<output_precision>8</output_precision>
<initial_time>{t0}</initial_time>
<final_time>{t1}</final_time>
<solve_for_equilibrium_for_auxiliary_states>{str(equilibrium).lower()}</solve_for_equilibrium_for_auxiliary_states>
<maximum_number_of_integrator_steps>20000</maximum_number_of_integrator_steps>
<maximum_integrator_step_size>1</maximum_integrator_step_size>
<minimum_integrator_step_size>1e-08</minimum_integrator_step_size>
<integrator_error_tolerance>{tol}</integrator_error_tolerance>
<AnalysisSet name="Analyses"><objects /><groups /></AnalysisSet>
<ControllerSet name="Controllers"><objects>{controller or ""}</objects><groups /></ControllerSet>
<external_loads_file />
<states_file>{states or ""}</states_file>
{extra}
</ForwardTool>
</OpenSimDocument>
"""
    )
    return path


def random_controls(n_muscles: int, seed: int = 0, t1: float = 0.3):
    """Node times and excitations in [0.05, 0.6] of n muscles (4 nodes)."""
    rng = np.random.default_rng(seed)
    return np.linspace(0.0, t1, 4), rng.uniform(0.05, 0.6, (4, n_muscles))
