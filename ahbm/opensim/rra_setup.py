"""OpenSim's Residual Reduction Algorithm setups read into frozen setups (``ahbm rra``).

:func:`read_rra_setup` reads an ``<RRATool>`` setup, unchanged as OpenSim
writes it, with its tracking tasks (:func:`read_tracking_tasks`, a
``<CMC_TaskSet>`` of ``<CMC_Joint>`` tasks) and its external loads;
:func:`ahbm.opensim.rra_tool.run_rra_setup` runs it.

Every element is either read, or one of the settings of OpenSim's own
integrator and optimizer that ahbm's tracking does not use (listed in
:data:`NOT_USED`, said in ``docs/opensim.md``), or refused with its name and
line: an unknown element, a desired points file, a controls constraints file,
analyses or controllers in the setup, tasks other than ``CMC_Joint``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

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
    _tool_root,
    read_external_loads,
)

__all__ = ["NOT_USED", "RRASetup", "TrackingTaskSpec", "read_rra_setup", "read_tracking_tasks"]

#: RRATool elements that change nothing in ahbm's run: OpenSim's integrator and
#: optimizer settings (ahbm integrates each 1 ms window with Heun's method and
#: solves the least squares directly), auxiliary states (RRA has none), printing
NOT_USED = (
    "maximum_number_of_integrator_steps", "maximum_integrator_step_size",
    "minimum_integrator_step_size", "integrator_error_tolerance", "optimizer_algorithm",
    "numerical_derivative_step_size", "optimization_convergence_tolerance",
    "optimizer_derivative_dx", "optimizer_convergence_criterion",
    "solve_for_equilibrium_for_auxiliary_states", "use_verbose_printing", "defaults",
)  # fmt: skip
_READ = (
    "model_file", "replace_force_set", "force_set_files", "results_directory",
    "output_precision", "initial_time", "final_time", "AnalysisSet", "ControllerSet",
    "external_loads_file", "desired_points_file", "desired_kinematics_file", "task_set_file",
    "constraints_file", "rra_controls_file", "lowpass_cutoff_frequency",
    "adjust_com_to_reduce_residuals", "initial_time_for_com_adjustment",
    "final_time_for_com_adjustment", "adjusted_com_body", "output_model_file",
    "cmc_time_window",
)  # fmt: skip
_TASK_READ = ("on", "weight", "active", "kp", "kv", "ka", "coordinate", "limit")
_TASK_INERT = ("wrt_body", "express_body", "r0", "r1", "r2")  # not used by joint tasks


@dataclass(frozen=True)
class TrackingTaskSpec:
    """A ``<CMC_Joint>`` task: track a coordinate with a weight and PD gains.

    Attributes
    ----------
    name, coordinate : str
    weight, kp, kv, ka : float
        First components (a joint task has one); OpenSim's defaults 1, 1, 1, 1.
    """

    name: str
    coordinate: str
    weight: float = 1.0
    kp: float = 1.0
    kv: float = 1.0
    ka: float = 1.0


@dataclass(frozen=True)
class RRASetup:
    """An OpenSim RRATool setup.

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
        Significant digits of OpenSim's text (ahbm writes the shortest exact text).
    initial_time, final_time : float
    lowpass_cutoff_frequency : float
        Hz; negative: no filtering.
    tasks : tuple of TrackingTaskSpec
        The tasks that are on and active.
    adjust_com : bool
        ``adjust_com_to_reduce_residuals``.
    com_time_range : tuple of float
        ``(initial, final)`` for the COM adjustment (the tool's range when both are -1).
    adjusted_com_body : str
    output_model_file : pathlib.Path or None
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
    tasks: tuple = ()
    adjust_com: bool = False
    com_time_range: tuple = (0.0, 1.0)
    adjusted_com_body: str = ""
    output_model_file: Path | None = None


def _first(el, tag: str, default: float) -> float:
    """The first number of a task's array property (weight, kp, kv, ka)."""
    node = el.find(tag)
    if node is None or _text(node) == "":
        return default
    words = _split_words(node)
    v = _float(node, words[0])
    if not math.isfinite(v) or v < 0:
        raise FileFormatError(
            f"{node.where()}: <{tag}> of task '{el.attrib.get('name', '')}' must be a finite "
            f"number >= 0, got {_shown(_text(node))}"
        )
    return v


def tracking_tool_head(path, tool: str, command: str, read, not_used, refuse) -> tuple:
    """The part RRATool and CMCTool setups share: ``(node, folder, t0, t1)``.

    Every element must be one the tool reads (`read`) or names as not used
    (`not_used`); `refuse(node, folder)` refuses what is not implemented; the
    model, desired kinematics and task set files must be named; the time range
    must be increasing. Errors name the element and its line.
    """
    node, folder = _tool_root(path, tool, f"{tool} setup")
    article = "an" if tool[0] in "AEIOUR" else "a"
    for child in node.children:
        if child.tag not in read and child.tag not in not_used:
            raise FileFormatError(
                f"{child.where()}: <{child.tag}> is not {article} {tool} element ahbm knows; "
                "remove it (or check its spelling)"
            )
    refuse(node, folder)
    for tag in ("model_file", "desired_kinematics_file", "task_set_file"):
        if _file(node, tag, folder) is None:
            el = node.find(tag)
            raise FileFormatError(
                f"{(node if el is None else el).where()}: the {tool} setup names no <{tag}>; "
                f"{command} needs it"
            )
    t0 = _opt_float(node, "initial_time", 0.0)
    t1 = _opt_float(node, "final_time", 1.0)
    if not t0 < t1:
        raise FileFormatError(
            f"{node.where()}: <final_time> {t1} is not after <initial_time> {t0}; give a time range"
        )
    return node, folder, t0, t1


def read_tracking_tasks(path, *, tool: str = "ahbm rra") -> tuple:
    """Read the ``<CMC_Joint>`` tasks of an OpenSim tracking-task file (``<CMC_TaskSet>``).

    Parameters
    ----------
    path : str or path-like
    tool : str
        The command named in the messages (``"ahbm rra"``, ``"ahbm cmc"``).

    Returns
    -------
    tuple of TrackingTaskSpec
        The tasks that are ``<on>`` and whose first ``<active>`` flag is true, in
        file order.

    Raises
    ------
    FileFormatError
        Not a task set; a task other than ``CMC_Joint`` (``CMC_Point``,
        ``CMC_Orientation``, state tracking), an element of a task or of the set
        that ahbm does not implement (``<limit>`` other than 0, a ``<datafile>``),
        a task without a coordinate, two tasks on one coordinate, negative
        weights or gains; each named with its line.

    Examples
    --------
    >>> tasks = read_tracking_tasks("subject01_Tracking_Tasks.xml")  # doctest: +SKIP
    >>> tasks[0].coordinate, tasks[0].weight  # doctest: +SKIP
    ('pelvis_tx', 500.0)
    """
    root = parse_xml_file(path, "tracking tasks (CMC_TaskSet)")
    node = root if root.tag == "CMC_TaskSet" else root.find("CMC_TaskSet")
    if node is None:
        raise FileFormatError(
            f"'{path}' is not an OpenSim tracking-task file: no <CMC_TaskSet> element"
        )
    for child in node.children:
        if child.tag == "datafile" and _text(child):
            raise FileFormatError(
                f"{child.where()}: <datafile> (tracking of states from a file) is not "
                f"implemented by {tool}; remove it"
            )
        if child.tag not in ("objects", "groups", "datafile", "defaults"):
            raise FileFormatError(
                f"{child.where()}: <{child.tag}> is not an element of a CMC_TaskSet that ahbm "
                "reads; remove it"
            )
    out, seen = [], {}
    for el in _objects(node):
        name = el.attrib.get("name", "")
        if el.tag != "CMC_Joint":
            raise FileFormatError(
                f"{el.where()}: {el.tag} '{name}' is not implemented by {tool}, which tracks "
                "coordinates (CMC_Joint tasks); remove the task or track its coordinate"
            )
        for child in el.children:
            if child.tag not in _TASK_READ and child.tag not in _TASK_INERT:
                raise FileFormatError(
                    f"{child.where()}: <{child.tag}> is not an element of a CMC_Joint task that "
                    "ahbm reads; remove it"
                )
        limit = _opt_float(el, "limit", 0.0)
        if limit != 0:
            raise FileFormatError(
                f"{el.find('limit').where()}: <limit> {limit} of task '{name}' (the stress-term "
                f"blending of CMC) is not implemented by {tool}; set it to 0"
            )
        if not _opt_bool(el, "on", True):
            continue
        active = _split_words(el.find("active"))
        if active and active[0].lower() not in ("true", "1"):
            continue
        coord = _child_text(el, "coordinate").split("/")[-1]
        if not coord:
            raise FileFormatError(f"{el.where()}: CMC_Joint '{name}' names no <coordinate>")
        if coord in seen:
            raise FileFormatError(
                f"{el.where()}: CMC_Joint '{name}' tracks coordinate '{coord}' as task "
                f"'{seen[coord]}' does; give each coordinate one task"
            )
        seen[coord] = name
        out.append(
            TrackingTaskSpec(
                name=name or coord,
                coordinate=coord,
                weight=_first(el, "weight", 1.0),
                kp=_first(el, "kp", 1.0),
                kv=_first(el, "kv", 1.0),
                ka=_first(el, "ka", 1.0),
            )
        )
    return tuple(out)


def _refuse(node, folder) -> None:
    """FileFormatError for the elements of an RRATool that ahbm does not implement."""
    for tag, what in (
        ("desired_points_file", "tracking of points"),
        ("constraints_file", "a controls constraints file"),
        ("rra_controls_file", "an RRA controls file"),
    ):
        if _file(node, tag, folder) is not None:
            raise FileFormatError(
                f"{node.find(tag).where()}: <{tag}> ({what}) is not implemented by ahbm rra; "
                "leave it empty"
            )
    for tag, what in (("AnalysisSet", "analyses"), ("ControllerSet", "controllers")):
        el = node.find(tag)
        if el is not None and _objects(el):
            first = _objects(el)[0]
            raise FileFormatError(
                f"{first.where()}: {first.tag} '{first.attrib.get('name', '')}': {what} in an "
                "RRA setup are not implemented by ahbm rra (it writes the Actuation and "
                f"Kinematics results itself); remove the <{tag}> objects"
            )
    el = node.find("cmc_time_window")
    if el is not None and _text(el) and _float(el) != 0.001:
        raise FileFormatError(
            f"{el.where()}: RRA's time window is 0.001 s (OpenSim ignores other values); "
            f"got {_text(el)}"
        )


def read_rra_setup(path) -> RRASetup:
    """Read an OpenSim RRATool setup.

    Parameters
    ----------
    path : str or path-like
        An XML file with an ``<RRATool>`` element.

    Returns
    -------
    RRASetup
        File names resolved against the setup's folder, tracking tasks and
        external loads read.

    Raises
    ------
    FileFormatError
        Not an RRATool setup; an element ahbm does not know or implement, named
        with its line (desired points, constraints files, analyses, controllers,
        task types other than CMC_Joint); no model, desired kinematics or task
        set file; COM adjustment without a body; malformed values.

    Examples
    --------
    >>> setup = read_rra_setup("subject01_Setup_RRA.xml")  # doctest: +SKIP
    >>> setup.name, len(setup.tasks)  # doctest: +SKIP
    ('subject_adjusted', 10)
    """
    node, folder, t0, t1 = tracking_tool_head(path, "RRATool", "ahbm rra", _READ, NOT_USED,
                                              _refuse)  # fmt: skip
    adjust = _opt_bool(node, "adjust_com_to_reduce_residuals", False)
    body = _child_text(node, "adjusted_com_body")
    if adjust and not body:
        el = node.find("adjusted_com_body")
        raise FileFormatError(
            f"{(node if el is None else el).where()}: adjust_com_to_reduce_residuals is true "
            "but <adjusted_com_body> names no body; name one (the torso for a gait model)"
        )
    c0 = _opt_float(node, "initial_time_for_com_adjustment", -1.0)
    c1 = _opt_float(node, "final_time_for_com_adjustment", -1.0)
    com_range = (t0, t1) if (c0 == -1 and c1 == -1) else (c0, c1)
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
    model_out = _file(node, "output_model_file", folder)
    if model_out is None:  # OpenSim's default, beside the setup
        model_out = folder / "adjusted_model.osim"
    return RRASetup(
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
        tasks=read_tracking_tasks(task_file),
        adjust_com=adjust,
        com_time_range=com_range,
        adjusted_com_body=body,
        output_model_file=model_out,
    )
