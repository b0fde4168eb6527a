"""OpenSim's AnalyzeTool setups read into frozen setups (``ahbm analyze SETUP.xml``).

:func:`read_analyze_setup` reads an ``<AnalyzeTool>`` setup, unchanged as
OpenSim writes it, into a frozen :class:`AnalyzeSetup` holding the analyses
that :func:`ahbm.opensim.analyze_tool.run_analyze_setup` runs: Kinematics,
BodyKinematics, PointKinematics, MuscleAnalysis and Actuation. Every other element is
named with its line: an error for what would change the results
(``<states_file>``, ``<speeds_file>``, controllers), a warning for what is not
run (other analyses; StaticOptimization and JointReaction are ``ahbm so``'s).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from pathlib import Path

from ahbm.errors import AhbmWarning, FileFormatError
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
    "ActuationSpec",
    "AnalyzeSetup",
    "BodyKinematicsSpec",
    "KinematicsSpec",
    "MuscleAnalysisSpec",
    "PointKinematicsSpec",
    "read_analyze_setup",
]


@dataclass(frozen=True)
class KinematicsSpec:
    """A ``<Kinematics>`` analysis: coordinates, speeds and accelerations."""

    name: str = "Kinematics"
    step_interval: int = 1
    in_degrees: bool = True


@dataclass(frozen=True)
class BodyKinematicsSpec:
    """A ``<BodyKinematics>`` analysis.

    ``bodies`` as written (``("all",)`` for every body and the whole-body
    center of mass); ``local`` is ``express_results_in_body_local_frame``.
    """

    name: str = "BodyKinematics"
    step_interval: int = 1
    in_degrees: bool = True
    bodies: tuple = ("all",)
    local: bool = False


@dataclass(frozen=True)
class PointKinematicsSpec:
    """A ``<PointKinematics>`` analysis: a point (m, body frame) expressed in a frame."""

    name: str = "PointKinematics"
    step_interval: int = 1
    in_degrees: bool = True
    body: str = "ground"
    relative_to: str = "none"
    point_name: str = "NONAME"
    point: tuple = (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class MuscleAnalysisSpec:
    """A ``<MuscleAnalysis>``: muscles and the coordinates of the moment arms."""

    name: str = "MuscleAnalysis"
    step_interval: int = 1
    in_degrees: bool = True
    muscles: tuple = ("all",)
    coordinates: tuple = ("all",)
    compute_moments: bool = True


@dataclass(frozen=True)
class ActuationSpec:
    """An ``<Actuation>`` analysis: the force, speed and power of every actuator."""

    name: str = "Actuation"
    step_interval: int = 1
    in_degrees: bool = True


@dataclass(frozen=True)
class AnalyzeSetup:
    """An OpenSim AnalyzeTool setup (the analyses ahbm runs, in setup order).

    Attributes
    ----------
    path : pathlib.Path
    name : str
        The tool's name (prefix of the output files).
    model_file, coordinates_file, external_loads_file : pathlib.Path or None
    external_loads : ExternalLoads or None
    results_directory : pathlib.Path
    initial_time, final_time : float
        s (OpenSim's defaults 0 and 1).
    lowpass_cutoff_frequency : float
        Hz; negative: no filtering.
    solve_for_equilibrium : bool
        ``solve_for_equilibrium_for_auxiliary_states``.
    analyses : tuple
        :class:`KinematicsSpec`, :class:`BodyKinematicsSpec`,
        :class:`PointKinematicsSpec`, :class:`MuscleAnalysisSpec`,
        :class:`ActuationSpec` (the ones that are on).
    not_run : tuple of str
        Analyses of the setup that ahbm does not run, ``"Actuation (name), line 12"``.
    force_set_files : tuple of pathlib.Path
    """

    path: Path
    name: str = ""
    model_file: Path | None = None
    coordinates_file: Path | None = None
    external_loads_file: Path | None = None
    external_loads: ExternalLoads | None = None
    results_directory: Path | None = None
    initial_time: float = 0.0
    final_time: float = 1.0
    lowpass_cutoff_frequency: float = -1.0
    solve_for_equilibrium: bool = False
    analyses: tuple = ()
    not_run: tuple = ()
    force_set_files: tuple = ()
    replace_force_set: bool = False


def _opt_int(node, tag, default) -> int:
    el = node.find(tag)
    if el is None or _text(el) == "":
        return default
    v = _float(el)
    if not math.isfinite(v) or v != int(v) or v < 1:
        raise FileFormatError(f"{el.where()}: expected a positive integer, got {_shown(_text(el))}")
    return int(v)


def _common(el) -> dict:
    """name, step_interval, in_degrees; start/end times named when finite (ignored by OpenSim)."""
    for tag in ("start_time", "end_time"):
        v = _opt_float(el, tag, math.nan)
        if math.isfinite(v):
            warnings.warn(
                f"{el.find(tag).where()}: <{tag}> of {el.tag} '{el.attrib.get('name', '')}' is "
                "not used: OpenSim 4.6's AnalyzeTool records every analysis over the tool's "
                "[initial_time, final_time], and so does ahbm",
                AhbmWarning,
                stacklevel=4,
            )
    return {
        "name": el.attrib.get("name", el.tag),
        "step_interval": _opt_int(el, "step_interval", 1),
        "in_degrees": _opt_bool(el, "in_degrees", True),
    }


def _point(el) -> tuple:
    node = el.find("point")
    if node is None or _text(node) == "":
        return (0.0, 0.0, 0.0)
    parts = _split_words(node)
    if len(parts) != 3:
        raise FileFormatError(f"{node.where()}: expected 3 numbers, got {_shown(_text(node))}")
    return tuple(_float(node, p) for p in parts)


def _spec(el):
    common = _common(el)
    if el.tag == "Kinematics":
        return KinematicsSpec(**common)
    if el.tag == "BodyKinematics":
        return BodyKinematicsSpec(
            **common,
            bodies=_split_words(el.find("bodies")) or ("all",),
            local=_opt_bool(el, "express_results_in_body_local_frame", False),
        )
    if el.tag == "PointKinematics":
        return PointKinematicsSpec(
            **common,
            body=(_child_text(el, "body_name") or "ground").split("/")[-1],
            relative_to=(_child_text(el, "relative_to_body_name") or "none").split("/")[-1],
            point_name=_child_text(el, "point_name") or "NONAME",
            point=_point(el),
        )
    if el.tag == "Actuation":
        return ActuationSpec(**common)
    return MuscleAnalysisSpec(
        **common,
        muscles=_split_words(el.find("muscle_list")) or ("all",),
        coordinates=_split_words(el.find("moment_arm_coordinate_list")) or ("all",),
        compute_moments=_opt_bool(el, "compute_moments", True),
    )


_RUN = ("Kinematics", "BodyKinematics", "PointKinematics", "MuscleAnalysis", "Actuation")
_SO = ("StaticOptimization", "JointReaction")
#: elements of the tool that change nothing in an AnalyzeTool run (integrator settings
#: are for forward simulations; the precision is of OpenSim's text)
_INERT = (
    "maximum_number_of_integrator_steps", "maximum_integrator_step_size",
    "minimum_integrator_step_size", "integrator_error_tolerance", "output_precision",
    "defaults",
)  # fmt: skip
_READ = (
    "model_file", "replace_force_set", "force_set_files", "results_directory",
    "initial_time", "final_time", "solve_for_equilibrium_for_auxiliary_states",
    "AnalysisSet", "ControllerSet", "external_loads_file", "states_file",
    "coordinates_file", "speeds_file", "lowpass_cutoff_frequency_for_coordinates",
)  # fmt: skip


def _refuse_files(node, folder) -> None:
    for tag in ("states_file", "speeds_file"):
        if _file(node, tag, folder) is not None:
            raise FileFormatError(
                f"{node.find(tag).where()}: ahbm analyze reads the coordinates file only "
                f"(<{tag}> is not implemented); remove it and name the coordinates in "
                "<coordinates_file>"
            )
    ctrl = node.find("ControllerSet")
    if ctrl is not None and _objects(ctrl):
        el = _objects(ctrl)[0]
        raise FileFormatError(
            f"{el.where()}: controllers are not implemented by ahbm analyze (the analyses "
            "would see the actuators' controls); remove the <ControllerSet> objects"
        )


def read_analyze_setup(path) -> AnalyzeSetup:
    """Read an OpenSim AnalyzeTool setup with kinematic and muscle analyses.

    Parameters
    ----------
    path : str or path-like
        An XML file with an ``<AnalyzeTool>`` whose ``<AnalysisSet>`` holds
        Kinematics, BodyKinematics, PointKinematics, MuscleAnalysis or Actuation analyses.

    Returns
    -------
    AnalyzeSetup
        File names resolved against the setup's folder.

    Raises
    ------
    FileFormatError
        Not an AnalyzeTool setup; no analysis that ahbm analyze runs (a setup of
        StaticOptimization or JointReaction only points to ``ahbm so``); a
        states or speeds file, controllers; no model or coordinates file;
        malformed values (the message names element and line).

    Warns
    -----
    AhbmWarning
        Analyses that are not run, elements that are not read, an analysis's
        finite ``start_time``/``end_time`` (OpenSim does not use them either),
        each named with its line.

    Examples
    --------
    >>> setup = read_analyze_setup("subject01_Setup_Analyze.xml")  # doctest: +SKIP
    >>> [a.name for a in setup.analyses]  # doctest: +SKIP
    ['Kinematics', 'BodyKinematics']
    """
    node, folder = _tool_root(path, "AnalyzeTool", "AnalyzeTool setup")
    for child in node.children:
        if child.tag not in _READ and child.tag not in _INERT:
            warnings.warn(
                f"{child.where()}: <{child.tag}> is not an AnalyzeTool element ahbm reads; ignored",
                AhbmWarning,
                stacklevel=2,
            )
    _refuse_files(node, folder)
    analyses_el = node.find("AnalysisSet")
    specs, not_run, so = [], [], []
    for el in _objects(analyses_el) if analyses_el is not None else []:
        if not _opt_bool(el, "on", True):
            continue
        label = f"{el.tag} '{el.attrib.get('name', '')}', line {el.line}"
        if el.tag in _RUN:
            specs.append(_spec(el))
        elif el.tag in _SO:
            so.append(label)
        else:
            not_run.append(label)
    where = (analyses_el if analyses_el is not None else node).where()
    if not specs:
        if so:
            raise FileFormatError(
                f"{where}: the setup's analyses ({', '.join(so)}) are run by `ahbm so "
                f"{path}`; ahbm analyze runs Kinematics, BodyKinematics, PointKinematics, "
                "MuscleAnalysis and Actuation"
            )
        found = f" (it has {', '.join(not_run)})" if not_run else ""
        raise FileFormatError(
            f"{where}: the AnalyzeTool setup has no Kinematics, BodyKinematics, "
            f"PointKinematics, MuscleAnalysis or Actuation that is on{found}; add one to its "
            "<AnalysisSet>"
        )
    if so:
        warnings.warn(
            f"{where}: not run by ahbm analyze: {', '.join(so)}; run `ahbm so {path}` for them",
            AhbmWarning,
            stacklevel=2,
        )
    if not_run:
        warnings.warn(
            f"{where}: analyses not implemented by ahbm analyze, not run: {', '.join(not_run)}",
            AhbmWarning,
            stacklevel=2,
        )
    for tag in ("model_file", "coordinates_file"):
        if _file(node, tag, folder) is None:
            el = node.find(tag)
            raise FileFormatError(
                f"{(node if el is None else el).where()}: the AnalyzeTool setup names no "
                f"<{tag}>; ahbm analyze needs it"
            )
    loads_file = _file(node, "external_loads_file", folder)
    rd = _child_text(node, "results_directory")
    files = []
    for word in _split_words(node.find("force_set_files")):
        p = Path(word.replace("\\", "/"))
        files.append(p if p.is_absolute() else folder / p)
    t0 = _opt_float(node, "initial_time", 0.0)
    t1 = _opt_float(node, "final_time", 1.0)
    if not t0 <= t1:
        raise FileFormatError(
            f"{node.where()}: <final_time> {t1} is before <initial_time> {t0}; give a time range"
        )
    return AnalyzeSetup(
        path=Path(path),
        name=node.attrib.get("name", ""),
        model_file=_file(node, "model_file", folder),
        coordinates_file=_file(node, "coordinates_file", folder),
        external_loads_file=loads_file,
        external_loads=read_external_loads(loads_file) if loads_file is not None else None,
        results_directory=folder / rd if rd else folder,
        initial_time=t0,
        final_time=t1,
        lowpass_cutoff_frequency=_opt_float(node, "lowpass_cutoff_frequency_for_coordinates", -1.0),
        solve_for_equilibrium=_opt_bool(node, "solve_for_equilibrium_for_auxiliary_states", False),
        analyses=tuple(specs),
        not_run=tuple(not_run + so),
        force_set_files=tuple(files),
        replace_force_set=_opt_bool(node, "replace_force_set", False),
    )
