"""OpenSim's Computed Muscle Control setups read into frozen setups (``ahbm cmc``).

:func:`read_cmc_setup` reads a ``<CMCTool>`` setup, unchanged as OpenSim
writes it, with its tracking tasks
(:func:`~ahbm.opensim.rra_setup.read_tracking_tasks`), its external loads and
its controls constraints file (:func:`read_control_constraints`);
:func:`ahbm.opensim.cmc_tool.run_cmc_setup` runs it.

Every element is either read, or one of the settings of OpenSim's own
integrator and optimizer that ahbm's run does not use (listed in
:data:`NOT_USED`, said in ``docs/opensim.md``), or refused with its name and
line: an unknown element, a desired points file, an RRA controls file,
analyses or controllers in the setup, ``use_fast_optimization_target`` false
(OpenSim's slow target), tasks other than ``CMC_Joint``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ahbm.errors import FileFormatError
from ahbm.opensim._xml import parse_xml_file
from ahbm.opensim.setup_files import (
    ExternalLoads,
    _child_text,
    _file,
    _float,
    _objects,
    _opt_bool,
    _opt_float,
    _shown,
    _split_words,
    _text,
    read_external_loads,
)

__all__ = [
    "NOT_USED",
    "CMCSetup",
    "ControlConstraints",
    "read_cmc_setup",
    "read_control_constraints",
]

#: CMCTool elements that change nothing in ahbm's run: OpenSim's integrator and
#: optimizer settings (ahbm integrates each window with its own fixed steps and
#: solves the window's quadratic program exactly), printing
NOT_USED = (
    "maximum_number_of_integrator_steps", "maximum_integrator_step_size",
    "minimum_integrator_step_size", "integrator_error_tolerance", "optimizer_algorithm",
    "numerical_derivative_step_size", "optimization_convergence_tolerance",
    "optimizer_max_iterations", "optimizer_print_level", "use_verbose_printing",
    "optimizer_derivative_dx", "optimizer_convergence_criterion", "defaults",
)  # fmt: skip
_READ = (
    "model_file", "replace_force_set", "force_set_files", "results_directory",
    "output_precision", "initial_time", "final_time",
    "solve_for_equilibrium_for_auxiliary_states", "AnalysisSet", "ControllerSet",
    "external_loads_file", "desired_points_file", "desired_kinematics_file", "task_set_file",
    "constraints_file", "rra_controls_file", "lowpass_cutoff_frequency", "cmc_time_window",
    "use_fast_optimization_target",
)  # fmt: skip
_CONTROL_READ = ("is_model_control", "extrapolate", "default_min", "default_max", "filter_on",
                 "use_steps", "x_nodes", "min_nodes", "max_nodes", "pd_kp", "pd_kv")  # fmt: skip


@dataclass(frozen=True)
class ControlConstraints:
    """Bounds on controls from an OpenSim ``<ControlSet>`` (CMC's ``constraints_file``).

    Attributes
    ----------
    path : pathlib.Path
    defaults : dict
        ``{actuator: (default_min, default_max)}`` (NaN where the file gives none).
    min_nodes, max_nodes : dict
        ``{actuator: (times (k,), values (k,))}`` of the piecewise linear bounds.
    """

    path: Path
    defaults: dict
    min_nodes: dict
    max_nodes: dict

    def bounds(self, name: str, t: float, lo: float, hi: float) -> tuple[float, float]:
        """The bounds of actuator `name` at time `t` (s); `lo`, `hi` where none is given.

        A node list holds its end values beyond its first and last node.
        """
        d = self.defaults.get(name)
        if d is not None:
            lo = lo if math.isnan(d[0]) else d[0]
            hi = hi if math.isnan(d[1]) else d[1]
        for nodes, which in ((self.min_nodes, 0), (self.max_nodes, 1)):
            n = nodes.get(name)
            if n is not None:
                v = float(np.interp(t, n[0], n[1]))
                lo, hi = (v, hi) if which == 0 else (lo, v)
        return lo, hi


def _nodes(el, tag):
    node = el.find(tag)
    if node is None:
        return None
    ts, vs = [], []
    for n in _objects(node) if node.find("objects") is not None else node.children:
        if n.tag != "ControlLinearNode":
            raise FileFormatError(
                f"{n.where()}: <{n.tag}> in <{tag}> is not a ControlLinearNode; correct the file"
            )
        for child in n.children:
            if child.tag not in ("t", "value"):
                raise FileFormatError(
                    f"{child.where()}: <{child.tag}> is not an element of a ControlLinearNode"
                )
        t_el, v_el = n.find("t"), n.find("value")
        if t_el is None or v_el is None:
            raise FileFormatError(f"{n.where()}: a ControlLinearNode needs <t> and <value>")
        ts.append(_float(t_el))
        vs.append(_float(v_el))
    if not ts:
        return None
    t = np.array(ts)
    if np.any(np.diff(t) <= 0):
        raise FileFormatError(f"{node.where()}: the node times of <{tag}> must increase")
    return t, np.array(vs)


def read_control_constraints(path) -> ControlConstraints:
    """Read the bounds of an OpenSim controls constraints file (a ``<ControlSet>``).

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    ControlConstraints
        Keyed by actuator name (the control's name without ``.excitation``).

    Raises
    ------
    FileFormatError
        Not a ControlSet, controls other than ``ControlLinear`` (named with their
        line), malformed nodes or numbers, ``<x_nodes>`` (prescribed controls,
        which ahbm cmc does not implement).

    Examples
    --------
    >>> c = read_control_constraints("constraints.xml")  # doctest: +SKIP
    >>> c.bounds("soleus_r", 0.7, 0.02, 1.0)  # doctest: +SKIP
    (0.02, 0.5)
    """
    root = parse_xml_file(path, "controls constraints (ControlSet)")
    node = root if root.tag == "ControlSet" else root.find("ControlSet")
    if node is None:
        raise FileFormatError(
            f"'{path}' is not an OpenSim controls file: no <ControlSet> element; give a "
            "ControlSet of ControlLinear controls"
        )
    defaults, mins, maxs = {}, {}, {}
    for el in _objects(node):
        name = el.attrib.get("name", "")
        if el.tag != "ControlLinear":
            raise FileFormatError(
                f"{el.where()}: {el.tag} '{name}' is not implemented by ahbm cmc, which reads "
                "ControlLinear bounds; convert it"
            )
        for child in el.children:
            if child.tag not in _CONTROL_READ:
                raise FileFormatError(
                    f"{child.where()}: <{child.tag}> is not an element of a ControlLinear that "
                    "ahbm reads; remove it"
                )
        x = el.find("x_nodes")
        if x is not None and (x.children and any(c.tag != "objects" or c.children
                                                 for c in x.children)):  # fmt: skip
            raise FileFormatError(
                f"{x.where()}: <x_nodes> of '{name}' (prescribed control values) are not "
                "implemented by ahbm cmc, which reads bounds; remove them"
            )
        act = name.removesuffix(".excitation")
        lo = _opt_float(el, "default_min", math.nan)
        hi = _opt_float(el, "default_max", math.nan)
        defaults[act] = (lo, hi)
        for tag, store in (("min_nodes", mins), ("max_nodes", maxs)):
            nodes = _nodes(el, tag)
            if nodes is not None:
                store[act] = nodes
    return ControlConstraints(Path(path), defaults, mins, maxs)


@dataclass(frozen=True)
class CMCSetup:
    """An OpenSim CMCTool setup.

    Attributes
    ----------
    path : pathlib.Path
    name : str
        The tool's name (prefix of the output files).
    model_file, desired_kinematics_file, task_set_file, external_loads_file : Path or None
    external_loads : ExternalLoads or None
    force_set_files : tuple of pathlib.Path
    replace_force_set : bool
    results_directory : pathlib.Path
    output_precision : int
    initial_time, final_time : float
    lowpass_cutoff_frequency : float
        Hz; negative: no filtering.
    cmc_time_window : float
        The controller's window, s (OpenSim's default 0.01).
    tasks : tuple of TrackingTaskSpec
    constraints : ControlConstraints or None
    constraints_file : pathlib.Path or None
    solve_for_equilibrium : bool
        ``solve_for_equilibrium_for_auxiliary_states`` (the muscles start in equilibrium).
    """

    path: Path
    name: str = ""
    model_file: Path | None = None
    desired_kinematics_file: Path | None = None
    task_set_file: Path | None = None
    external_loads_file: Path | None = None
    external_loads: ExternalLoads | None = None
    force_set_files: tuple = ()
    replace_force_set: bool = False
    results_directory: Path | None = None
    output_precision: int = 8
    initial_time: float = 0.0
    final_time: float = 1.0
    lowpass_cutoff_frequency: float = -1.0
    cmc_time_window: float = 0.01
    tasks: tuple = ()
    constraints: ControlConstraints | None = None
    constraints_file: Path | None = None
    solve_for_equilibrium: bool = True


def _refuse(node, folder) -> None:
    """FileFormatError for the elements of a CMCTool that ahbm does not implement."""
    for tag, what in (
        ("desired_points_file", "tracking of points"),
        ("rra_controls_file", "constraints on the residuals from RRA's controls"),
    ):
        if _file(node, tag, folder) is not None:
            raise FileFormatError(
                f"{node.find(tag).where()}: <{tag}> ({what}) is not implemented by ahbm cmc; "
                "leave it empty"
            )
    for tag, what in (("AnalysisSet", "analyses"), ("ControllerSet", "controllers")):
        el = node.find(tag)
        if el is not None and _objects(el):
            first = _objects(el)[0]
            raise FileFormatError(
                f"{first.where()}: {first.tag} '{first.attrib.get('name', '')}': {what} in a "
                "CMC setup are not implemented by ahbm cmc (it writes the Actuation and "
                f"Kinematics results itself); remove the <{tag}> objects"
            )
    el = node.find("use_fast_optimization_target")
    if el is not None and _text(el) and not _opt_bool(node, "use_fast_optimization_target", True):
        raise FileFormatError(
            f"{el.where()}: use_fast_optimization_target false (OpenSim's slow target, which "
            "meets the desired accelerations in the least-squares sense) is not implemented by "
            "ahbm cmc; set it to true"
        )


def read_cmc_setup(path) -> CMCSetup:
    """Read an OpenSim CMCTool setup.

    Parameters
    ----------
    path : str or path-like
        An XML file with a ``<CMCTool>`` element.

    Returns
    -------
    CMCSetup
        File names resolved against the setup's folder; tracking tasks, external
        loads and controls constraints read.

    Raises
    ------
    FileFormatError
        Not a CMCTool setup; an element ahbm does not know or implement, named
        with its line (desired points, RRA controls, analyses, controllers, the
        slow optimization target, task types other than CMC_Joint); no model,
        desired kinematics or task set file; a window that is not positive;
        malformed values.

    Examples
    --------
    >>> setup = read_cmc_setup("subject01_Setup_CMC.xml")  # doctest: +SKIP
    >>> setup.name, setup.cmc_time_window  # doctest: +SKIP
    ('walk_subject', 0.005)
    """
    from ahbm.opensim.rra_setup import read_tracking_tasks, tracking_tool_head

    node, folder, t0, t1 = tracking_tool_head(path, "CMCTool", "ahbm cmc", _READ, NOT_USED,
                                              _refuse)  # fmt: skip
    window = _opt_float(node, "cmc_time_window", 0.01)
    if not (window > 0 and math.isfinite(window)):
        el = node.find("cmc_time_window")
        raise FileFormatError(
            f"{el.where()}: <cmc_time_window> must be a positive time (s), got {_shown(_text(el))}"
        )
    files = []
    for word in _split_words(node.find("force_set_files")):
        p = Path(word.replace("\\", "/"))
        files.append(p if p.is_absolute() else folder / p)
    loads_file = _file(node, "external_loads_file", folder)
    rd = _child_text(node, "results_directory")
    prec = _opt_float(node, "output_precision", 8.0)
    if not (1 <= prec <= 20 and prec == int(prec)):
        raise FileFormatError(
            f"{node.find('output_precision').where()}: expected an integer from 1 to 20, got "
            f"{_shown(_child_text(node, 'output_precision'))}"
        )
    task_file = _file(node, "task_set_file", folder)
    constraints_file = _file(node, "constraints_file", folder)
    return CMCSetup(
        path=Path(path),
        name=node.attrib.get("name", ""),
        model_file=_file(node, "model_file", folder),
        desired_kinematics_file=_file(node, "desired_kinematics_file", folder),
        task_set_file=task_file,
        external_loads_file=loads_file,
        external_loads=read_external_loads(loads_file) if loads_file is not None else None,
        force_set_files=tuple(files),
        replace_force_set=_opt_bool(node, "replace_force_set", False),
        results_directory=folder / rd if rd else folder,
        output_precision=int(prec),
        initial_time=t0,
        final_time=t1,
        lowpass_cutoff_frequency=_opt_float(node, "lowpass_cutoff_frequency", -1.0),
        cmc_time_window=window,
        tasks=read_tracking_tasks(task_file, tool="ahbm cmc"),
        constraints=(
            read_control_constraints(constraints_file) if constraints_file is not None else None
        ),
        constraints_file=constraints_file,
        solve_for_equilibrium=_opt_bool(node, "solve_for_equilibrium_for_auxiliary_states", True),
    )
