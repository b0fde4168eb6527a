"""OpenSim's AnalyzeTool setups for Static Optimization read into frozen setups.

:func:`read_so_setup` reads an AnalyzeTool setup with a
``<StaticOptimization>`` analysis (and optionally ``<JointReaction>``
analyses) into a frozen :class:`SOSetup`; :func:`read_actuators` reads an
actuator (force-set) file of CoordinateActuators, PointActuators and
TorqueActuators (OpenSim's reserves and residuals).
:func:`ahbm.opensim.so_tool.run_so_setup` runs the setup.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ahbm.errors import AhbmWarning, FileFormatError
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

__all__ = [
    "CoordinateActuatorSpec",
    "JointReactionSpec",
    "PointActuatorSpec",
    "SOSetup",
    "StaticOptimizationSpec",
    "TorqueActuatorSpec",
    "read_actuators",
    "read_so_setup",
]


# --- the setup ------------------------------------------------------------------------------


@dataclass(frozen=True)
class StaticOptimizationSpec:
    """The ``<StaticOptimization>`` analysis of an AnalyzeTool setup (OpenSim's defaults)."""

    name: str = "StaticOptimization"
    on: bool = True
    start_time: float = -math.inf
    end_time: float = math.inf
    step_interval: int = 1
    activation_exponent: float = 2.0
    use_model_force_set: bool = True
    use_muscle_physiology: bool = True
    optimizer_convergence_criterion: float = 1e-4
    optimizer_max_iterations: int = 100


@dataclass(frozen=True)
class JointReactionSpec:
    """A ``<JointReaction>`` analysis: joints, the bodies loaded, the frames, the forces file."""

    name: str = "JointReaction"
    on: bool = True
    start_time: float = -math.inf
    end_time: float = math.inf
    step_interval: int = 1
    forces_file: Path | None = None
    joint_names: tuple = ("all",)
    apply_on_bodies: tuple = ("child",)
    express_in_frame: tuple = ("ground",)


@dataclass(frozen=True)
class CoordinateActuatorSpec:
    """An OpenSim ``CoordinateActuator`` (a reserve): generalized force ``u × optimal_force``."""

    name: str
    coordinate: str
    optimal_force: float = 1.0
    min_control: float = -math.inf
    max_control: float = math.inf


@dataclass(frozen=True)
class PointActuatorSpec:
    """An OpenSim ``PointActuator``: a force ``u × optimal_force`` along a direction at a point.

    Attributes
    ----------
    name, body : str
    point : tuple of float
        m; in the body frame, or in ground when ``point_is_global`` (then the
        body's material point at that ground position in each frame).
    direction : tuple of float
        Unit vector (normalized as OpenSim does), in the body frame or in
        ground when ``force_is_global``.
    """

    name: str
    body: str
    point: tuple = (0.0, 0.0, 0.0)
    point_is_global: bool = False
    direction: tuple = (1.0, 0.0, 0.0)
    force_is_global: bool = False
    optimal_force: float = 1.0
    min_control: float = -math.inf
    max_control: float = math.inf


@dataclass(frozen=True)
class TorqueActuatorSpec:
    """An OpenSim ``TorqueActuator``: ``u × optimal_force`` about an axis on body A, minus on B.

    ``axis`` (unit vector) is in ground when ``torque_is_global``, else in
    body A's frame.
    """

    name: str
    body_a: str
    body_b: str
    axis: tuple = (0.0, 0.0, 1.0)
    torque_is_global: bool = True
    optimal_force: float = 1.0
    min_control: float = -math.inf
    max_control: float = math.inf


@dataclass(frozen=True)
class SOSetup:
    """An OpenSim AnalyzeTool setup with a StaticOptimization analysis.

    Attributes
    ----------
    path : pathlib.Path
    name : str
        The tool's name (prefix of the output files).
    model_file, coordinates_file, external_loads_file : pathlib.Path or None
    external_loads : ExternalLoads or None
    force_set_files : tuple of pathlib.Path
        Actuator files (``<force_set_files>``).
    replace_force_set : bool
    results_directory : pathlib.Path
    initial_time, final_time : float
    lowpass_cutoff_frequency : float
        Hz; negative: no filtering.
    static_optimization : StaticOptimizationSpec
        ``on=False`` when the setup only computes joint reactions from force files.
    joint_reactions : tuple of JointReactionSpec
    other_analyses : tuple of str
        Analyses of the setup that ahbm does not run (``"Kinematics (name)"``).
    """

    path: Path
    name: str = ""
    model_file: Path | None = None
    coordinates_file: Path | None = None
    external_loads_file: Path | None = None
    external_loads: ExternalLoads | None = None
    force_set_files: tuple = ()
    replace_force_set: bool = False
    results_directory: Path | None = None
    initial_time: float = -math.inf
    final_time: float = math.inf
    lowpass_cutoff_frequency: float = -1.0
    static_optimization: StaticOptimizationSpec = field(default_factory=StaticOptimizationSpec)
    joint_reactions: tuple = ()
    other_analyses: tuple = ()


def _words(node, tag) -> tuple:
    return _split_words(node.find(tag))


def _opt_int(node, tag, default) -> int:
    el = node.find(tag)
    if el is None or _text(el) == "":
        return default
    v = _float(el)
    if v != int(v) or v < 1:
        raise FileFormatError(f"{el.where()}: expected a positive integer, got {_shown(_text(el))}")
    return int(v)


def _so_spec(el) -> StaticOptimizationSpec:
    return StaticOptimizationSpec(
        name=el.attrib.get("name", "StaticOptimization"),
        on=_opt_bool(el, "on", True),
        start_time=_opt_float(el, "start_time", -math.inf),
        end_time=_opt_float(el, "end_time", math.inf),
        step_interval=_opt_int(el, "step_interval", 1),
        activation_exponent=_opt_float(el, "activation_exponent", 2.0),
        use_model_force_set=_opt_bool(el, "use_model_force_set", True),
        use_muscle_physiology=_opt_bool(el, "use_muscle_physiology", True),
        optimizer_convergence_criterion=_opt_float(el, "optimizer_convergence_criterion", 1e-4),
        optimizer_max_iterations=_opt_int(el, "optimizer_max_iterations", 100),
    )


def _jr_spec(el, folder: Path) -> JointReactionSpec:
    return JointReactionSpec(
        name=el.attrib.get("name", "JointReaction"),
        on=_opt_bool(el, "on", True),
        start_time=_opt_float(el, "start_time", -math.inf),
        end_time=_opt_float(el, "end_time", math.inf),
        step_interval=_opt_int(el, "step_interval", 1),
        forces_file=_file(el, "forces_file", folder),
        joint_names=_words(el, "joint_names") or ("all",),
        apply_on_bodies=_words(el, "apply_on_bodies") or ("child",),
        express_in_frame=_words(el, "express_in_frame") or ("ground",),
    )


def read_so_setup(path) -> SOSetup:
    """Read an OpenSim AnalyzeTool setup with a StaticOptimization analysis.

    Parameters
    ----------
    path : str or path-like
        An XML file with an ``<AnalyzeTool>`` element whose ``<AnalysisSet>``
        holds a ``<StaticOptimization>`` (and optionally ``<JointReaction>``).

    Returns
    -------
    SOSetup
        File names resolved against the setup's folder.

    Raises
    ------
    FileFormatError
        Not an AnalyzeTool setup, no StaticOptimization analysis, no model or
        coordinates file, malformed values (the message names element and line).

    Examples
    --------
    >>> setup = read_so_setup("subject01_Setup_SO.xml")  # doctest: +SKIP
    >>> setup.static_optimization.activation_exponent  # doctest: +SKIP
    2.0
    """
    node, folder = _tool_root(path, "AnalyzeTool", "AnalyzeTool setup")
    analyses = node.find("AnalysisSet")
    so, jrs, other = None, [], []
    for el in _objects(analyses) if analyses is not None else []:
        if el.tag == "StaticOptimization":
            if so is not None:
                raise FileFormatError(f"{el.where()}: a second <StaticOptimization> analysis")
            so = _so_spec(el)
        elif el.tag == "JointReaction":
            jrs.append(_jr_spec(el, folder))
        else:
            other.append(f"{el.tag} ({el.attrib.get('name', '')})")
    jrs = [j for j in jrs if j.on]
    if (so is None or not so.on) and not jrs:
        where = analyses.where() if analyses is not None else node.where()
        found = f" (it has {', '.join(other)})" if other else ""
        raise FileFormatError(
            f"{where}: the AnalyzeTool setup has no <StaticOptimization> or <JointReaction> "
            f"analysis that is on{found}; ahbm so runs these two: give the setup of a static "
            "optimization or joint reaction analysis, or add one to its <AnalysisSet>"
        )
    for tag in ("model_file", "coordinates_file"):
        if _file(node, tag, folder) is None:
            el = node.find(tag)
            raise FileFormatError(
                f"{(node if el is None else el).where()}: the AnalyzeTool setup names no "
                f"<{tag}>; ahbm needs it to run static optimization (states files are not read)"
            )
    if so is None:
        so = StaticOptimizationSpec(on=False)
    if not so.on:
        for j in jrs:
            if j.forces_file is None:
                raise FileFormatError(
                    f"AnalyzeTool setup '{path}': JointReaction '{j.name}' has no <forces_file> "
                    "and no StaticOptimization runs to give the muscle forces; name the force "
                    "file of a static optimization"
                )
    loads_file = _file(node, "external_loads_file", folder)
    rd = _child_text(node, "results_directory")
    files = []
    for word in _words(node, "force_set_files"):
        p = Path(word.replace("\\", "/"))
        files.append(p if p.is_absolute() else folder / p)
    return SOSetup(
        path=Path(path),
        name=node.attrib.get("name", ""),
        model_file=_file(node, "model_file", folder),
        coordinates_file=_file(node, "coordinates_file", folder),
        external_loads_file=loads_file,
        external_loads=read_external_loads(loads_file) if loads_file is not None else None,
        force_set_files=tuple(files),
        replace_force_set=_opt_bool(node, "replace_force_set", False),
        results_directory=folder / rd if rd else folder,
        initial_time=_opt_float(node, "initial_time", -math.inf),
        final_time=_opt_float(node, "final_time", math.inf),
        lowpass_cutoff_frequency=_opt_float(node, "lowpass_cutoff_frequency_for_coordinates", -1.0),
        static_optimization=so,
        joint_reactions=tuple(jrs),
        other_analyses=tuple(other),
    )


_ACTUATOR_TAGS = ("BodyActuator", "PointToPointActuator", "ActivationCoordinateActuator")


def _coordinate_actuator(el) -> CoordinateActuatorSpec:
    name = el.attrib.get("name", "")
    coord = _child_text(el, "coordinate")
    if not coord:
        raise FileFormatError(f"{el.where()}: CoordinateActuator '{name}' names no <coordinate>")
    return CoordinateActuatorSpec(
        name=name,
        coordinate=coord.split("/")[-1],
        optimal_force=_opt_float(el, "optimal_force", 1.0),
        min_control=_opt_float(el, "min_control", -math.inf),
        max_control=_opt_float(el, "max_control", math.inf),
    )


def _name_of(el, *tags) -> str:
    """A body named by the first present tag (3.x/4.x property or socket), path stripped."""
    for tag in tags:
        v = _child_text(el, tag)
        if v:
            return v.rstrip("/").split("/")[-1]
    return ""


def _unit(el, tag, default) -> tuple:
    node = el.find(tag)
    if node is None or _text(node) == "":
        v = np.asarray(default, dtype=float)
    else:
        parts = _split_words(node)
        if len(parts) != 3:
            raise FileFormatError(f"{node.where()}: expected 3 numbers, got {_shown(_text(node))}")
        v = np.array([_float(node, w) for w in parts])
    if tag in ("direction", "axis"):
        n = float(np.linalg.norm(v))
        if not n > 0:
            raise FileFormatError(
                f"{(el if node is None else node).where()}: <{tag}> of {el.tag} "
                f"'{el.attrib.get('name', '')}' is the zero vector; give a direction"
            )
        v = v / n
    return tuple(float(x) for x in v)


def _point_actuator(el) -> PointActuatorSpec:
    name = el.attrib.get("name", "")
    body = _name_of(el, "body", "socket_body")
    if not body:
        raise FileFormatError(f"{el.where()}: PointActuator '{name}' names no <body>")
    return PointActuatorSpec(
        name=name,
        body=body,
        point=_unit(el, "point", (0.0, 0.0, 0.0)),
        point_is_global=_opt_bool(el, "point_is_global", False),
        direction=_unit(el, "direction", (1.0, 0.0, 0.0)),
        force_is_global=_opt_bool(el, "force_is_global", False),
        optimal_force=_opt_float(el, "optimal_force", 1.0),
        min_control=_opt_float(el, "min_control", -math.inf),
        max_control=_opt_float(el, "max_control", math.inf),
    )


def _torque_actuator(el) -> TorqueActuatorSpec:
    name = el.attrib.get("name", "")
    a = _name_of(el, "bodyA", "socket_bodyA")
    b = _name_of(el, "bodyB", "socket_bodyB")
    if not a or not b:
        raise FileFormatError(
            f"{el.where()}: TorqueActuator '{name}' needs <bodyA> and <bodyB> (a body name or "
            "ground)"
        )
    return TorqueActuatorSpec(
        name=name,
        body_a=a,
        body_b=b,
        axis=_unit(el, "axis", (0.0, 0.0, 1.0)),
        torque_is_global=_opt_bool(el, "torque_is_global", True),
        optimal_force=_opt_float(el, "optimal_force", 1.0),
        min_control=_opt_float(el, "min_control", -math.inf),
        max_control=_opt_float(el, "max_control", math.inf),
    )


_READERS = {
    "CoordinateActuator": _coordinate_actuator,
    "PointActuator": _point_actuator,
    "TorqueActuator": _torque_actuator,
}


def _disabled(el) -> bool:
    return _opt_bool(el, "isDisabled", False) or not _opt_bool(el, "appliesForce", True)


def read_actuators(path) -> tuple:
    """Read the actuators of an OpenSim actuator (ForceSet) file.

    Parameters
    ----------
    path : str or path-like
        An XML file with a ``<ForceSet>`` (e.g. a reserve-actuator file).

    Returns
    -------
    tuple of CoordinateActuatorSpec, PointActuatorSpec, TorqueActuatorSpec
        In file order; disabled ones (``isDisabled``, ``appliesForce=false``)
        are left out.

    Raises
    ------
    FileFormatError
        Not a ForceSet, or an actuator ahbm's static optimization does not
        model (BodyActuator, PointToPointActuator, muscles), named with its
        line.

    Examples
    --------
    >>> read_actuators("reserves.xml")[0].optimal_force  # doctest: +SKIP
    1.0
    """
    root = parse_xml_file(path, "actuator (ForceSet)")
    node = root if root.tag == "ForceSet" else root.find("ForceSet")
    if node is None:
        raise FileFormatError(f"'{path}' is not an OpenSim actuator file: no <ForceSet> element")
    out = []
    for el in _objects(node):
        if el.tag in _READERS:
            if not _disabled(el):
                out.append(_READERS[el.tag](el))
        elif el.tag in _ACTUATOR_TAGS or el.tag.endswith("Muscle"):
            raise FileFormatError(
                f"{el.where()}: {el.tag} '{el.attrib.get('name', '')}' is not modelled by ahbm's "
                "static optimization; use CoordinateActuators, PointActuators or TorqueActuators "
                "instead"
            )
        else:
            warnings.warn(
                f"{el.where()}: {el.tag} '{el.attrib.get('name', '')}' is not an actuator ahbm "
                "applies; ignored",
                AhbmWarning,
                stacklevel=2,
            )
    return tuple(out)
