"""OpenSim tool setup files: Inverse Kinematics, Inverse Dynamics and External Loads.

:func:`read_ik_setup`, :func:`read_id_setup` and :func:`read_external_loads`
read the XML files that OpenSim's GUI and ``opensim-cmd`` use
(``<InverseKinematicsTool>``, ``<InverseDynamicsTool>``, ``<ExternalLoads>``
inside an ``<OpenSimDocument>``) into plain, frozen dataclasses. Relative
file names are resolved against the folder of the file that names them, as
OpenSim does (it changes into the setup file's folder before running a tool);
``"Unassigned"`` and empty values mean "not given".

The reader is strict where OpenSim would fail later (missing model or data
file names, malformed numbers, unknown task types) and says which element on
which line is at fault; it refuses document type and entity declarations.
Elements that do not change the result (comments, ``<results_directory>`` of
IK, ``<input_directory>``, GUI-only flags) are read when useful and otherwise
ignored.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from ahbm._internal.validation import check_read_size
from ahbm.errors import FileFormatError
from ahbm.opensim._xml import XmlElement, parse_xml_file

__all__ = [
    "ExternalForceSpec",
    "ExternalLoads",
    "IDSetup",
    "IKSetup",
    "IKTask",
    "read_external_loads",
    "read_id_setup",
    "read_ik_setup",
]

_UNASSIGNED = ("", "unassigned")

#: Bytes one name of a whitespace-separated list costs once split (a Python str object, its
#: pointers in the list and the tuple): what :func:`_split_words` counts against the read cap.
_WORD_BYTES = 72
#: Most names in one list of a setup file. Lists name a model's components (joints,
#: forces, coordinates, markers): the largest OpenSim models have a few hundred.
MAX_LIST_NAMES = 100_000
#: Longest file name read from a setup (PATH_MAX of common systems).
_MAX_PATH_CHARS = 4096


# --- bounded messages -------------------------------------------------------------------


def _shown(text, limit: int = 60) -> str:
    """`text` quoted for a message, cut after `limit` characters (with its length)."""
    text = str(text)
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text)} characters)"


def _listed(items, limit: int = 5) -> str:
    """The first `limit` items for a message, each cut short, and how many there are.

    Examples
    --------
    >>> _listed(["a", "b"])
    "['a', 'b']"
    >>> _listed([f"j{i}" for i in range(1000)], 3)
    "['j0', 'j1', 'j2'] and 997 more (1000 in all)"
    """
    n = len(items)
    head = [str(x) if len(str(x)) <= 60 else str(x)[:60] + "..." for x in list(items[:limit])]
    return f"{head!r}" + (f" and {n - limit} more ({n} in all)" if n > limit else "")


# --- small typed readers ----------------------------------------------------------------


def _text(el: XmlElement | None) -> str:
    return "" if el is None else el.text.strip()


def _split_words(el: XmlElement | None) -> tuple:
    """The whitespace-separated words of an element's text, counted against the read cap.

    A list of millions of short names costs ~72 bytes per name once split,
    many times the bytes of the file: that (an upper bound, from the number of
    whitespace characters) counts against :func:`ahbm.io.max_read_bytes` like the
    file itself, and a list beyond the cap is a FileFormatError naming the
    element and its line.
    """
    text = _text(el)
    if not text:
        return ()
    if len(text) > 4096:
        n = 1 + sum(text.count(c) for c in " \t\n\r")
        if n > MAX_LIST_NAMES and len(text.split(maxsplit=MAX_LIST_NAMES)) > MAX_LIST_NAMES:
            raise FileFormatError(
                f"{el.where()}: a list of more than {MAX_LIST_NAMES:,} names "
                f"({len(text):,} characters); it names components of a model, which has "
                "far fewer: correct the setup file"
            )
        check_read_size(
            n * _WORD_BYTES + 2 * len(text),
            f"splitting the list of up to {n} names of {len(text)} characters",
            el.where(),
        )
    return tuple(text.split())


def _child_text(parent: XmlElement, tag: str) -> str:
    return _text(parent.find(tag))


def _float(el: XmlElement, value: str | None = None) -> float:
    s = _text(el) if value is None else value
    low = s.lower()
    if low in ("inf", "infinity", "+inf"):
        return math.inf
    if low in ("-inf", "-infinity"):
        return -math.inf
    try:
        v = float(s)
    except ValueError as err:
        raise FileFormatError(f"{el.where()}: expected a number, got {_shown(s)}") from err
    if math.isnan(v):
        raise FileFormatError(f"{el.where()}: NaN is not allowed here")
    return v


def _bool(el: XmlElement) -> bool:
    s = _text(el).lower()
    if s in ("true", "1", "yes"):
        return True
    if s in ("false", "0", "no"):
        return False
    raise FileFormatError(f"{el.where()}: expected true or false, got {_shown(_text(el))}")


def _opt_float(parent: XmlElement, tag: str, default: float) -> float:
    el = parent.find(tag)
    if el is None or _text(el) == "":
        return default
    return _float(el)


def _opt_bool(parent: XmlElement, tag: str, default: bool) -> bool:
    el = parent.find(tag)
    if el is None or _text(el) == "":
        return default
    return _bool(el)


def _file(parent: XmlElement, tag: str, folder: Path) -> Path | None:
    """A file name element resolved against `folder`; None when absent/Unassigned."""
    s = _child_text(parent, tag)
    if s.lower() in _UNASSIGNED:
        return None
    if len(s) > _MAX_PATH_CHARS or "\0" in s:
        raise FileFormatError(
            f"{parent.find(tag).where()}: {_shown(s)} is not a file name (longer than "
            f"{_MAX_PATH_CHARS} characters or with a NUL); name the file"
        )
    p = Path(s.replace("\\", "/"))
    return p if p.is_absolute() else folder / p


def _time_range(parent: XmlElement) -> tuple[float, float] | None:
    el = parent.find("time_range")
    if el is None or _text(el) == "":
        return None
    parts = _split_words(el)
    if len(parts) != 2:
        raise FileFormatError(
            f"{el.where()}: expected two numbers (start and end time, s), got {_shown(_text(el))}"
        )
    t0, t1 = (_float(el, p) for p in parts)
    if t1 < t0:
        raise FileFormatError(f"{el.where()}: the end time {t1} is before the start time {t0}")
    return (t0, t1)


def _tool_root(path, tool: str, what: str) -> tuple[XmlElement, Path]:
    root = parse_xml_file(path, what)
    node = root if root.tag == tool else root.find(tool)
    if node is None:
        found = [c.tag for c in root.children] if root.tag == "OpenSimDocument" else [root.tag]
        raise FileFormatError(
            f"'{path}' is not an OpenSim {what} file: no <{tool}> element (found {found}); "
            f"give the setup file of OpenSim's {tool}"
        )
    return node, Path(path).resolve().parent


def _objects(node: XmlElement) -> list[XmlElement]:
    """Children of the ``<objects>`` list of an OpenSim Set (or the node's own children)."""
    objs = node.find("objects")
    return (objs if objs is not None else node).children


# --- IK ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class IKTask:
    """One task of an IK setup's ``<IKTaskSet>``.

    Attributes
    ----------
    name : str
        Marker name (marker task) or coordinate name (coordinate task).
    kind : {"marker", "coordinate"}
    apply : bool
        Whether the task is used (``<apply>``).
    weight : float
        Non-negative weight (``<weight>``; 1 if absent).
    value_type : {"default_value", "manual_value", "from_file"}
        Coordinate tasks only: where the target value comes from (OpenSim 4's
        ``<value_type>``; 3.x files with ``<from_file>true</from_file>`` map to
        "from_file", a ``<value>`` without it to "manual_value").
    value : float
        Coordinate tasks with ``value_type="manual_value"``: the target in the
        coordinate's internal unit (rad or m), as OpenSim reads it.
    """

    name: str
    kind: str
    apply: bool = True
    weight: float = 1.0
    value_type: str = "default_value"
    value: float = 0.0


@dataclass(frozen=True)
class IKSetup:
    """An OpenSim Inverse Kinematics setup (``<InverseKinematicsTool>``).

    Attributes
    ----------
    path : pathlib.Path
        The setup file.
    name : str
        The tool's ``name`` attribute ("" if absent).
    model_file : pathlib.Path or None
        The ``.osim`` model, resolved against the setup's folder.
    marker_file : pathlib.Path or None
        The ``.trc`` marker trajectories.
    coordinate_file : pathlib.Path or None
        The ``.mot``/``.sto`` file of coordinate observations for
        ``from_file`` coordinate tasks.
    tasks : tuple of IKTask
    time_range : tuple of float or None
        ``(start, end)`` in s; None means the whole marker file.
    output_motion_file : pathlib.Path or None
        Where OpenSim writes the motion (relative to the setup's folder).
    results_directory : pathlib.Path
        Folder of the marker-error report.
    accuracy : float
        Convergence accuracy (``1e-5`` by default).
    constraint_weight : float
        Weight of the model's kinematic constraints (``inf``: enforced).
    report_errors : bool
        Write the marker errors (``<name>_ik_marker_errors.sto``).
    """

    path: Path
    name: str = ""
    model_file: Path | None = None
    marker_file: Path | None = None
    coordinate_file: Path | None = None
    tasks: tuple = ()
    time_range: tuple | None = None
    output_motion_file: Path | None = None
    results_directory: Path | None = None
    accuracy: float = 1e-5
    constraint_weight: float = math.inf
    report_errors: bool = True

    @property
    def marker_tasks(self) -> tuple:
        """The applied marker tasks."""
        return tuple(t for t in self.tasks if t.kind == "marker" and t.apply)

    @property
    def coordinate_tasks(self) -> tuple:
        """The applied coordinate tasks."""
        return tuple(t for t in self.tasks if t.kind == "coordinate" and t.apply)


def _ik_task(el: XmlElement) -> IKTask:
    name = el.attrib.get("name", "").strip()
    if not name:
        raise FileFormatError(
            f"{el.where()}: a task needs a name attribute (the marker/coordinate)"
        )
    apply = _opt_bool(el, "apply", True)
    weight = _opt_float(el, "weight", 1.0)
    if not weight >= 0 or math.isinf(weight):
        raise FileFormatError(f"{el.where()}: <weight> must be finite and >= 0, got {weight}")
    if el.tag == "IKMarkerTask":
        return IKTask(name, "marker", apply, weight)
    vt_el = el.find("value_type")
    value = _opt_float(el, "value", 0.0)
    if vt_el is not None and _text(vt_el):
        vt = _text(vt_el)
        if vt not in ("default_value", "manual_value", "from_file"):
            raise FileFormatError(
                f"{vt_el.where()}: <value_type> must be default_value, manual_value or "
                f"from_file, got {_shown(vt)}"
            )
    elif el.find("from_file") is not None and _opt_bool(el, "from_file", False):
        vt = "from_file"
    elif el.find("value") is not None:
        vt = "manual_value"
    else:
        vt = "default_value"
    return IKTask(name, "coordinate", apply, weight, vt, value)


def _ik_task_set(node: XmlElement) -> tuple:
    """The tasks of the ``<IKTaskSet>`` of a tool element (IK tool, Scale tool's marker placer)."""
    tasks = []
    seen = set()
    ts = node.find("IKTaskSet")
    for el in _objects(ts) if ts is not None else []:
        if el.tag not in ("IKMarkerTask", "IKCoordinateTask"):
            raise FileFormatError(
                f"{el.where()}: unknown IK task type; use IKMarkerTask or IKCoordinateTask"
            )
        task = _ik_task(el)
        key = (task.kind, task.name)
        if key in seen:
            raise FileFormatError(f"{el.where()}: a second task for {task.kind} '{task.name}'")
        seen.add(key)
        tasks.append(task)
    return tuple(tasks)


def read_ik_setup(path) -> IKSetup:
    """Read an OpenSim Inverse Kinematics setup file.

    Parameters
    ----------
    path : str or path-like
        An XML file with an ``<InverseKinematicsTool>`` element.

    Returns
    -------
    IKSetup
        File names resolved against the setup's folder, the tasks, the time
        range and the solver settings.

    Raises
    ------
    FileFormatError
        Not an IK setup, malformed XML or values, a DOCTYPE/ENTITY declaration,
        no model or marker file, an unknown task type (the message names the
        element and its line).

    Examples
    --------
    >>> setup = read_ik_setup("subject01_Setup_IK.xml")  # doctest: +SKIP
    >>> setup.model_file.name, len(setup.marker_tasks)  # doctest: +SKIP
    ('subject01.osim', 33)
    """
    node, folder = _tool_root(path, "InverseKinematicsTool", "IK setup")
    for tag in ("model_file", "marker_file"):
        if _file(node, tag, folder) is None:
            el = node.find(tag) or node
            raise FileFormatError(
                f"{el.where()}: the IK setup names no <{tag}>; ahbm needs it to run the setup"
            )
    tasks = _ik_task_set(node)
    rd = _child_text(node, "results_directory")
    return IKSetup(
        path=Path(path),
        name=node.attrib.get("name", ""),
        model_file=_file(node, "model_file", folder),
        marker_file=_file(node, "marker_file", folder),
        coordinate_file=_file(node, "coordinate_file", folder),
        tasks=tuple(tasks),
        time_range=_time_range(node),
        output_motion_file=_file(node, "output_motion_file", folder),
        results_directory=folder / rd if rd else folder,
        accuracy=_opt_float(node, "accuracy", 1e-5),
        constraint_weight=_opt_float(node, "constraint_weight", math.inf),
        report_errors=_opt_bool(node, "report_errors", True),
    )


# --- external loads -----------------------------------------------------------------------


@dataclass(frozen=True)
class ExternalForceSpec:
    """One ``<ExternalForce>`` of an external-loads file.

    Attributes
    ----------
    name : str
    applied_to_body : str
        Body the force acts on.
    force_expressed_in_body : str
        Frame of the force and torque vectors ("ground" by default).
    point_expressed_in_body : str
        Frame of the point of application ("ground" by default).
    force_identifier, point_identifier, torque_identifier : str
        Column-name prefixes in the data file ("" when not applied: no
        force, the body origin as point, no torque).
    data_source_name : str
        OpenSim's data-source name ("" / Unassigned: the loads' data file).
    """

    name: str
    applied_to_body: str
    force_expressed_in_body: str = "ground"
    point_expressed_in_body: str = "ground"
    force_identifier: str = ""
    point_identifier: str = ""
    torque_identifier: str = ""
    data_source_name: str = ""


@dataclass(frozen=True)
class ExternalLoads:
    """An OpenSim ``<ExternalLoads>`` file: forces and their data file.

    Attributes
    ----------
    path : pathlib.Path
    name : str
    forces : tuple of ExternalForceSpec
        The enabled forces (``<isDisabled>true`` / ``<appliesForce>false`` ones
        are dropped).
    datafile : pathlib.Path or None
        The ``.mot``/``.sto`` with the force, point and torque columns,
        resolved against the loads file's folder.
    model_kinematics_file : pathlib.Path or None
        OpenSim 3.x ``<external_loads_model_kinematics_file>``: kinematics with
        which OpenSim re-expresses points given in the ground in the applied
        bodies (not done by ahbm; :func:`~ahbm.opensim.run_id_setup` warns).
    """

    path: Path
    name: str = ""
    forces: tuple = ()
    datafile: Path | None = None
    model_kinematics_file: Path | None = None


def _external_force(el: XmlElement) -> ExternalForceSpec | None:
    name = el.attrib.get("name", "").strip()
    if _opt_bool(el, "isDisabled", False) or not _opt_bool(el, "appliesForce", True):
        return None
    body = _child_text(el, "applied_to_body")
    if not body:
        raise FileFormatError(f"{el.where()}: <ExternalForce> '{name}' has no <applied_to_body>")

    def ident(tag):
        s = _child_text(el, tag)
        return "" if s.lower() in _UNASSIGNED else s

    spec = ExternalForceSpec(
        name=name,
        applied_to_body=body,
        force_expressed_in_body=_child_text(el, "force_expressed_in_body") or "ground",
        point_expressed_in_body=_child_text(el, "point_expressed_in_body") or "ground",
        force_identifier=ident("force_identifier"),
        point_identifier=ident("point_identifier"),
        torque_identifier=ident("torque_identifier"),
        data_source_name=ident("data_source_name"),
    )
    if not spec.force_identifier and not spec.torque_identifier:
        raise FileFormatError(
            f"{el.where()}: <ExternalForce> '{name}' applies neither a force nor a torque "
            "(give <force_identifier> and/or <torque_identifier>)"
        )
    if spec.point_identifier and not spec.force_identifier:
        raise FileFormatError(
            f"{el.where()}: <ExternalForce> '{name}' gives a point but no force identifier"
        )
    return spec


def read_external_loads(path) -> ExternalLoads:
    """Read an OpenSim external-loads XML file (``<ExternalLoads>``).

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    ExternalLoads
        The enabled ``<ExternalForce>`` elements and the data file (resolved
        against the loads file's folder).

    Raises
    ------
    FileFormatError
        Not an external-loads file, malformed XML, a force without body or
        identifiers, no data file.

    Examples
    --------
    >>> loads = read_external_loads("subject01_walk_grf.xml")  # doctest: +SKIP
    >>> [(f.name, f.applied_to_body, f.force_identifier) for f in loads.forces]  # doctest: +SKIP
    [('right', 'calcn_r', 'ground_force_v'), ('left', 'calcn_l', '1_ground_force_v')]
    """
    root = parse_xml_file(path, "external loads")
    node = root if root.tag == "ExternalLoads" else root.find("ExternalLoads")
    if node is None:
        raise FileFormatError(
            f"'{path}' is not an OpenSim external loads file: no <ExternalLoads> element"
        )
    folder = Path(path).resolve().parent
    forces = []
    for el in _objects(node):
        if el.tag != "ExternalForce":
            raise FileFormatError(
                f"{el.where()}: only <ExternalForce> elements are supported in <ExternalLoads>"
            )
        spec = _external_force(el)
        if spec is not None:
            forces.append(spec)
    names = [f.name for f in forces]
    if len(set(names)) != len(names):
        raise FileFormatError(f"'{path}': two <ExternalForce> elements share a name: {names}")
    datafile = _file(node, "datafile", folder)
    if datafile is None and forces:
        el = node.find("datafile") or node
        raise FileFormatError(
            f"{el.where()}: no <datafile> with the force data; name the .mot/.sto file"
        )
    return ExternalLoads(
        Path(path),
        node.attrib.get("name", ""),
        tuple(forces),
        datafile,
        _file(node, "external_loads_model_kinematics_file", folder),
    )


# --- ID -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class IDSetup:
    """An OpenSim Inverse Dynamics setup (``<InverseDynamicsTool>``).

    Attributes
    ----------
    path : pathlib.Path
    name : str
    model_file : pathlib.Path or None
    coordinates_file : pathlib.Path or None
        The ``.mot``/``.sto`` with the coordinates (usually IK's output).
    external_loads_file : pathlib.Path or None
    external_loads : ExternalLoads or None
        The parsed external loads (None without a file).
    lowpass_cutoff_frequency : float
        Cut-off (Hz) of the low-pass filter of the coordinates; negative means
        no filtering (OpenSim's default -1).
    time_range : tuple of float or None
    forces_to_exclude : tuple of str
        Forces excluded from the model's dynamics (e.g. "Muscles").
    results_directory : pathlib.Path
    output_gen_force_file : pathlib.Path
        ``results_directory / output_gen_force_file`` (default
        ``inverse_dynamics.sto``).
    joints_to_report_body_forces : tuple of str
        Joints whose equivalent body forces OpenSim would also report (ahbm
        does not compute them).
    """

    path: Path
    name: str = ""
    model_file: Path | None = None
    coordinates_file: Path | None = None
    external_loads_file: Path | None = None
    external_loads: ExternalLoads | None = None
    lowpass_cutoff_frequency: float = -1.0
    time_range: tuple | None = None
    forces_to_exclude: tuple = ()
    results_directory: Path | None = None
    output_gen_force_file: Path | None = None
    joints_to_report_body_forces: tuple = ()


def read_id_setup(path) -> IDSetup:
    """Read an OpenSim Inverse Dynamics setup file (and its external loads).

    Parameters
    ----------
    path : str or path-like
        An XML file with an ``<InverseDynamicsTool>`` element.

    Returns
    -------
    IDSetup
        File names resolved against the setup's folder; ``external_loads``
        parsed from ``<external_loads_file>``.

    Raises
    ------
    FileFormatError
        Not an ID setup, malformed XML or values, a DOCTYPE/ENTITY declaration,
        no model or coordinates file, a bad external-loads file.

    Examples
    --------
    >>> setup = read_id_setup("subject01_Setup_ID.xml")  # doctest: +SKIP
    >>> setup.lowpass_cutoff_frequency, setup.output_gen_force_file.name  # doctest: +SKIP
    (6.0, 'subject01_walk_ID.sto')
    """
    node, folder = _tool_root(path, "InverseDynamicsTool", "ID setup")
    for tag in ("model_file", "coordinates_file"):
        if _file(node, tag, folder) is None:
            el = node.find(tag) or node
            raise FileFormatError(
                f"{el.where()}: the ID setup names no <{tag}>; ahbm needs it to run the setup"
            )
    loads_file = _file(node, "external_loads_file", folder)
    loads = read_external_loads(loads_file) if loads_file is not None else None
    rd = _child_text(node, "results_directory")
    results = folder / rd if rd else folder
    out = _child_text(node, "output_gen_force_file") or "inverse_dynamics.sto"
    out_path = Path(out.replace("\\", "/"))
    if not out_path.is_absolute():
        out_path = results / out_path
    excl = _split_words(node.find("forces_to_exclude"))
    return IDSetup(
        path=Path(path),
        name=node.attrib.get("name", ""),
        model_file=_file(node, "model_file", folder),
        coordinates_file=_file(node, "coordinates_file", folder),
        external_loads_file=loads_file,
        external_loads=loads,
        lowpass_cutoff_frequency=_opt_float(node, "lowpass_cutoff_frequency_for_coordinates", -1.0),
        time_range=_time_range(node),
        forces_to_exclude=excl,
        results_directory=results,
        output_gen_force_file=out_path,
        joints_to_report_body_forces=_split_words(node.find("joints_to_report_body_forces")),
    )
