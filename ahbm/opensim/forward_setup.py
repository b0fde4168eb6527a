"""OpenSim's ForwardTool setups and control sets, read into frozen objects (``ahbm forward``).

:func:`read_forward_setup` reads a ``<ForwardTool>`` setup unchanged as OpenSim
writes it: the model, the initial states file, the controls (a
``ControlSetController``'s ``controls_file``, or the ``<controls_file>`` of
older setups), the external loads, the time range and the integrator
tolerance. Every element that would change the result and that ahbm does not
implement is refused with its line (analyses during the run, other
controllers, step-function controls); elements that change nothing are named
in a warning.

:func:`read_controls` reads the controls: an OpenSim ControlSet (``.xml``) of
``ControlLinear`` controls, or a controls storage (``.sto``/``.mot``, one
column per actuator, linear between rows), as :class:`Controls`, which
evaluates every actuator's control at any times.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
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
    _split_words,
    _text,
    _tool_root,
    read_external_loads,
)

__all__ = ["Controls", "ForwardSetup", "read_controls", "read_forward_setup"]


@dataclass(frozen=True)
class Controls:
    """Piecewise-linear controls of named actuators (OpenSim's ``ControlLinear``).

    Attributes
    ----------
    names : tuple of str
        Actuator names (a control named ``<actuator>.excitation`` is the
        actuator's).
    nodes : tuple of (ndarray, ndarray)
        Each control's node times (increasing) and values.
    extrapolate : tuple of bool
        Linear extrapolation beyond the first and last nodes (else the end
        values hold).
    """

    names: tuple
    nodes: tuple
    extrapolate: tuple

    def __call__(self, t, names=None) -> np.ndarray:
        """Controls at times `t`, shape ``(len(t), len(names))`` (0 for a name without control).

        Parameters
        ----------
        t : array_like
            Times, s.
        names : sequence of str, optional
            Actuators, default :attr:`names`.
        """
        t = np.atleast_1d(np.asarray(t, dtype=float))
        names = self.names if names is None else tuple(names)
        index = {n: k for k, n in enumerate(self.names)}
        out = np.zeros((t.size, len(names)))
        for j, name in enumerate(names):
            k = index.get(name)
            if k is None:
                continue
            x, y = self.nodes[k]
            v = np.interp(t, x, y)
            if self.extrapolate[k] and x.size > 1:
                lo, hi = t < x[0], t > x[-1]
                v = np.where(lo, y[0] + (t - x[0]) * (y[1] - y[0]) / (x[1] - x[0]), v)
                v = np.where(hi, y[-1] + (t - x[-1]) * (y[-1] - y[-2]) / (x[-1] - x[-2]), v)
            out[:, j] = v
        return out


def _actuator_name(control: str) -> str:
    return control[: -len(".excitation")] if control.endswith(".excitation") else control


def _control_linear(el) -> tuple:
    name = el.attrib.get("name", "")
    if _opt_bool(el, "use_steps", False):
        raise FileFormatError(
            f"{el.where()}: ControlLinear '{name}' uses steps (<use_steps> true), which ahbm "
            "does not implement; give linear controls"
        )
    if _opt_bool(el, "filter_on", False):
        raise FileFormatError(
            f"{el.where()}: ControlLinear '{name}' has <filter_on> true, which ahbm does not "
            "implement"
        )
    xn = el.find("x_nodes")
    nodes = [] if xn is None else [c for c in xn.children if c.tag == "ControlLinearNode"]
    if not nodes:
        raise FileFormatError(f"{el.where()}: ControlLinear '{name}' has no <x_nodes>")
    times, values = [], []
    for node in nodes:
        for tag, out in (("t", times), ("value", values)):
            child = node.find(tag)
            if child is None:
                raise FileFormatError(f"{node.where()}: a ControlLinearNode without <{tag}>")
            v = _float(child)
            if not math.isfinite(v):
                raise FileFormatError(f"{child.where()}: <{tag}> must be finite, got {v}")
            out.append(v)
    t = np.asarray(times)
    if np.any(np.diff(t) <= 0):
        raise FileFormatError(
            f"{el.where()}: the node times of ControlLinear '{name}' must increase"
        )
    return _actuator_name(name), (t, np.asarray(values)), _opt_bool(el, "extrapolate", True)


def read_controls(path) -> Controls:
    """Read OpenSim controls: a ControlSet (.xml) or a controls storage (.sto/.mot).

    Parameters
    ----------
    path : str or path-like
        An XML ``<ControlSet>`` of ``ControlLinear`` controls (CMC's
        ``_controls.xml``), or a storage whose columns are actuator names
        (``_controls.sto``), linear between its rows.

    Returns
    -------
    Controls

    Raises
    ------
    FileFormatError
        Not a control set; step-function or filtered controls, other control
        types (named with their line); node times that do not increase; a
        repeated control.
    """
    path = Path(path)
    if path.suffix.lower() in (".sto", ".mot"):
        from ahbm.opensim.storage import read_mot

        table = read_mot(path, angle_columns=[])
        if np.any(np.diff(table.time) <= 0):
            raise FileFormatError(f"controls '{path}': the times must increase")
        names = tuple(_actuator_name(c) for c in table.columns)
        values = table.values
        nodes = tuple((table.time, values[:, j].copy()) for j in range(len(names)))
        out = Controls(names, nodes, (False,) * len(names))
    else:
        root = parse_xml_file(path, "control set")
        node = root if root.tag == "ControlSet" else root.find("ControlSet")
        if node is None:
            raise FileFormatError(f"'{path}' is not an OpenSim control set: no <ControlSet>")
        items = []
        for el in _objects(node):
            if el.tag != "ControlLinear":
                raise FileFormatError(
                    f"{el.where()}: {el.tag} '{el.attrib.get('name', '')}' is not implemented "
                    "by ahbm (ControlLinear controls only)"
                )
            items.append(_control_linear(el))
        names = tuple(i[0] for i in items)
        out = Controls(names, tuple(i[1] for i in items), tuple(i[2] for i in items))
    seen = set()
    for n in out.names:
        if n in seen:
            raise FileFormatError(f"controls '{path}': two controls of actuator '{n}'")
        seen.add(n)
    return out


@dataclass(frozen=True)
class ForwardSetup:
    """An OpenSim ForwardTool setup.

    Attributes
    ----------
    path : pathlib.Path
    name : str
        The tool's name (prefix of the output files).
    model_file, states_file, controls_file, external_loads_file : pathlib.Path or None
    external_loads : ExternalLoads or None
    results_directory : pathlib.Path
    initial_time, final_time : float
        s.
    solve_for_equilibrium : bool
        ``solve_for_equilibrium_for_auxiliary_states``: muscle fibers in
        equilibrium at the initial state.
    tolerance : float
        ``integrator_error_tolerance``.
    max_step, min_step : float
        ``maximum_integrator_step_size``, ``minimum_integrator_step_size`` (s).
    max_steps : int
        ``maximum_number_of_integrator_steps``.
    force_set_files : tuple of pathlib.Path
    replace_force_set : bool
    """

    path: Path
    name: str = ""
    model_file: Path | None = None
    states_file: Path | None = None
    controls_file: Path | None = None
    external_loads_file: Path | None = None
    external_loads: ExternalLoads | None = None
    results_directory: Path | None = None
    initial_time: float = 0.0
    final_time: float = 1.0
    solve_for_equilibrium: bool = False
    tolerance: float = 1e-5
    max_step: float = 1.0
    min_step: float = 1e-8
    max_steps: int = 20000
    force_set_files: tuple = ()
    replace_force_set: bool = False


_READ = (
    "model_file", "replace_force_set", "force_set_files", "results_directory", "initial_time",
    "final_time", "solve_for_equilibrium_for_auxiliary_states",
    "maximum_number_of_integrator_steps", "maximum_integrator_step_size",
    "minimum_integrator_step_size", "integrator_error_tolerance", "AnalysisSet",
    "ControllerSet", "external_loads_file", "states_file", "controls_file",
)  # fmt: skip
#: elements that change nothing in ahbm's run (the precision of OpenSim's text; a
#: states file's own times; OpenSim's printing switches)
_INERT = ("output_precision", "defaults", "use_specified_dt", "print_result_files")


def _controls_file(node, folder) -> Path | None:
    files = []
    own = _file(node, "controls_file", folder)
    if own is not None:
        files.append(own)
    ctrl = node.find("ControllerSet")
    for el in _objects(ctrl) if ctrl is not None else []:
        if el.tag != "ControlSetController":
            raise FileFormatError(
                f"{el.where()}: {el.tag} '{el.attrib.get('name', '')}' is not implemented by "
                "ahbm forward (ControlSetController with a <controls_file> only)"
            )
        f = _file(el, "controls_file", folder)
        if f is None:
            raise FileFormatError(f"{el.where()}: ControlSetController without <controls_file>")
        files.append(f)
    if len(files) > 1:
        raise FileFormatError(
            f"{node.where()}: the ForwardTool setup names {len(files)} controls files; ahbm "
            "forward reads one"
        )
    return files[0] if files else None


def read_forward_setup(path) -> ForwardSetup:
    """Read an OpenSim ForwardTool setup.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    ForwardSetup
        File names resolved against the setup's folder.

    Raises
    ------
    FileFormatError
        Not a ForwardTool setup; no model file; analyses during the run, other
        controllers or two controls files (named with their line); malformed
        values.

    Warns
    -----
    AhbmWarning
        Elements that are not read, named with their line.
    """
    node, folder = _tool_root(path, "ForwardTool", "ForwardTool setup")
    for child in node.children:
        if child.tag not in _READ and child.tag not in _INERT:
            warnings.warn(
                f"{child.where()}: <{child.tag}> is not a ForwardTool element ahbm reads; ignored",
                AhbmWarning,
                stacklevel=2,
            )
    analyses = node.find("AnalysisSet")
    for el in _objects(analyses) if analyses is not None else []:
        if _opt_bool(el, "on", True):
            raise FileFormatError(
                f"{el.where()}: analyses during a forward run ({el.tag} "
                f"'{el.attrib.get('name', '')}') are not implemented by ahbm forward; remove "
                "it, or set <on> false"
            )
    model = _file(node, "model_file", folder)
    if model is None:
        el = node.find("model_file")
        raise FileFormatError(
            f"{(node if el is None else el).where()}: the ForwardTool setup names no "
            "<model_file>; ahbm forward needs it"
        )
    loads_file = _file(node, "external_loads_file", folder)
    rd = _child_text(node, "results_directory")
    files = []
    for word in _split_words(node.find("force_set_files")):
        p = Path(word.replace("\\", "/"))
        files.append(p if p.is_absolute() else folder / p)
    t0 = _opt_float(node, "initial_time", 0.0)
    t1 = _opt_float(node, "final_time", 1.0)
    if not (math.isfinite(t0) and math.isfinite(t1) and t0 < t1):
        raise FileFormatError(
            f"{node.where()}: <final_time> {t1} must be after <initial_time> {t0}"
        )
    tol = _opt_float(node, "integrator_error_tolerance", 1e-5)
    max_step = _opt_float(node, "maximum_integrator_step_size", 1.0)
    min_step = _opt_float(node, "minimum_integrator_step_size", 1e-8)
    max_steps = _opt_float(node, "maximum_number_of_integrator_steps", 20000)
    for tag, v in (("integrator_error_tolerance", tol), ("maximum_integrator_step_size", max_step),
                   ("maximum_number_of_integrator_steps", max_steps)):  # fmt: skip
        if not (math.isfinite(v) and v > 0):
            raise FileFormatError(
                f"{node.find(tag).where()}: <{tag}> must be a positive number, got "
                f"{_text(node.find(tag))!r}"
            )
    return ForwardSetup(
        path=Path(path),
        name=node.attrib.get("name", ""),
        model_file=model,
        states_file=_file(node, "states_file", folder),
        controls_file=_controls_file(node, folder),
        external_loads_file=loads_file,
        external_loads=read_external_loads(loads_file) if loads_file is not None else None,
        results_directory=folder / rd if rd else folder,
        initial_time=t0,
        final_time=t1,
        solve_for_equilibrium=_opt_bool(node, "solve_for_equilibrium_for_auxiliary_states", False),
        tolerance=tol,
        max_step=max_step,
        min_step=max(min_step, 0.0) if math.isfinite(min_step) else 0.0,
        max_steps=int(max_steps),
        force_set_files=tuple(files),
        replace_force_set=_opt_bool(node, "replace_force_set", False),
    )
